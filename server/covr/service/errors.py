"""Domain exceptions → gRPC status codes with rich details (DESIGN.md §9).

The service's own exceptions carry their code (:attr:`ServiceError.code`); exceptions of the other
rooms are mapped by the explicit table :data:`DOMAIN_CODES` (most specific class first), so a
room never needs to know about gRPC. ``INVALID_ARGUMENT`` answers carry a ``google.rpc.BadRequest``
with one field violation per bad request field, packed into ``google.rpc.Status`` the way
``grpcio-status`` expects, so clients in any language can read them.
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

from covr.graph.errors import (
    DataDirLocked,
    GraphError,
    ParameterError,
    QueryTimeout,
    StoreUnavailable,
)
from covr.models.errors import ModelInputError, ModelResourceError
from covr.questions.errors import GenerationError, TemplateError
from covr.related.lookup import RelatedError, StatsMissing, UnknownImage, UnknownSubgraph
from covr.scene.model import SceneGraphError
from covr.scene.subgraph import SubgraphError

log = logging.getLogger("covr.service")


@dataclass(frozen=True)
class FieldViolation:
    """One bad request field: a path such as ``subgraph.objects[0].name`` and what is wrong."""

    field: str
    description: str


class ServiceError(Exception):
    """Base of the service's own errors; each subclass owns its status code."""

    code: grpc.StatusCode = grpc.StatusCode.INTERNAL

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidArgument(ServiceError):
    """Bad request fields; every violation is reported, not only the first."""

    code = grpc.StatusCode.INVALID_ARGUMENT

    def __init__(self, violations: Sequence[FieldViolation], message: str | None = None) -> None:
        self.violations = tuple(violations)
        text = message or "; ".join(f"{v.field}: {v.description}" for v in self.violations)
        super().__init__(text or "invalid request")

    @classmethod
    def field(cls, field: str, description: str) -> InvalidArgument:
        return cls([FieldViolation(field, description)])


class NotFound(ServiceError):
    code = grpc.StatusCode.NOT_FOUND


class FailedPrecondition(ServiceError):
    code = grpc.StatusCode.FAILED_PRECONDITION


class NotAvailableYet(FailedPrecondition):
    """An RPC whose room has not landed its public API yet (see docs/service.md)."""

    def __init__(self, what: str) -> None:
        super().__init__(f"{what} is not available yet in this server build")


class Unauthenticated(ServiceError):
    code = grpc.StatusCode.UNAUTHENTICATED


class ResourceExhausted(ServiceError):
    """The method is at its concurrency limit (:mod:`covr.service.admission`); the answer carries
    a ``google.rpc.RetryInfo`` with ``retry_after_s``, which the SDK's retry policy honours."""

    code = grpc.StatusCode.RESOURCE_EXHAUSTED

    def __init__(self, message: str, *, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


DOMAIN_CODES: tuple[tuple[type[BaseException], grpc.StatusCode], ...] = (
    (QueryTimeout, grpc.StatusCode.DEADLINE_EXCEEDED),
    (StoreUnavailable, grpc.StatusCode.UNAVAILABLE),
    (DataDirLocked, grpc.StatusCode.UNAVAILABLE),
    (ParameterError, grpc.StatusCode.INVALID_ARGUMENT),
    (SceneGraphError, grpc.StatusCode.INVALID_ARGUMENT),
    (SubgraphError, grpc.StatusCode.INVALID_ARGUMENT),
    (UnknownImage, grpc.StatusCode.NOT_FOUND),
    (UnknownSubgraph, grpc.StatusCode.NOT_FOUND),
    (StatsMissing, grpc.StatusCode.FAILED_PRECONDITION),
    (RelatedError, grpc.StatusCode.INVALID_ARGUMENT),
    (ModelInputError, grpc.StatusCode.INVALID_ARGUMENT),
    (ModelResourceError, grpc.StatusCode.FAILED_PRECONDITION),
    (GenerationError, grpc.StatusCode.INVALID_ARGUMENT),
    (TemplateError, grpc.StatusCode.INVALID_ARGUMENT),
    (GraphError, grpc.StatusCode.INTERNAL),
)
"""Exceptions of other rooms, most specific first; anything else is ``INTERNAL``."""


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
    """The status an exception becomes; unexpected ones are logged with an incident id."""
    if isinstance(exc, InvalidArgument):
        return _status(exc.code, exc.message, [bad_request(exc.violations)])
    if isinstance(exc, ResourceExhausted):
        return _status(exc.code, exc.message, [retry_info(exc.retry_after_s)])
    if isinstance(exc, ServiceError):
        return _status(exc.code, exc.message)
    if isinstance(exc, SceneGraphError):
        violation = FieldViolation(exc.field, exc.message)
        return _status(grpc.StatusCode.INVALID_ARGUMENT, str(exc), [bad_request([violation])])
    if isinstance(exc, SubgraphError):
        violation = FieldViolation("subgraph", str(exc))
        return _status(grpc.StatusCode.INVALID_ARGUMENT, str(exc), [bad_request([violation])])
    if isinstance(exc, RelatedError) and not isinstance(
        exc, UnknownImage | UnknownSubgraph | StatsMissing
    ):
        violation = FieldViolation(exc.field, exc.message)
        return _status(grpc.StatusCode.INVALID_ARGUMENT, str(exc), [bad_request([violation])])
    if isinstance(exc, ModelInputError):
        violation = FieldViolation(exc.field, exc.message)
        return _status(grpc.StatusCode.INVALID_ARGUMENT, str(exc), [bad_request([violation])])
    if isinstance(exc, GenerationError | TemplateError):
        where = exc.field if isinstance(exc, GenerationError) else "templates"
        where = {"image": "image_id"}.get(where, where)
        violation = FieldViolation(where, exc.message)
        return _status(grpc.StatusCode.INVALID_ARGUMENT, str(exc), [bad_request([violation])])
    for cls, code in DOMAIN_CODES:
        if isinstance(exc, cls):
            if code is grpc.StatusCode.INTERNAL:
                break
            return _status(code, str(exc))
    incident = uuid.uuid4().hex[:12]
    log.error("internal error in %s (incident %s)", method, incident, exc_info=exc)
    return _status(grpc.StatusCode.INTERNAL, f"internal error (incident {incident})")
