"""Typed values of ``find_related_images_batch``: what one image asks (:class:`BatchItem`) and
what it gets back (:class:`BatchResult`), with their message conversions.

A result's records are the rows ``covr distractors`` writes for the image, and
:meth:`DistractorRecord.to_dict` gives exactly such a JSONL row (same keys, same order, ``split``
``None`` when no split was asked), so a pipeline can write the stream's answers with
:func:`covr_client.write_jsonl` and get the file the batch command writes.

Re-exported by :mod:`covr_client.types` (kept apart only for that module's size limit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from covr_client._proto import related_pb2


@dataclass(frozen=True)
class BatchItem:
    """One image of a batch: its id, optionally the keys of the subgraphs to ask about
    (default: every subgraph, up to ``max_subgraphs``), and a label echoed in its result."""

    image_id: str
    subgraphs: tuple[str, ...] = ()
    tag: str = ""

    @classmethod
    def of(cls, value: BatchItem | str) -> BatchItem:
        """An item from an image id or an item (anything else is a ``TypeError``)."""
        if isinstance(value, BatchItem):
            return value
        if isinstance(value, str):
            return cls(value)
        raise TypeError(f"a batch item is an image id or a BatchItem, got {type(value).__name__}")


@dataclass(frozen=True)
class Distractor:
    """An image that contains an edited copy of the query subgraph: ``signature`` names the
    changed positions (``object@2+attribute@0``), ``subgraph`` is the key found in it."""

    image_id: str
    signature: str
    distance: int
    subgraph: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "image_id": self.image_id,
            "signature": self.signature,
            "distance": self.distance,
            "subgraph": self.subgraph,
        }


@dataclass(frozen=True)
class DistractorRecord:
    """One subgraph of one image: its positives (the image first) and distractors."""

    image_id: str
    subgraph: str
    split: str | None
    seed: int
    positives: tuple[str, ...]
    distractors: tuple[Distractor, ...]

    @classmethod
    def from_proto(cls, image_id: str, msg: related_pb2.BatchRecord) -> DistractorRecord:
        return cls(
            image_id=image_id,
            subgraph=msg.subgraph,
            split=msg.split or None,
            seed=msg.seed,
            positives=tuple(msg.positives),
            distractors=tuple(
                Distractor(d.image_id, d.edit_signature, d.distance, d.subgraph)
                for d in msg.distractors
            ),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSONL row ``covr distractors`` writes for this image and subgraph."""
        return {
            "image_id": self.image_id,
            "subgraph": self.subgraph,
            "split": self.split,
            "seed": self.seed,
            "positives": list(self.positives),
            "distractors": [d.to_dict() for d in self.distractors],
        }


@dataclass(frozen=True)
class BatchProblem:
    """Why an item has no records: the request field, what is wrong, and the code the
    single-image call would have answered (``NOT_FOUND``, ``INVALID_ARGUMENT``)."""

    field: str
    message: str
    code: str


@dataclass(frozen=True)
class BatchResult:
    """The answer to one item: ``index`` is its position in the input, ``tag`` its label;
    ``records`` one per subgraph, or ``problems`` when the item was bad."""

    index: int
    tag: str
    image_id: str
    records: tuple[DistractorRecord, ...]
    problems: tuple[BatchProblem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    @classmethod
    def from_proto(cls, msg: related_pb2.FindRelatedImagesBatchResponse) -> BatchResult:
        return cls(
            index=msg.index,
            tag=msg.tag,
            image_id=msg.image_id,
            records=tuple(DistractorRecord.from_proto(msg.image_id, r) for r in msg.records),
            problems=tuple(BatchProblem(p.field, p.message, p.code) for p in msg.problems),
        )

    def rows(self) -> list[dict[str, Any]]:
        """The records as ``covr distractors`` JSONL rows (none for a bad item)."""
        return [r.to_dict() for r in self.records]

    def to_dict(self) -> dict[str, Any]:
        """The whole answer as plain values: index, tag, image id, rows, problems."""
        return {
            "index": self.index,
            "tag": self.tag,
            "image_id": self.image_id,
            "records": self.rows(),
            "problems": [
                {"field": p.field, "message": p.message, "code": p.code} for p in self.problems
            ],
        }
