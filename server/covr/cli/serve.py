"""``covr serve``: the gRPC service on the configured store (docs/service.md)."""

from __future__ import annotations

import logging
import sys

import typer

from covr.cli.common import EXIT_BAD_INPUT, fail, load_settings, stop_signals


def serve(
    host: str | None = typer.Option(
        None, "--host", help="Bind address (default COVR_SERVICE_HOST, 127.0.0.1)."
    ),
    port: int | None = typer.Option(
        None, "--port", help="Port (default COVR_SERVICE_PORT, 50051; 0 picks a free one)."
    ),
    samples: bool = typer.Option(
        True,
        "--samples/--no-samples",
        help="Load the bundled sample scene graphs when the store holds no image yet.",
    ),
    insecure: bool = typer.Option(
        False,
        "--insecure",
        help="Serve on an address other machines can reach without COVR_SERVICE_TOKEN, and "
        "/metrics without COVR_SERVICE_METRICS_AUTH (refused otherwise; warned at start). Same "
        "as COVR_SERVICE_INSECURE=true.",
    ),
) -> None:
    """Serve the gRPC API (covr.v1.CovrService, health, reflection) until SIGTERM or Ctrl-C.

    Opens the store COVR_GRAPH_URI selects (the embedded FalkorDB by default), applies the
    schema, optionally loads the samples, and prints one line `listening on HOST:PORT` (the
    address as bound) when ready. An address other than loopback needs COVR_SERVICE_TOKEN, or
    --insecure. SIGTERM stops gracefully: health turns NOT_SERVING, running calls get
    COVR_SERVICE_GRACE_S seconds, then the store is snapshotted and closed.
    """
    from covr.cli.data import load_samples_if_empty
    from covr.graph import GraphError, open_store
    from covr.service.exposure import ServiceConfigError, check_exposure, tls_files
    from covr.service.server import build_server

    settings = load_settings()
    update: dict[str, object] = {}
    if host is not None:
        update["service_host"] = host
    if port is not None:
        if not 0 <= port <= 65535:
            fail(f"--port {port} is not a port number", EXIT_BAD_INPUT)
        update["service_port"] = port
    sections = settings.model_copy(update=update).server  # each room's, --host/--port applied
    try:  # before the store starts: a refused configuration costs nothing
        check_exposure(sections.service, insecure=insecure)
        tls_files(sections.service)
    except ServiceConfigError as exc:
        fail(str(exc), EXIT_BAD_INPUT)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        store = open_store(sections.graph)
    except GraphError as exc:
        fail(str(exc))
    try:
        store.apply_schema()
        if samples:
            load_samples_if_empty(store)
        service = build_server(sections, store, owns_store=True, insecure=insecure)
    except ServiceConfigError as exc:
        store.close()
        fail(str(exc), EXIT_BAD_INPUT)
    except (GraphError, OSError, ValueError) as exc:
        store.close()
        fail(str(exc))
    with stop_signals() as wait_for_stop:
        service.start()
        typer.echo(f"listening on {service.bind_address}")
        sys.stdout.flush()
        signum = wait_for_stop()
    logging.getLogger("covr.service").info("signal %d: stopping", signum)
    service.stop()
