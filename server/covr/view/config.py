"""The view room's settings section (``COVR_IMAGES_DIR``, ``COVR_VIEW_*``; docs/view.md).

Read by the one settings reader (:class:`covr.settings.Settings`, whose ``view`` property builds
this section); ``covr render`` and ``covr view`` take it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import SecretStr


@dataclass(frozen=True, kw_only=True)
class ViewSettings:
    """Each field is the :class:`covr.settings.Settings` field of the same name, described
    there."""

    images_dir: Path | None
    view_host: str
    view_port: int
    view_page_size: int
    view_token: SecretStr | None
    view_insecure: bool
    view_threads: int
    view_idle_timeout_s: float
