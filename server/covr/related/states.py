"""What one lookup knows about each of its signatures between rounds.

Why a module of its own: the round loop (:class:`covr.related.search.Search`) and the direct
matches it delegates to (:class:`covr.related.direct.DirectMatches`) both read and update these
states; kept here, neither of the two modules imports the other's internals (they used to
import each other).
"""

from __future__ import annotations

from dataclasses import dataclass

from covr.related.api import Distractor
from covr.related.cypher_path import Rule
from covr.related.sampling import Stream, WholeStream
from covr.scene.edits import Position

__all__ = ["SigState"]


@dataclass
class SigState:
    """One signature (or the positives, signature ``""``) during a lookup."""

    signature: str
    changed: tuple[Position, ...]
    rules: dict[str, Rule]
    stream: Stream | WholeStream
    target: int | None
    batch: int
    anchor: Position | None = None
    salt: str = ""
    exact: bool = False
    done: bool = False
    taken: int = 0
    """Batches handed out so far (the positives may sit out rounds)."""

    def __post_init__(self) -> None:
        self.found: list[Distractor] = []
        self.positives: list[str] = []
