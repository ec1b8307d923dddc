"""The ``COVR_SERVICE_BATCH_*`` fields of the one settings object: how the streaming
``FindRelatedImagesBatch`` RPC bounds its memory and its share of the server (docs/service.md,
"Batches of related images").

Kept in a base class of :class:`covr.settings.Settings` (as ``settings_scale`` and
``settings_memory`` are) so that module stays under the size limit.
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings


class BatchSettings(BaseSettings):
    """Flow control and limits of one batch stream, and how many may run at once."""

    service_batch_window: int = Field(
        default=64,
        ge=1,
        le=10_000,
        description="Items of one FindRelatedImagesBatch stream read and not yet answered; the "
        "server reads no further until an answer is sent, so a client that stops reading (or "
        "sends faster than the lookups run) is held back by gRPC's flow control.",
    )
    service_batch_workers: int = Field(
        default=2,
        ge=1,
        le=64,
        description="Lookups of one batch stream running at once (answers still go out in "
        "request order).",
    )
    service_batch_max_items: int = Field(
        default=1_000_000,
        ge=1,
        le=1_000_000_000,
        description="Items one batch stream may send; the item after the last allowed one ends "
        "the stream with INVALID_ARGUMENT naming the requests field (earlier answers are sent).",
    )
    service_max_batches: int = Field(
        default=0,
        ge=0,
        le=1024,
        description="FindRelatedImagesBatch streams in progress at once, more get "
        "RESOURCE_EXHAUSTED with a retry hint (0: one per CPU core).",
    )
