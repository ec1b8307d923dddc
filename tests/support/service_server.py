"""A real in-process gRPC server for the project's own service tests.

In-process (not a subprocess like :mod:`covr_client.testing`) because the service tests need what
only the same process can give: serving an already open store (the session's Neo4j, or a store
wrapped to record or slow down queries), and the :class:`covr.service.server.Service` handle
(graceful stop, metrics port, TLS flag). It listens on ``127.0.0.1:0`` over an embedded FalkorDB
in a temporary data directory, loaded with the bundled samples unless a store is given.
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

from covr.graph import GraphStore, open_store
from covr.service.server import Service, build_server
from covr.settings import Settings
from covr_client.client import Client
from covr_client.config import TlsConfig
from covr_loaders.samples import load_bundled_samples


@dataclass
class TestServer:
    """A running server: ``target``, the ``service`` handle, its store, the settings it was
    built from (``settings.server`` are its sections) and a client factory."""

    __test__ = False  # not a pytest test class

    target: str
    token: str | None
    tls: TlsConfig | None
    service: Service
    store: GraphStore
    settings: Settings

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
    """Start a server in this process for the duration of the ``with`` block.

    Args:
        data_dir: embedded store directory; ``None`` = a new temporary directory.
        samples: load the bundled sample scene graphs into an empty store.
        store: an already open store (or a wrapper of one) to serve; not closed afterwards.
        **settings: any :class:`covr.settings.Settings` field (``service_token="s3cret"``...).
    """
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
        graph = open_store(config.graph) if own else store
        try:
            if own:
                graph.apply_schema()
                if samples:
                    load_bundled_samples(graph, config.load)
            service = build_server(config.server, graph).start()
            # The server warms its models and WordNet on a thread after it listens (a minute at
            # load average 12); the tests' deadlines are for the calls, not for that warm-up.
            service.rooms.models.warm()
            token = config.service_token.get_secret_value() if config.service_token else None
            tls = None
            if config.service_tls_cert is not None:
                tls = TlsConfig(
                    root_certificates=config.service_tls_cert.read_bytes(),
                    server_name="localhost",
                )
            try:
                yield TestServer(service.target, token or None, tls, service, graph, config)
            finally:
                service.stop(grace=0)
        finally:
            if own:
                graph.close()
