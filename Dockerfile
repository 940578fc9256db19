# The cardroom service, for a PostgreSQL of its own (DATABASE_URL; see docker-compose.yml): the
# embedded PostgreSQL (the `embedded` extra) is not installed. Installed as a wheel would be, from
# the locked versions (requirements/service.txt); migrations/ and openapi.yaml come with it.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY requirements/service.txt requirements/service.txt
RUN pip install --no-cache-dir -r requirements/service.txt
COPY pyproject.toml setup.py MANIFEST.in README.md openapi.yaml ./
# The rules are their own distribution (domain/pyproject.toml, cardroom-rules), which the
# service's wheel depends on; their dependencies are in service.txt.
COPY domain ./domain
COPY service ./service
COPY docs/rules ./docs/rules
COPY migrations ./migrations
RUN pip install --no-cache-dir --no-deps ./domain . && rm -rf /src \
    && useradd --create-home cardroom \
    && install -d -m 0700 -o cardroom -g cardroom /var/lib/cardroom/keys
# The keys' named volume (docker-compose.yml) is mounted here: a new volume takes this folder's
# owner and mode, so only the service's user reads the keys.
WORKDIR /home/cardroom
USER cardroom

EXPOSE 8000
CMD ["cardroom", "serve", "--host", "0.0.0.0", "--port", "8000"]
