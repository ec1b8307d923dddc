"""A real in-process gRPC server on 127.0.0.1:0 over each real graph store, with the samples.

``server`` is shared by the module's tests (read-mostly tests; tests that import use their own
source names so they do not disturb each other) and runs once per backend: over an embedded
FalkorDB of its own, and over the session's managed Neo4j (emptied and loaded with the samples).
Tests that need special settings (auth, TLS, tiny capacity) start their own with
:func:`tests.support.service_server.running_server` on the embedded store: they test the service's own
mechanics, which do not depend on the store.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from covr.graph import GraphStore
from covr.settings import Settings
from covr_client import Client
from covr_client._proto import service_pb2_grpc
from covr_loaders.samples import load_bundled_samples
from tests.support.service_server import TestServer, running_server


@pytest.fixture(scope="module")
def server(backend: str, request: pytest.FixtureRequest) -> Iterator[TestServer]:
    if backend == "falkordb":
        with running_server() as running:
            yield running
        return
    store: GraphStore = request.getfixturevalue("session_store")
    settings: Settings = request.getfixturevalue("settings")
    store.clear()
    store.apply_schema()
    load_bundled_samples(store, settings.load)
    with running_server(store=store) as running:
        yield running


@pytest.fixture
def client(server: TestServer) -> Iterator[Client]:
    with server.client() as c:
        yield c


@pytest.fixture
def stub(server: TestServer) -> Iterator[service_pb2_grpc.CovrServiceStub]:
    with grpc.insecure_channel(server.target) as channel:
        yield service_pb2_grpc.CovrServiceStub(channel)


def rpc_code(fn: Any, request: Any, **kwargs: Any) -> grpc.StatusCode:
    """The status code of one raw call (streams are drained)."""
    try:
        result = fn(request, timeout=10, **kwargs)
        if hasattr(result, "__iter__") and not hasattr(result, "ListFields"):
            for _ in result:
                pass
    except grpc.RpcError as exc:
        code: grpc.StatusCode = exc.code()
        return code
    return grpc.StatusCode.OK
