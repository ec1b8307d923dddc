"""The loaders' settings section: how dataset files are read, converted and written.

Read from the ``COVR_LOAD_*`` (and ``COVR_LIMIT_*``) variables by the one settings reader
(:class:`covr.settings.Settings`, whose ``load`` property builds this section); the load jobs,
the bundled samples and the ImportSceneGraphs RPC take it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from covr.scene.limits import SceneLimits


@dataclass(frozen=True, kw_only=True)
class LoadSettings:
    """``COVR_LOAD_*`` (each field is the :class:`covr.settings.Settings` field of the same
    name, described there), the data folder the load checkpoints live in, and the limits every
    loaded scene graph is checked against (the ``limits`` section: a load job applies them)."""

    load_batch_images: int
    load_writers: int
    load_max_record_bytes: int
    load_gqa_left_right: bool
    load_imsitu_place: bool
    load_imsitu_frame: str
    load_imsitu_templates: Path | None
    data_dir: Path
    limits: SceneLimits
