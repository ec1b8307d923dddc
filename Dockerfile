# Container image of the COVR graph service (docs/service.md).
# Stage 1 builds wheels of the service and of the SDK (the service imports the generated stubs from
# the SDK distribution); stage 2 installs them into a slim image and runs as a non-root user.
# The gRPC server binds 0.0.0.0 inside the container, so it needs COVR_SERVICE_TOKEN at run time
# (docs/security.md); the store is COVR_GRAPH_URI (Neo4j in docker-compose.yml) or, without it,
# the embedded FalkorDB in COVR_DATA_DIR.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY server ./server
COPY cypher ./cypher
COPY loaders ./loaders
COPY clients/python ./clients/python
RUN pip wheel --no-cache-dir --wheel-dir /wheels . ./clients/python

FROM python:3.11-slim
# WordNet 3.0 (Debian) is what the exclusivity model's features read at serving time (docs/models.md).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends wordnet-base wordnet-sense-index \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 --user-group covr
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER 10001:10001
WORKDIR /home/covr
ENV COVR_DATA_DIR=/home/covr/data \
    COVR_SERVICE_HOST=0.0.0.0 \
    COVR_SERVICE_PORT=50051 \
    PYTHONUNBUFFERED=1
EXPOSE 50051
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-m", "covr.service.healthcheck"]
ENTRYPOINT ["covr"]
CMD ["serve"]
