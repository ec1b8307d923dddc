"""Client SDK for the COVR graph service (``covr.v1`` over gRPC).

Installable on its own (``pip install clients/python``; depends on grpcio and protobuf only)::

    from covr_client import Client

    with Client("127.0.0.1:50051", token=None, timeout=10.0) as client:
        print(client.statistics().totals.images)

See ``clients/python/README.md`` and ``docs/service.md``.
"""

from covr_client._requests import BatchOptions
from covr_client.aio import AsyncClient
from covr_client.client import Client
from covr_client.config import NO_RETRY, RetryPolicy, TlsConfig
from covr_client.errors import (
    ERROR_CLASSES,
    CancelledError,
    CovrError,
    DeadlineExceededError,
    FailedPreconditionError,
    FieldViolation,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    PermissionDeniedError,
    ResourceExhaustedError,
    UnauthenticatedError,
    UnavailableError,
)
from covr_client.jsonl import write_jsonl
from covr_client.types import (
    AsyncQuestionStream,
    BatchItem,
    BatchProblem,
    BatchResult,
    Box,
    DatasetStatistics,
    Distractor,
    DistractorRecord,
    Evaluation,
    Example,
    ExclusivityScore,
    FormSummary,
    GenerationSummary,
    ImageSpread,
    ImportProblem,
    ImportResult,
    ModelInfo,
    Object,
    PresenceQuery,
    PresenceScore,
    ProgramStep,
    QuestionStream,
    RelatedImage,
    RelatedPage,
    Relation,
    RelMod,
    SceneGraph,
    Statistics,
    Subgraph,
    SubgraphObject,
    SubgraphRelation,
    SubgraphRelMod,
)

__version__ = "0.1.0"

__all__ = [
    "ERROR_CLASSES",
    "NO_RETRY",
    "AsyncClient",
    "AsyncQuestionStream",
    "BatchItem",
    "BatchOptions",
    "BatchProblem",
    "BatchResult",
    "Box",
    "CancelledError",
    "Client",
    "CovrError",
    "DatasetStatistics",
    "DeadlineExceededError",
    "Distractor",
    "DistractorRecord",
    "Evaluation",
    "Example",
    "ExclusivityScore",
    "FailedPreconditionError",
    "FieldViolation",
    "FormSummary",
    "GenerationSummary",
    "ImageSpread",
    "ImportProblem",
    "ImportResult",
    "InternalError",
    "InvalidArgumentError",
    "ModelInfo",
    "NotFoundError",
    "Object",
    "PermissionDeniedError",
    "PresenceQuery",
    "PresenceScore",
    "ProgramStep",
    "QuestionStream",
    "RelMod",
    "RelatedImage",
    "RelatedPage",
    "Relation",
    "ResourceExhaustedError",
    "RetryPolicy",
    "SceneGraph",
    "Statistics",
    "Subgraph",
    "SubgraphObject",
    "SubgraphRelMod",
    "SubgraphRelation",
    "TlsConfig",
    "UnauthenticatedError",
    "UnavailableError",
    "write_jsonl",
]
