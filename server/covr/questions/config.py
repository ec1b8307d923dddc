"""The question room's settings section (``COVR_QUESTIONS_*``; docs/questions.md).

Read by the one settings reader (:class:`covr.settings.Settings`, whose ``questions`` property
builds this section); a request's options (:class:`covr.questions.options.GenerationOptions`)
are built from it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class QuestionSettings:
    """Each field is the :class:`covr.settings.Settings` field of the same name, described
    there."""

    questions_subgraphs_per_image: int
    questions_max_distance: int
    questions_per_signature: int
    questions_positives: int
    questions_max_checks: int
    questions_flip_attempts: int
    questions_max_combos: int
    questions_workers: int
