"""Exceptions → gRPC status codes with rich details, in one table (DESIGN.md §9).

:data:`STATUS_TABLE` maps every exception class the service answers on purpose to its status code,
the service's own (:class:`InvalidArgument`, :class:`NotFound`...) and the rooms' alike, so a
room never needs to know about gRPC and no code is decided anywhere else. Bad input of any room
is a :class:`covr.errors.CovrError` with a field and a message; it becomes ``INVALID_ARGUMENT``
with a ``google.rpc.BadRequest`` naming that field (as a request field), packed into
``google.rpc.Status`` the way ``grpcio-status`` expects, so clients in any language can read them.
Anything not in the table is ``INTERNAL``, logged with an incident id.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from covr.errors import CovrError
from covr.graph.errors import DataDirLocked, ParameterError, QueryTimeout, StoreUnavailable
from covr.models.errors import ModelResourceError
from covr.questions.errors import SourceNotFound, TemplateError
from covr.related.errors import RelatedError, StatsMissing, UnknownImage, UnknownSubgraph
from covr.scene.subgraph import SubgraphError

log = logging.getLogger("covr.service")


@dataclass(frozen=True)
class FieldViolation:
    """One bad request field: a path such as ``subgraph.objects[0].name`` and what is wrong."""

    field: str
    description: str


class ServiceError(Exception):
    """Base of the service's own errors (their codes are in :data:`STATUS_TABLE`)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidArgument(ServiceError):
    """Bad request fields; every violation is reported, not only the first."""

    def __init__(self, violations: Sequence[FieldViolation], message: str | None = None) -> None:
        self.violations = tuple(violations)
        text = message or "; ".join(f"{v.field}: {v.description}" for v in self.violations)
        super().__init__(text or "invalid request")

    @classmethod
    def field(cls, field: str, description: str) -> InvalidArgument:
        """One bad field (the common case)."""
        return cls([FieldViolation(field, description)])


class NotFound(ServiceError):
    """The image, subgraph or record a request names does not exist."""


class FailedPrecondition(ServiceError):
    """The request is valid but the server cannot serve it in its current state."""


class Unauthenticated(ServiceError):
    """No or a wrong bearer token (:mod:`covr.service.interceptors`)."""


class ResourceExhausted(ServiceError):
    """The method is at its concurrency limit (:mod:`covr.service.admission`); the answer carries
    a ``google.rpc.RetryInfo`` with ``retry_after_s``, which the SDK's retry policy honours."""

    def __init__(self, message: str, *, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class Status:
    """What one exception class becomes: a code, and for bad input the request field to name
    instead of the error's own ``field`` (``None`` = use the error's)."""

    code: grpc.StatusCode
    field: str | None = None


_BAD_INPUT = Status(grpc.StatusCode.INVALID_ARGUMENT)

STATUS_TABLE: tuple[tuple[type[BaseException], Status], ...] = (
    # the service's own
    (InvalidArgument, _BAD_INPUT),
    (NotFound, Status(grpc.StatusCode.NOT_FOUND)),
    (FailedPrecondition, Status(grpc.StatusCode.FAILED_PRECONDITION)),
    (Unauthenticated, Status(grpc.StatusCode.UNAUTHENTICATED)),
    (ResourceExhausted, Status(grpc.StatusCode.RESOURCE_EXHAUSTED)),
    # the store
    (QueryTimeout, Status(grpc.StatusCode.DEADLINE_EXCEEDED)),
    (StoreUnavailable, Status(grpc.StatusCode.UNAVAILABLE)),
    (DataDirLocked, Status(grpc.StatusCode.UNAVAILABLE)),
    (ParameterError, _BAD_INPUT),
    # related images: unknown things and missing statistics are not bad fields
    (UnknownImage, Status(grpc.StatusCode.NOT_FOUND)),
    (UnknownSubgraph, Status(grpc.StatusCode.NOT_FOUND)),
    (StatsMissing, Status(grpc.StatusCode.FAILED_PRECONDITION)),
    (RelatedError, _BAD_INPUT),
    # questions: no image to start from
    (SourceNotFound, Status(grpc.StatusCode.NOT_FOUND)),
    # models
    (ModelResourceError, Status(grpc.StatusCode.FAILED_PRECONDITION)),
    # the request field of errors whose own field is not one
    (TemplateError, Status(grpc.StatusCode.INVALID_ARGUMENT, field="templates")),
    (SubgraphError, Status(grpc.StatusCode.INVALID_ARGUMENT, field="subgraph")),
    # every other room's bad input (scene graphs, models, questions, loaders, splits)
    (CovrError, _BAD_INPUT),
)
"""Exception classes, most specific first, and what they become; anything else is ``INTERNAL``."""

REQUEST_FIELDS = {"image": "image_id"}
"""Room field names that differ from the request field a client sent."""


def status_of(exc: BaseException) -> Status | None:
    """The table's entry for ``exc`` (first matching class), ``None`` when it is unexpected."""
    for cls, status in STATUS_TABLE:
        if isinstance(exc, cls):
            return status
    return None


def violations_of(exc: BaseException, status: Status) -> list[FieldViolation]:
    """The bad request fields ``exc`` reports (none for errors that are not about a field)."""
    if isinstance(exc, InvalidArgument):
        return list(exc.violations)
    if status.field is not None:
        return [FieldViolation(status.field, str(exc))]
    field = getattr(exc, "field", None)
    message = getattr(exc, "message", None)
    if isinstance(field, str) and isinstance(message, str):
        return [FieldViolation(REQUEST_FIELDS.get(field, field), message)]
    return []


MAX_MESSAGE_CHARS = 200
MAX_FIELD_CHARS = 100
MAX_DESCRIPTION_CHARS = 200
MAX_DETAILS_BYTES = 3000
"""Status text and details travel in HTTP/2 trailers, which gRPC refuses above 8-16 KiB (the
client then sees RESOURCE_EXHAUSTED instead of our code). Messages quote request values, so they
are clipped, and field violations are listed only while the details stay small."""


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, marked with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _status(
    code: grpc.StatusCode, message: str, details: Sequence[any_pb2.Any] = ()
) -> grpc.Status:
    proto = status_pb2.Status(
        code=getattr(code_pb2, code.name), message=clip(message, MAX_MESSAGE_CHARS)
    )
    proto.details.extend(details)
    return rpc_status.to_status(proto)


def bad_request(violations: Sequence[FieldViolation]) -> any_pb2.Any:
    """``google.rpc.BadRequest`` with the violations (as many as fit), packed in an ``Any``."""
    message = error_details_pb2.BadRequest()
    for v in violations:
        message.field_violations.add(
            field=clip(v.field, MAX_FIELD_CHARS),
            description=clip(v.description, MAX_DESCRIPTION_CHARS),
        )
        if message.ByteSize() > MAX_DETAILS_BYTES:
            del message.field_violations[-1]
            break
    detail = any_pb2.Any()
    detail.Pack(message)
    return detail


def retry_info(seconds: float) -> any_pb2.Any:
    """``google.rpc.RetryInfo`` (when to try again), packed in an ``Any``."""
    message = error_details_pb2.RetryInfo()
    message.retry_delay.FromNanoseconds(int(seconds * 1e9))
    detail = any_pb2.Any()
    detail.Pack(message)
    return detail


def status_for(exc: BaseException, method: str = "") -> grpc.Status:
    """The status an exception becomes (:data:`STATUS_TABLE`); unexpected ones are logged with an
    incident id and answered ``INTERNAL`` without their text (it may hold internals)."""
    status = status_of(exc)
    if status is None:
        incident = uuid.uuid4().hex[:12]
        log.error("internal error in %s (incident %s)", method, incident, exc_info=exc)
        return _status(grpc.StatusCode.INTERNAL, f"internal error (incident {incident})")
    message = exc.message if isinstance(exc, ServiceError) else str(exc)
    details: list[any_pb2.Any] = []
    violations = violations_of(exc, status) if status.code is _BAD_INPUT.code else []
    if violations:
        details.append(bad_request(violations))
    if isinstance(exc, ResourceExhausted):
        details.append(retry_info(exc.retry_after_s))
    return _status(status.code, message, details)
