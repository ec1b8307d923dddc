"""The ``COVR_RAY_*`` fields of the one settings object (issue 17, docs/scale.md).

Kept in a base class of :class:`covr.settings.Settings` so that module stays under the size
limit; there is still one settings object and one ``.env.example``.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings


class ScaleSettings(BaseSettings):
    """Batch work on a Ray cluster: ``covr generate --ray`` and ``covr distractors --ray``."""

    ray_shards: int = Field(
        default=16,
        ge=1,
        le=100_000,
        description="Shards the source images are split into (by a stable hash of the image "
        "id); each shard is one Ray task. The output does not depend on it; --resume reuses "
        "parts only of a run with the same number.",
    )
    ray_cpus: int = Field(
        default=0,
        ge=0,
        le=1024,
        description="CPUs of a Ray instance started locally (--ray local); 0: every core.",
    )
    ray_temp_dir: Path | None = Field(
        default=None,
        description="Session files of a locally started Ray (sockets, logs); empty: "
        "<data_dir>/ray when that path is short enough for Unix sockets, else /tmp/covr-ray.",
    )
    ray_object_store_mb: int = Field(
        default=256,
        ge=64,
        le=1 << 20,
        description="Object store of a locally started Ray, MiB (shard results pass through it).",
    )
    ray_max_retries: int = Field(
        default=3,
        ge=0,
        le=100,
        description="Times Ray reruns a shard whose worker process or node died.",
    )
