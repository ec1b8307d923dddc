"""Opt-in Prometheus metrics: request count by method and code, latency histogram by method.

One registry per process (not the library's global one, so several in-process servers in a test
run do not collide), created on first use rather than at import time.
"""

from __future__ import annotations

import hmac
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)

_LOCK = threading.Lock()
_METRICS: Metrics | None = None


@dataclass
class Metrics:
    registry: CollectorRegistry
    requests: Counter
    latency: Histogram

    def observe(self, method: str, code: str, seconds: float) -> None:
        self.requests.labels(method=method, code=code).inc()
        self.latency.labels(method=method).observe(seconds)


def metrics() -> Metrics:
    """The process-wide metrics (created once)."""
    global _METRICS
    with _LOCK:
        if _METRICS is None:
            registry = CollectorRegistry()
            _METRICS = Metrics(
                registry=registry,
                requests=Counter(
                    "covr_grpc_requests",
                    "RPCs handled, by method and status code.",
                    ["method", "code"],
                    registry=registry,
                ),
                latency=Histogram(
                    "covr_grpc_request_seconds",
                    "RPC latency (to the last response message), by method.",
                    ["method"],
                    registry=registry,
                    buckets=(
                        0.0005,
                        0.001,
                        0.002,
                        0.005,
                        0.01,
                        0.025,
                        0.05,
                        0.1,
                        0.25,
                        0.5,
                        1,
                        2.5,
                        5,
                        10,
                        30,
                    ),
                ),
            )
        return _METRICS


def start_metrics_http(host: str, port: int, *, token: str = "") -> tuple[Any, int]:
    """Serve ``/metrics`` on ``host:port``; returns the HTTP server and its bound port.

    With ``token``, a scrape must send ``Authorization: Bearer <token>`` (else 401): the
    metrics name every method and its error rates, which is not for everyone who can connect.
    """
    registry = metrics().registry

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if token and not hmac.compare_digest(
                self.headers.get("Authorization", ""), f"Bearer {token}"
            ):
                self._reply(401, b"missing or wrong bearer token\n", "text/plain")
            elif self.path.split("?")[0] not in ("/", "/metrics"):
                self._reply(404, b"not found\n", "text/plain")
            else:
                self._reply(200, generate_latest(registry), CONTENT_TYPE_LATEST)

        def _reply(self, status: int, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            del format, args  # scrapes every few seconds would flood the service log

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="covr-metrics", daemon=True).start()
    return server, int(server.server_address[1])
