"""Opt-in Prometheus metrics: request count by method and code, latency histogram by method.

One registry per process (not the library's global one, so several in-process servers in a test
run do not collide), created on first use rather than at import time.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server

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


def start_metrics_http(host: str, port: int) -> tuple[Any, int]:
    """Serve ``/metrics`` on ``host:port``; returns the HTTP server and its bound port."""
    server, _thread = start_http_server(port, addr=host, registry=metrics().registry)
    return server, int(server.server_address[1])
