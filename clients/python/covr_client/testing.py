"""A real in-process server for tests of code that uses the SDK.

Needs the server distribution (``covr-graph-service``) installed beside the SDK; the SDK itself
never imports it. The server listens on ``127.0.0.1:0`` (a free port), uses an embedded FalkorDB
in a temporary data directory, and is loaded with the bundled sample scene graphs::

    from covr_client.testing import running_server

    with running_server() as server, server.client() as client:
        assert client.statistics().totals.images > 0
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from covr_client.client import Client
from covr_client.config import TlsConfig


@dataclass
class TestServer:
    """A running server: ``target``, the ``service`` handle and a :meth:`client` factory."""

    __test__ = False  # not a pytest test class

    target: str
    token: str | None
    tls: TlsConfig | None
    service: Any
    store: Any

    def client(self, **kwargs: Any) -> Client:
        """A :class:`Client` for this server (token and TLS filled in unless given)."""
        kwargs.setdefault("token", self.token)
        kwargs.setdefault("tls", self.tls)
        return Client(self.target, **kwargs)


@contextmanager
def running_server(
    *,
    data_dir: Path | None = None,
    samples: bool = True,
    store: Any = None,
    **settings: Any,
) -> Iterator[TestServer]:
    """Start a server for the duration of the ``with`` block.

    Args:
        data_dir: embedded store directory; ``None`` = a new temporary directory.
        samples: load the bundled sample scene graphs into an empty store.
        store: an already open ``covr.graph.GraphStore`` to serve (not closed afterwards).
        **settings: any ``covr.settings.Settings`` field (``service_token="s3cret"``,
            ``service_tls_cert=Path(...)``, ``service_max_concurrent_rpcs=4``...).
    """
    from covr.graph import open_store
    from covr.service.server import build_server
    from covr.settings import Settings
    from covr_loaders.samples import load_bundled_samples

    with tempfile.TemporaryDirectory(prefix="covr-t-") as tmp:
        values: dict[str, Any] = {
            "data_dir": data_dir or Path(tmp),
            "graph_uri": "",
            "service_host": "127.0.0.1",
            "service_port": 0,
            **settings,
        }
        config = Settings(_env_file=None, **values)  # type: ignore[call-arg]
        own = store is None
        graph = open_store(config) if own else store
        try:
            if own:
                graph.apply_schema()
                if samples:
                    load_bundled_samples(graph, config)
            service = build_server(config, graph).start()
            token = config.service_token.get_secret_value() if config.service_token else None
            tls = None
            if config.service_tls_cert is not None:
                tls = TlsConfig(
                    root_certificates=config.service_tls_cert.read_bytes(),
                    server_name="localhost",
                )
            try:
                yield TestServer(service.target, token or None, tls, service, graph)
            finally:
                service.stop(grace=0)
        finally:
            if own:
                graph.close()
