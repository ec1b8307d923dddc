"""The scale room's settings section (``COVR_RAY_*``; docs/scale.md) and what a batch run's
tasks are given.

Read by the one settings reader (:class:`covr.settings.Settings`, whose ``scale`` and ``tasks``
properties build these); ``covr generate --ray`` and ``covr distractors`` pass them down.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from covr.graph.config import GraphSettings
from covr.models.config import ModelSettings
from covr.questions.config import QuestionSettings
from covr.related.config import RelatedSettings


@dataclass(frozen=True, kw_only=True)
class ScaleSettings:
    """Each field is the :class:`covr.settings.Settings` field of the same name, described
    there: ``data_dir`` holds a locally started Ray's session files when ``ray_temp_dir`` is
    unset, ``connect_timeout_s`` bounds the check that a named cluster answers."""

    ray_shards: int
    ray_cpus: int
    ray_temp_dir: Path | None
    ray_object_store_mb: int
    ray_max_retries: int
    data_dir: Path
    connect_timeout_s: float


@dataclass(frozen=True, kw_only=True)
class TaskSettings:
    """The sections one batch run needs: the driver's cluster settings (``scale``) and those
    each shard task opens its own store, lookup and provider with. Plain frozen values that
    pickle: a worker on another machine has neither the driver's environment nor its ``.env``
    file, so a task never reads settings itself."""

    scale: ScaleSettings
    graph: GraphSettings
    related: RelatedSettings
    models: ModelSettings
    questions: QuestionSettings
