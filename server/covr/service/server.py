"""Build, start and stop the gRPC server (DESIGN.md §9; CONVENTIONS "Service").

:func:`build_server` is the one place a server is put together: thread pool and
``maximum_concurrent_rpcs`` from settings (excess load gets ``RESOURCE_EXHAUSTED`` at once
instead of queueing), interceptors (observe → auth → errors), keepalive options that match the
SDK's, health checking and reflection, an insecure port on ``127.0.0.1`` by default or a TLS port
when a certificate is configured, and opt-in Prometheus metrics. :meth:`Service.stop` is the
graceful stop SIGTERM triggers in ``covr serve``: health turns NOT_SERVING first, running RPCs get
``COVR_SERVICE_GRACE_S`` to finish, then the store is closed if the service opened it.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from covr.graph.store import GraphStore
from covr.service.admission import Admission, for_settings
from covr.service.config import ServerSettings, ServiceSettings
from covr.service.deadline import DeadlineStore, RequestDeadlines
from covr.service.exposure import ServiceConfigError, check_exposure, tls_files
from covr.service.interceptors import (
    AuthInterceptor,
    ErrorInterceptor,
    Interceptor,
    ObserveInterceptor,
)
from covr.service.metrics import metrics, start_metrics_http
from covr.service.related_batch import BatchStats
from covr.service.rooms import Rooms, open_rooms
from covr.service.servicer import CovrServicer
from covr.v1 import service_pb2, service_pb2_grpc

log = logging.getLogger("covr.service")

SERVICE_NAME = service_pb2.DESCRIPTOR.services_by_name["CovrService"].full_name
"""``covr.v1.CovrService``: the name health checks and reflection report."""

HEALTH_INTERVAL_S = 5.0
"""How often the health watcher pings the store (NOT_SERVING while it does not answer)."""


def server_options(settings: ServiceSettings) -> list[tuple[str, Any]]:
    """Channel arguments of the server; the SDK's keepalive stays within what they allow."""
    max_bytes = settings.service_max_message_mb * 1024 * 1024
    return [
        ("grpc.max_receive_message_length", max_bytes),
        ("grpc.max_send_message_length", max_bytes),
        ("grpc.keepalive_time_ms", int(settings.service_keepalive_time_s * 1000)),
        ("grpc.keepalive_timeout_ms", int(settings.service_keepalive_timeout_s * 1000)),
        ("grpc.keepalive_permit_without_calls", 1),
        (
            "grpc.http2.min_ping_interval_without_data_ms",
            int(settings.service_min_ping_interval_s * 1000),
        ),
        ("grpc.http2.max_ping_strikes", 2),
        ("grpc.so_reuseport", 0),
    ]


def _credentials(settings: ServiceSettings) -> grpc.ServerCredentials | None:
    pems = tls_files(settings)
    if pems is None:
        return None
    try:
        return grpc.ssl_server_credentials([pems])
    except (RuntimeError, ValueError) as exc:  # grpc checks the pair when the port is added
        raise ServiceConfigError(
            "COVR_SERVICE_TLS_CERT", f"unusable key or certificate: {exc}"
        ) from exc


@dataclass
class Service:
    """A built server: start it, read its port, stop it gracefully."""

    server: grpc.Server
    port: int
    host: str
    tls: bool
    settings: ServerSettings
    store: GraphStore
    health: health.HealthServicer
    rooms: Rooms
    admission: Admission
    batch_stats: BatchStats
    """Counters of the FindRelatedImagesBatch streams (messages read, answered, in flight)."""
    owns_store: bool = False
    metrics_port: int | None = None
    _metrics_http: Any = None
    _stopped: threading.Event = field(default_factory=threading.Event)
    _watcher: threading.Thread | None = None

    @property
    def bind_address(self) -> str:
        """``host:port`` as bound (``0.0.0.0:50051`` listens on every interface)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def target(self) -> str:
        """``host:port`` for a client on the same machine."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host  # noqa: S104
        return f"{host}:{self.port}"

    def start(self) -> Service:
        self.server.start()
        self._set_serving(True)
        threading.Thread(target=self.rooms.models.warm, name="covr-models", daemon=True).start()
        self._watcher = threading.Thread(target=self._watch, name="covr-health", daemon=True)
        self._watcher.start()
        log.info(
            "covr service listening on %s (%s)", self.bind_address, "TLS" if self.tls else "plain"
        )
        return self

    def _set_serving(self, ok: bool) -> None:
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if ok
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        for name in ("", SERVICE_NAME):
            self.health.set(name, status)

    def _watch(self) -> None:
        """NOT_SERVING while the store does not answer, SERVING again when it does."""
        was_ok = True
        while not self._stopped.wait(HEALTH_INTERVAL_S):
            ok = self.store.health().ok
            if ok != was_ok and not self._stopped.is_set():
                log.warning("graph store %s", "answers again" if ok else "does not answer")
                self._set_serving(ok)
                was_ok = ok

    def stop(self, grace: float | None = None) -> None:
        """Graceful stop: NOT_SERVING, refuse new RPCs, let running ones finish, release."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        self.health.enter_graceful_shutdown()
        self.server.stop(self.settings.service.service_grace_s if grace is None else grace).wait()
        # the exclusivity scores this server computed, for its next start (docs/models.md)
        self.rooms.questions.remember()
        if self._metrics_http is not None:
            self._metrics_http.shutdown()
        if self.owns_store:
            self.store.close()
        log.info("covr service stopped")

    def wait(self) -> None:
        self.server.wait_for_termination()


def build_server(
    sections: ServerSettings,
    store: GraphStore,
    *,
    owns_store: bool = False,
    insecure: bool = False,
) -> Service:
    """Put the server together on ``store`` (not started; see the module docstring): each
    part gets its own section of ``sections`` (the rooms theirs, the server the service's).

    A bind address other machines can reach needs a token unless ``insecure``
    (:func:`covr.service.exposure.check_exposure`)."""
    settings = sections.service
    check_exposure(settings, insecure=insecure)
    credentials = _credentials(settings)
    deadlines = RequestDeadlines()
    bounded = DeadlineStore(
        store,
        deadlines.time_left,
        cap=sections.graph.query_timeout_s,
        cancelled=deadlines.cancelled,
        before_read=deadlines.before_read,
    )
    rooms = open_rooms(bounded, sections.related, sections.models)
    collector = metrics() if settings.service_metrics_port else None
    interceptors: list[Interceptor] = [
        ObserveInterceptor(log_requests=settings.service_log_requests, metrics=collector)
    ]
    if settings.service_token is not None and settings.service_token.get_secret_value():
        interceptors.append(AuthInterceptor(settings.service_token.get_secret_value()))
    interceptors.append(ErrorInterceptor())
    server = grpc.server(
        ThreadPoolExecutor(max_workers=settings.service_workers, thread_name_prefix="covr-rpc"),
        interceptors=interceptors,
        options=server_options(settings),
        maximum_concurrent_rpcs=settings.service_max_concurrent_rpcs,
    )
    limits = for_settings(settings)
    servicer = CovrServicer(bounded, sections, rooms, deadlines, limits)
    service_pb2_grpc.add_CovrServiceServicer_to_server(servicer, server)
    health_servicer = health.HealthServicer(
        experimental_non_blocking=True,
        experimental_thread_pool=ThreadPoolExecutor(max_workers=1),
    )
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    address = f"{settings.service_host}:{settings.service_port}"
    if credentials is None:
        port = server.add_insecure_port(address)
    else:
        port = server.add_secure_port(address, credentials)
    if port == 0:
        if credentials is not None:  # grpc says 0 for a key that does not match its certificate
            raise ServiceConfigError(
                "COVR_SERVICE_TLS_KEY",
                f"cannot serve TLS on {address}: check that the key belongs to the certificate",
            )
        raise OSError(f"cannot bind the gRPC server to {address}")
    service = Service(
        server=server,
        port=port,
        host=settings.service_host,
        tls=credentials is not None,
        settings=sections,
        store=store,
        health=health_servicer,
        rooms=rooms,
        admission=limits,
        batch_stats=servicer.batch_stats,
        owns_store=owns_store,
    )
    if collector is not None:
        token = settings.service_token.get_secret_value() if settings.service_token else ""
        service._metrics_http, service.metrics_port = start_metrics_http(
            settings.service_metrics_host,
            settings.service_metrics_port,
            token=token if settings.service_metrics_auth else "",
        )
    return service
