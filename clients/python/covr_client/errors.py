"""SDK exceptions: callers catch these, never a raw ``grpc.RpcError``.

Every error has ``.code`` (the gRPC status code name, e.g. ``"INVALID_ARGUMENT"``), ``.message``
and ``.details`` (the rich status details the server attached); ``.field_violations`` lists the
``(field, description)`` pairs of an ``INVALID_ARGUMENT`` answer; ``.retry_after`` is the
server's hint (seconds) of when a refused call may succeed (``RESOURCE_EXHAUSTED``). The class of each code is an
explicit table (:data:`ERROR_CLASSES`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import grpc

from covr_client._proto import wire_pb2

_BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"
_RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
_DETAILS_KEY = "grpc-status-details-bin"


@dataclass(frozen=True)
class FieldViolation:
    """One bad request field, as the server named it (``subgraph.objects[0].name``)."""

    field: str
    description: str


class CovrError(Exception):
    """A failed call; subclasses by status code (see :data:`ERROR_CLASSES`)."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        field_violations: tuple[FieldViolation, ...] = (),
        details: tuple[Any, ...] = (),
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.field_violations = field_violations
        self.details = details
        self.retry_after = retry_after


class InvalidArgumentError(CovrError):
    """The request was refused; ``field_violations`` says which fields and why."""


class NotFoundError(CovrError):
    """An image (or other named thing) is not in the store."""


class FailedPreconditionError(CovrError):
    """The server cannot do this now (e.g. a feature not available in this server build)."""


class UnauthenticatedError(CovrError):
    """Missing or wrong bearer token."""


class PermissionDeniedError(CovrError):
    pass


class DeadlineExceededError(CovrError):
    """The call ran past its deadline (the server stopped its database work too)."""


class UnavailableError(CovrError):
    """The server or its graph store cannot be reached (retried for idempotent calls)."""


class ResourceExhaustedError(CovrError):
    """The server is at capacity and refused the call at once; ``retry_after`` is its hint.
    The default retry policy waits it out (bounded); this is raised when that did not help."""


class CancelledError(CovrError):
    pass


class InternalError(CovrError):
    """A server bug; the message carries an incident id found in the server log."""


ERROR_CLASSES: dict[str, type[CovrError]] = {
    "INVALID_ARGUMENT": InvalidArgumentError,
    "OUT_OF_RANGE": InvalidArgumentError,
    "NOT_FOUND": NotFoundError,
    "FAILED_PRECONDITION": FailedPreconditionError,
    "UNAUTHENTICATED": UnauthenticatedError,
    "PERMISSION_DENIED": PermissionDeniedError,
    "DEADLINE_EXCEEDED": DeadlineExceededError,
    "UNAVAILABLE": UnavailableError,
    "RESOURCE_EXHAUSTED": ResourceExhaustedError,
    "CANCELLED": CancelledError,
    "INTERNAL": InternalError,
    "UNKNOWN": InternalError,
    "DATA_LOSS": InternalError,
    "UNIMPLEMENTED": InternalError,
}


def _status_details(metadata: Any) -> wire_pb2.RpcStatus | None:
    for item in metadata or ():
        key, value = item
        if key == _DETAILS_KEY and isinstance(value, bytes):
            try:
                return wire_pb2.RpcStatus.FromString(value)
            except Exception:  # a malformed trailer must not hide the real error
                return None
    return None


def from_rpc_error(error: grpc.RpcError) -> CovrError:
    """The SDK exception for a failed call, with its details parsed."""
    code_obj = error.code() if hasattr(error, "code") else None
    code = code_obj.name if isinstance(code_obj, grpc.StatusCode) else "UNKNOWN"
    message = error.details() if hasattr(error, "details") else str(error)
    trailers = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
    status = _status_details(trailers)
    violations: list[FieldViolation] = []
    details: list[Any] = []
    retry_after: float | None = None
    if status is not None:
        for detail in status.details:
            details.append(detail)
            if detail.type_url == _BAD_REQUEST:
                bad = wire_pb2.BadRequestDetail.FromString(detail.value)
                violations += [FieldViolation(v.field, v.description) for v in bad.field_violations]
            elif detail.type_url == _RETRY_INFO:
                delay = wire_pb2.RetryInfoDetail.FromString(detail.value).retry_delay
                retry_after = max(0.0, delay.ToNanoseconds() / 1e9)
    cls = ERROR_CLASSES.get(code, CovrError)
    return cls(
        code,
        message or "",
        field_violations=tuple(violations),
        details=tuple(details),
        retry_after=retry_after,
    )
