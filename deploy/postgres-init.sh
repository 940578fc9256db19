#!/bin/sh
# Run once by the postgres image on a new volume (docker-entrypoint-initdb.d): the role the
# service's workers log in as, with a password, since the image asks for one over TCP. Migration
# 0006 finds it and grants it SELECT and INSERT only (least privilege; see the README). The
# password comes from a file (a Docker secret), never from an inline environment value.
set -eu
password=$(cat "$CARDROOM_APP_PASSWORD_FILE")
psql -v ON_ERROR_STOP=1 -v password="$password" \
  --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<'SQL'
CREATE ROLE cardroom_app LOGIN PASSWORD :'password';
SQL
