"""The options of one generation request (:class:`GenerationOptions`), in a module of their own
so that the driver (:mod:`covr.questions.generate`), the per-image engine
(:mod:`covr.questions.engine`) and the run's quotas (:mod:`covr.questions.quota`) all name them
without importing each other (issue 38: the engine and the quotas had imported the driver for
the type, the driver them for their code)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from covr.questions.errors import GenerationError
from covr.questions.templates import select_templates
from covr.related.api import enumeration_options
from covr.scene.enumerate import EnumerationOptions

if TYPE_CHECKING:
    from covr.questions.config import QuestionSettings
    from covr.related.api import RelatedSettings

MAX_SEED = 2**63 - 1
"""The largest seed a request may give (a signed 64-bit integer, as the API carries it)."""


@dataclass(frozen=True)
class GenerationOptions:
    """Knobs of one generation request (the CLI fills them from settings and flags)."""

    split: str
    seed: int = 0
    templates: tuple[str, ...] = ()
    subgraphs_per_image: int | None = 24
    max_distance: int = 2
    per_signature: int = 3
    positives_limit: int = 6
    flip_attempts: int = 4
    max_combos: int = 8
    max_count_answer: int = 5
    enumeration: EnumerationOptions = field(default_factory=EnumerationOptions)
    per_template: int | None = None
    """Keep about this many examples of each form and stop filling a form once it has them
    (:mod:`covr.questions.quota`); ``None``: every example the images give."""
    per_source: int | None = None
    """At most about this many examples of each form from one source image (a pair may take it
    one past), so that a ``per_template`` run takes its examples from many source images rather
    than filling every form from the first few (:func:`covr.questions.generate.spread_over`)."""
    max_image_share: float | None = None
    """No image in more than this share of the run's examples (:mod:`covr.questions.quota`);
    ``None``: no cap. ``covr generate`` sets 0.05 (issue 36)."""
    pairs_only: bool = False
    """Keep a text only with two answers (two image sets, two answers: paper App. C); a text
    with one is dropped as ``no-second-answer`` (issue 36 item 3). ``covr generate`` sets it
    (a dataset); a question about one subgraph (GenerateQuestions) keeps a single answer."""

    @classmethod
    def from_settings(
        cls,
        settings: QuestionSettings,
        related: RelatedSettings,
        *,
        split: str,
        seed: int = 0,
        templates: Sequence[str] = (),
    ) -> GenerationOptions:
        """The request's split, seed and templates plus the ``COVR_QUESTIONS_*`` settings (the
        question room's section) and the ``COVR_SUBGRAPH_*`` ones (the related room's, which
        enumerates subgraphs for lookups and questions alike): what the CLI, the quick start
        and the service use."""
        return cls(
            split=split,
            seed=seed,
            templates=tuple(templates),
            subgraphs_per_image=settings.questions_subgraphs_per_image,
            max_distance=settings.questions_max_distance,
            per_signature=settings.questions_per_signature,
            positives_limit=settings.questions_positives,
            flip_attempts=settings.questions_flip_attempts,
            max_combos=settings.questions_max_combos,
            enumeration=enumeration_options(related),
        )

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise GenerationError("seed", f"must be an integer, got {self.seed!r}")
        if not 0 <= self.seed <= MAX_SEED:
            raise GenerationError("seed", f"must be between 0 and {MAX_SEED}, got {self.seed}")
        if not self.split:
            raise GenerationError("split", "must be a non-empty split name")
        if self.subgraphs_per_image is not None and self.subgraphs_per_image < 1:
            raise GenerationError("subgraphs_per_image", "must be >= 1")
        if not 1 <= self.max_distance <= 2:
            raise GenerationError("max_distance", "must be 1 or 2")
        for name in ("per_signature", "positives_limit"):
            if getattr(self, name) < 1:
                raise GenerationError(name, "must be >= 1")
        if self.max_combos < 1:
            raise GenerationError("max_combos", "must be >= 1")
        if self.flip_attempts < 0:
            raise GenerationError("flip_attempts", "must be >= 0")
        if self.per_template is not None and (
            isinstance(self.per_template, bool) or self.per_template < 1
        ):
            raise GenerationError("per_template", f"must be >= 1, got {self.per_template!r}")
        if self.max_image_share is not None and not 0 < self.max_image_share <= 1:
            raise GenerationError(
                "max_image_share", f"must be in (0, 1], got {self.max_image_share!r}"
            )
        if self.per_source is not None and self.per_source < 1:
            raise GenerationError("per_source", f"must be >= 1, got {self.per_source!r}")
        select_templates(self.templates)  # unknown names raise TemplateError
