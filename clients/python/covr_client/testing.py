"""A real in-process server for tests of code that uses the SDK.

Needs the server distribution (``covr-graph-service``) installed beside the SDK; the SDK itself
never imports it. The server listens on ``127.0.0.1:0`` (a free port), uses an embedded FalkorDB
in a temporary data directory, and is loaded with the bundled sample scene graphs::

    from covr_client.testing import running_server

    with running_server() as server, server.client() as client:
        assert client.statistics().totals.images > 0
"""

from __future__ import annotations

import atexit
import shutil
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


_SCRATCH: list[Path] = []


@contextmanager
def _data_dir() -> Iterator[Path]:
    """A fresh data directory, emptied afterwards except for its prepared WordNet folder.

    Why not a plain temporary directory: the server loads the ONNX models once per process
    (``covr.models`` caches them by file), and the exclusivity model keeps reading WordNet from
    the nltk folder prepared in the data directory of the *first* server of the process. Removing
    that folder when the first server stops made every later server of the process fail its
    lookups (``INTERNAL``). The leftovers share one folder per process, removed at exit.
    """
    if not _SCRATCH:
        _SCRATCH.append(Path(tempfile.mkdtemp(prefix="covr-ts-")))
        atexit.register(shutil.rmtree, _SCRATCH[0], True)
    path = Path(tempfile.mkdtemp(prefix="t-", dir=_SCRATCH[0]))
    try:
        yield path
    finally:
        for child in path.iterdir():
            if child.name == "nltk_data":
                continue
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)


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

    with _data_dir() as tmp:
        values: dict[str, Any] = {
            "data_dir": data_dir or tmp,
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
