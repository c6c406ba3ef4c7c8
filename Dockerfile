# One image for every part; compose picks the part with the command.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY proto ./proto
COPY outrider ./outrider
COPY services ./services
COPY gateway ./gateway
COPY launcher ./launcher
RUN pip install ".[server]" && useradd --system --uid 10001 outrider
USER outrider
ENTRYPOINT ["outrider"]
CMD ["--help"]
