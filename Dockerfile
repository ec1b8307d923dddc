# Container image of the COVR graph service.
# Stage 1 builds wheels; stage 2 runs as a non-root user. The gRPC server, its HEALTHCHECK and the
# compose file with Neo4j arrive with the service issue; until then the image runs `covr doctor`.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY server ./server
COPY cypher ./cypher
COPY loaders ./loaders
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
RUN useradd --create-home --uid 10001 covr
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER covr
ENV COVR_DATA_DIR=/home/covr/data
ENTRYPOINT ["covr"]
CMD ["doctor"]
