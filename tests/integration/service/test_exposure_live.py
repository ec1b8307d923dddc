"""The service's doors on a real server: an open bind is refused without a token before anything
starts; /metrics binds loopback whatever the service binds, and can require the token."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request
from typing import Any

import pytest

from covr.service.exposure import ServiceConfigError
from tests.support.service_server import TestServer, running_server

pytestmark = pytest.mark.integration


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_open_bind_without_token_is_refused(server: TestServer) -> None:
    with (
        pytest.raises(ServiceConfigError, match="COVR_SERVICE_TOKEN is not set"),
        running_server(store=server.store, service_host="0.0.0.0"),
    ):
        pass


def test_metrics_bind_loopback_and_can_require_the_token(server: TestServer) -> None:
    with running_server(
        store=server.store,
        service_host="0.0.0.0",
        service_token="scrape-secret",
        service_metrics_port=_free_port(),
        service_metrics_auth=True,
    ) as own:
        http = own.service._metrics_http
        assert http.server_address[0] == "127.0.0.1"
        assert own.service.bind_address.startswith("0.0.0.0:")
        url = f"http://127.0.0.1:{own.service.metrics_port}/metrics"
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(url, timeout=5)
        assert refused.value.code == 401
        wrong = urllib.request.Request(url, headers={"Authorization": "Bearer nope"})
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(wrong, timeout=5)
        right = urllib.request.Request(url, headers={"Authorization": "Bearer scrape-secret"})
        body = urllib.request.urlopen(right, timeout=5).read().decode()
        assert "covr_grpc_requests" in body


def test_open_metrics_without_auth_are_refused(server: TestServer) -> None:
    """Issue 40 row 5: metrics on 0.0.0.0 were served to anyone, with or without
    COVR_SERVICE_METRICS_AUTH; now the server does not start, naming the setting."""
    cases: list[tuple[dict[str, Any], str]] = [
        ({}, "COVR_SERVICE_METRICS_HOST: 0.0.0.0 is reachable"),
        ({"service_metrics_auth": True}, "COVR_SERVICE_METRICS_AUTH: is true but"),
    ]
    for values, words in cases:
        with (
            pytest.raises(ServiceConfigError, match=words),
            running_server(
                store=server.store,
                service_metrics_port=_free_port(),
                service_metrics_host="0.0.0.0",
                **values,
            ),
        ):
            pass
