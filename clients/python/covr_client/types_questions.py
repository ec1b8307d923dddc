"""What ``generate_questions`` returns besides its examples: with ``per_template`` or
``max_image_share`` the stream's last message carries a :class:`GenerationSummary` (per form:
examples wanted, made, not kept, and why candidates were dropped; the most-shown image), the
``forms``, ``dropped`` and ``image_spread`` that ``covr generate`` writes into
``OUT.dropped.json``. The client methods return a :class:`QuestionStream` (sync) or
:class:`AsyncQuestionStream`: an iterator of examples, as before, whose ``summary`` is set once
the examples are exhausted.

Re-exported by :mod:`covr_client.types` (kept apart only for that module's size limit).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from covr_client._proto import questions_pb2

if TYPE_CHECKING:
    from covr_client.types import Example


@dataclass(frozen=True)
class FormSummary:
    """One form of a :class:`GenerationSummary`: ``wanted`` (the request's ``per_template``;
    ``None`` without a quota), examples ``made`` (kept), not kept because the form was full
    (``over_quota``) or under the image share (``image_share``), and the candidates ``dropped``
    per reason."""

    wanted: int | None
    made: int
    over_quota: int
    image_share: int
    dropped: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The row of this form in ``OUT.dropped.json``'s ``forms``."""
        return {
            "wanted": self.wanted,
            "made": self.made,
            "over_quota": self.over_quota,
            "image_share": self.image_share,
            "dropped": dict(sorted(self.dropped.items())),
        }


@dataclass(frozen=True)
class ImageSpread:
    """The most-shown image of the kept examples against ``max_image_share`` (``None``: no
    cap); ``held``: no image above the share; ``applies``: the images could hold it at all."""

    max_image_share: float | None
    held: bool
    applies: bool
    most_shown_image: str
    most_shown_examples: int
    most_shown_share: float

    def to_dict(self) -> dict[str, Any]:
        """``OUT.dropped.json``'s ``image_spread``."""
        return {
            "max_image_share": self.max_image_share,
            "held": self.held,
            "applies": self.applies,
            "most_shown": {
                "image": self.most_shown_image,
                "examples": self.most_shown_examples,
                "share": self.most_shown_share,
            },
        }


@dataclass(frozen=True)
class GenerationSummary:
    """What a generation with a quota or an image share kept and dropped (see the module
    docstring); ``examples``: how many the stream sent."""

    forms: dict[str, FormSummary]
    dropped: dict[str, int]
    image_spread: ImageSpread
    examples: int

    @classmethod
    def from_proto(cls, msg: questions_pb2.GenerationSummary) -> GenerationSummary:
        spread = msg.image_spread
        return cls(
            forms={
                name: FormSummary(
                    wanted=row.wanted or None,
                    made=row.made,
                    over_quota=row.over_quota,
                    image_share=row.image_share,
                    dropped=dict(row.dropped),
                )
                for name, row in sorted(msg.forms.items())
            },
            dropped=dict(sorted(msg.dropped.items())),
            image_spread=ImageSpread(
                max_image_share=spread.max_image_share or None,
                held=spread.held,
                applies=spread.applies,
                most_shown_image=spread.most_shown_image,
                most_shown_examples=spread.most_shown_examples,
                most_shown_share=spread.most_shown_share,
            ),
            examples=msg.examples,
        )

    def to_dict(self) -> dict[str, Any]:
        """The same record as ``covr generate``'s ``OUT.dropped.json`` (``dropped``, ``forms``,
        ``image_spread``)."""
        return {
            "dropped": dict(self.dropped),
            "forms": {name: row.to_dict() for name, row in self.forms.items()},
            "image_spread": self.image_spread.to_dict(),
        }


class SummaryBox:
    """Where a stream's pages leave their summary (one per call)."""

    def __init__(self) -> None:
        self.summary: GenerationSummary | None = None

    def examples(self, page: questions_pb2.GenerateQuestionsResponse) -> Iterable[Example]:
        """The examples of one page; its summary (the last page's) is kept."""
        from covr_client.types import Example

        if page.HasField("summary"):
            self.summary = GenerationSummary.from_proto(page.summary)
        return [Example.from_proto(e) for e in page.examples]


class QuestionStream(Iterator["Example"]):
    """The examples of one ``generate_questions`` call; :attr:`summary` once they are
    exhausted (``None`` before, and when the call set neither ``per_template`` nor
    ``max_image_share``)."""

    def __init__(self, examples: Iterator[Example], box: SummaryBox) -> None:
        self._examples = examples
        self._box = box

    @property
    def summary(self) -> GenerationSummary | None:
        return self._box.summary

    def __iter__(self) -> QuestionStream:
        return self

    def __next__(self) -> Example:
        return next(self._examples)

    def close(self) -> None:
        """Stop reading (the call is cancelled on the server)."""
        close = getattr(self._examples, "close", None)
        if close is not None:
            close()


class AsyncQuestionStream(AsyncIterator["Example"]):
    """:class:`QuestionStream` of :class:`covr_client.AsyncClient`."""

    def __init__(self, examples: AsyncIterator[Example], box: SummaryBox) -> None:
        self._examples = examples
        self._box = box

    @property
    def summary(self) -> GenerationSummary | None:
        return self._box.summary

    def __aiter__(self) -> AsyncQuestionStream:
        return self

    async def __anext__(self) -> Example:
        return await anext(self._examples)

    async def aclose(self) -> None:
        """Stop reading (the call is cancelled on the server)."""
        aclose = getattr(self._examples, "aclose", None)
        if aclose is not None:
            await aclose()
