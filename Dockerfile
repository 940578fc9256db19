# The cardroom service. With DATABASE_URL set (see docker-compose.yml) it uses that PostgreSQL;
# without it, the embedded one keeps its files in /app/data/postgres (mount a volume there).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
# Editable install: `cardroom migrate` finds migrations/ next to the service package.
COPY pyproject.toml alembic.ini openapi.yaml* ./
COPY domain ./domain
COPY service ./service
COPY docs/rules ./docs/rules
COPY migrations ./migrations
RUN pip install --no-cache-dir -e . \
    && useradd --create-home cardroom && mkdir -p data && chown cardroom data
USER cardroom

EXPOSE 8000
CMD ["cardroom", "serve", "--host", "0.0.0.0", "--port", "8000"]
