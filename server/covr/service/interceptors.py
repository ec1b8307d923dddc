"""Server interceptors: observation (logs, metrics), bearer-token auth, error mapping.

Order (outermost first): :class:`ObserveInterceptor` sees the final status of every RPC,
including refused ones; :class:`AuthInterceptor` refuses unauthenticated calls before any work;
:class:`ErrorInterceptor` turns exceptions of the servicer into statuses (see ``errors.py``) and
turns undecodable request bytes into ``INVALID_ARGUMENT`` instead of gRPC's default ``INTERNAL``.

Each wraps the method handler's behaviour; the four handler kinds (unary/stream × unary/stream)
are rebuilt by :func:`rebuild` so the interceptors stay independent of the RPC list.
"""

from __future__ import annotations

import hmac
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import grpc

from covr.service.errors import InvalidArgument, Unauthenticated, status_for
from covr.service.metrics import Metrics

log = logging.getLogger("covr.service")

if TYPE_CHECKING:  # the stubs make these generic; at run time they are plain classes
    Handler = grpc.RpcMethodHandler[Any, Any]
    Interceptor = grpc.ServerInterceptor[Any, Any]
else:
    Handler = grpc.RpcMethodHandler
    Interceptor = grpc.ServerInterceptor
Behavior = Callable[[Any, grpc.ServicerContext], Any]
Continuation = Callable[[grpc.HandlerCallDetails], Handler | None]

HEALTH_METHODS = frozenset({"/grpc.health.v1.Health/Check", "/grpc.health.v1.Health/Watch"})
"""Answered without a token: container and orchestrator probes carry none."""


def status_code(context: grpc.ServicerContext) -> grpc.StatusCode | None:
    """The code already set on ``context`` (by an abort), if any; the stubs lack ``code()``."""
    code: grpc.StatusCode | None = getattr(context, "code")()  # noqa: B009
    return code


def _behavior(handler: Handler) -> Behavior:
    for name in ("unary_unary", "unary_stream", "stream_unary", "stream_stream"):
        fn = getattr(handler, name)
        if fn is not None:
            return fn  # type: ignore[no-any-return]
    raise ValueError("method handler without behaviour")


def rebuild(
    handler: Handler,
    behavior: Behavior,
    deserializer: Callable[[bytes], Any] | None = None,
) -> Handler:
    """A handler of the same kind as ``handler`` with a new behaviour (and deserializer)."""
    request_deserializer = deserializer or handler.request_deserializer
    serializer = handler.response_serializer
    if handler.request_streaming and handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(behavior, request_deserializer, serializer)
    if handler.request_streaming:
        return grpc.stream_unary_rpc_method_handler(behavior, request_deserializer, serializer)
    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(behavior, request_deserializer, serializer)
    return grpc.unary_unary_rpc_method_handler(behavior, request_deserializer, serializer)


# --------------------------------------------------------------------------- observation


@dataclass
class _Call:
    method: str
    peer: str
    started: float
    messages: int = 0
    finished: bool = False


class ObserveInterceptor(Interceptor):
    """One log line and the Prometheus counters per RPC, recorded when the RPC terminates.

    Recording happens in a ``context.add_callback`` hook, which gRPC runs for every termination:
    normal end, error, client cancellation or deadline. A call that neither returned nor raised
    when it terminated was cancelled by the client (or ran past its deadline).
    """

    def __init__(self, *, log_requests: bool, metrics: Metrics | None) -> None:
        self.log_requests = log_requests
        self.metrics = metrics

    def intercept_service(
        self, continuation: Continuation, details: grpc.HandlerCallDetails
    ) -> Handler | None:
        handler = continuation(details)
        if handler is None or (not self.log_requests and self.metrics is None):
            return handler
        inner = _behavior(handler)
        method = details.method
        streaming = handler.response_streaming

        def behavior(request: Any, context: grpc.ServicerContext) -> Any:
            call = _Call(method, context.peer(), time.perf_counter())
            context.add_callback(lambda: self._record(call, context))
            if streaming:
                return self._stream(inner(request, context), call)
            result = inner(request, context)
            call.finished = True
            return result

        return rebuild(handler, behavior)

    @staticmethod
    def _stream(responses: Iterator[Any], call: _Call) -> Iterator[Any]:
        for response in responses:
            call.messages += 1
            yield response
        call.finished = True

    def _record(self, call: _Call, context: grpc.ServicerContext) -> None:
        code = status_code(context)
        if code is None:
            code = grpc.StatusCode.OK if call.finished else grpc.StatusCode.CANCELLED
        seconds = time.perf_counter() - call.started
        name = code.name
        if self.metrics is not None:
            self.metrics.observe(call.method, name, seconds)
        if self.log_requests:
            log.info(
                "rpc %s %s %.1fms messages=%d peer=%s",
                call.method,
                name,
                seconds * 1000,
                call.messages,
                call.peer,
            )


# --------------------------------------------------------------------------- auth


class AuthInterceptor(Interceptor):
    """Refuses calls without ``authorization: Bearer <token>`` with ``UNAUTHENTICATED``."""

    def __init__(self, token: str) -> None:
        self._expected = f"Bearer {token}".encode()

    def _allowed(self, details: grpc.HandlerCallDetails) -> bool:
        if details.method in HEALTH_METHODS:
            return True
        for key, value in details.invocation_metadata or ():
            if key == "authorization":
                given = value.encode() if isinstance(value, str) else bytes(value)
                return hmac.compare_digest(given, self._expected)
        return False

    def intercept_service(
        self, continuation: Continuation, details: grpc.HandlerCallDetails
    ) -> Handler | None:
        handler = continuation(details)
        if handler is None or self._allowed(details):
            return handler

        def refuse(request: Any, context: grpc.ServicerContext) -> Any:
            context.abort_with_status(status_for(Unauthenticated("missing or wrong bearer token")))

        return rebuild(handler, refuse, deserializer=lambda raw: raw)


# --------------------------------------------------------------------------- errors


@dataclass(frozen=True)
class _Malformed:
    error: str


def _safe(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any]:
    def parse(raw: bytes) -> Any:
        if deserializer is None:
            return raw
        try:
            return deserializer(raw)
        except Exception as exc:  # protobuf raises DecodeError (and others on odd input)
            return _Malformed(f"{type(exc).__name__}: {exc}")

    return parse


def _checked(request: Any, index: int | None = None) -> Any:
    if isinstance(request, _Malformed):
        where = "request" if index is None else f"request message {index}"
        raise InvalidArgument.field(where, f"could not be decoded ({request.error})")
    return request


def _checked_stream(requests: Iterator[Any]) -> Iterator[Any]:
    for index, request in enumerate(requests):
        yield _checked(request, index)


class ErrorInterceptor(Interceptor):
    """Every exception of a servicer becomes a status with details (``errors.status_for``)."""

    def intercept_service(
        self, continuation: Continuation, details: grpc.HandlerCallDetails
    ) -> Handler | None:
        handler = continuation(details)
        if handler is None or not details.method.startswith("/covr."):
            return handler
        inner = _behavior(handler)
        method = details.method
        request_streaming = handler.request_streaming

        def fail(exc: Exception, context: grpc.ServicerContext) -> None:
            if status_code(context) is not None:  # gRPC's own abort: already a status
                raise exc
            if not context.is_active():  # the client left (cancel, deadline): nobody to tell
                log.debug("%s ended after the client left: %s", method, exc)
                return
            context.abort_with_status(status_for(exc, method))

        def prepare(request: Any) -> Any:
            return _checked_stream(request) if request_streaming else _checked(request)

        if handler.response_streaming:

            def stream(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
                try:
                    yield from inner(prepare(request), context)
                except Exception as exc:
                    fail(exc, context)

            return rebuild(handler, stream, _safe(handler.request_deserializer))

        def unary(request: Any, context: grpc.ServicerContext) -> Any:
            try:
                return inner(prepare(request), context)
            except Exception as exc:
                fail(exc, context)

        return rebuild(handler, unary, _safe(handler.request_deserializer))


def cancelled_event(context: grpc.ServicerContext) -> threading.Event:
    """An event set when the RPC terminates (client cancel, deadline); streaming loops check it."""
    event = threading.Event()
    if not context.add_callback(event.set):
        event.set()
    return event
