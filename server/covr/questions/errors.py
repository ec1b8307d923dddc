"""Typed failures of the question engine.

Two families, kept apart on purpose:

- :class:`ExecutionFailure` — a well-formed program has no answer over the chosen images (no unique
  referent, nothing found, neither option holds, several values of the asked attribute type, no
  common value). The generator *drops* such examples (DESIGN §7: "the question is dropped when
  execution fails"); the ``kind`` lets statistics count why.
- :class:`ProgramError` / :class:`TemplateError` / :class:`GenerationError` — bad input (a malformed
  program, a broken template resource, an impossible request). These are reported to the caller.
"""

from __future__ import annotations

from covr.errors import CovrError


class QuestionError(ValueError):
    """Base of every error of the question engine."""


class ExecutionFailure(QuestionError):
    """A program has no well-defined answer over the given images; ``kind`` names the reason."""

    kind = "execution"

    def __init__(self, step: int | None, message: str) -> None:
        where = f"step {step}: " if step is not None else ""
        super().__init__(f"{self.kind}: {where}{message}")
        self.step = step
        self.message = message


class NoUniqueReferent(ExecutionFailure):
    """``unique`` / ``assert_unique`` saw more than one object: the reference is ambiguous."""

    kind = "no-unique-referent"


class NothingFound(ExecutionFailure):
    """An operator needed at least one object (a referent, a quantifier's domain) and got none."""

    kind = "nothing-found"


class NeitherOption(ExecutionFailure):
    """A ``choose_*`` operator found neither option to hold, or both (then the choice is moot)."""

    kind = "neither-option"


class SeveralValues(ExecutionFailure):
    """An object has several values of the asked attribute type (``white`` and ``black``)."""

    kind = "several-values"


class NoCommonValue(ExecutionFailure):
    """An object has no value of the asked attribute type, so values cannot be queried/compared."""

    kind = "no-common-value"


class ProgramError(QuestionError):
    """A program is malformed: unknown operator, bad dependency, wrong argument count or type."""

    def __init__(self, step: str, message: str) -> None:
        super().__init__(f"program step {step}: {message}")
        self.step = step
        self.message = message


class TemplateError(QuestionError, CovrError):
    """The template resource (or a requested template name) is invalid; ``field`` names where."""

    @property
    def where(self) -> str:
        """The field, under the name this error used before the rooms shared one error type."""
        return self.field


class GenerationError(QuestionError, CovrError):
    """A generation request cannot be served (unknown image, seed out of range, no subgraphs)."""


class SourceNotFound(GenerationError):
    """The image a request names, or any stored image containing its subgraph, does not exist
    (the service answers ``NOT_FOUND``, not a bad field)."""

    def __str__(self) -> str:
        return self.message
