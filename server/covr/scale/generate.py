"""``covr generate --ray``: question generation sharded over a Ray cluster, merged so the output
equals the single-process run's byte for byte (DESIGN §10).

Why the merge can promise that: every example depends only on the seed, its source image and the
data (covr.questions.generate), a shard keeps its images in input order, and the merge walks the
images in input order, taking each image's record from its shard's part and dropping a question
id seen before, which is what the single-process stream does (``iter_examples``). So neither the
number of shards, nor of workers or nodes, nor the order in which shards finish shows in the
output.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from covr.questions.engine import GENERATOR_VERSION
from covr.questions.generate import GenerationOptions
from covr.scale.cluster import connected, run_shards
from covr.scale.errors import ScaleError
from covr.scale.shards import Parts, plan, run_key, shard_of
from covr.scale.tasks import Job, ShardResult, generate_shard, plain_settings
from covr.settings import Settings

Say = Callable[[str], None]


@dataclass(frozen=True)
class Run:
    """One ``covr generate --ray`` request (the CLI fills it)."""

    settings: Settings
    options: GenerationOptions
    lookup: str
    image_ids: tuple[str, ...]
    out: Path
    address: str
    shards: int
    resume: bool = False


@dataclass
class Outcome:
    """What a run did: examples written, drop reasons, shards reused or run, per-node counts."""

    examples: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    reused: int = 0
    ran: int = 0
    per_node: Counter[str] = field(default_factory=Counter)
    parts: Path | None = None


def describe(run: Run) -> dict[str, Any]:
    """Everything a part's content depends on (the run key)."""
    ids = hashlib.sha256("\n".join(run.image_ids).encode("utf-8")).hexdigest()
    return {
        "command": "generate",
        "generator": GENERATOR_VERSION,
        "options": dataclasses.asdict(run.options),
        "lookup": run.lookup,
        "images": ids,
        "shards": run.shards,
        "store": run.settings.graph_uri or str(run.settings.data_dir),
    }


def pending_shards(parts: Parts, layout: list[list[str]], resume: bool, say: Say) -> list[int]:
    """The shards to run: all of them, or with ``resume`` those without a verified part (a part
    that fails its check is redone, and said so)."""
    if not resume:
        parts.remove_stale()
        return [k for k, ids in enumerate(layout) if ids]
    todo: list[int] = []
    for k, ids in enumerate(layout):
        if not ids:
            continue
        problem = parts.problem(k)
        if problem is None:
            continue
        if problem != "missing":
            say(f"shard {k}: part not reused, {problem}; running it again")
        todo.append(k)
    return todo


def generate(run: Run, say: Say) -> Outcome:
    """Run the missing shards on Ray, then merge every part into ``run.out``."""
    if run.shards < 1:
        raise ScaleError("shards", f"must be >= 1, got {run.shards}")
    layout = plan(run.image_ids, run.shards)
    parts = Parts(run.out, run.shards, run_key(describe(run)))
    todo = pending_shards(parts, layout, run.resume, say)
    outcome = Outcome(parts=parts.directory)
    outcome.reused = sum(1 for ids in layout if ids) - len(todo)
    if outcome.reused:
        say(f"{outcome.reused} shard(s) already written and verified: not run again")
    if todo:
        job = Job(
            plain_settings(run.settings), run.options.split, run.lookup, run.options, parts.run
        )

        def written(result: ShardResult) -> None:
            parts.write(result.shard, result.data, result.images)
            outcome.ran += 1
            say(
                f"shard {result.shard}: {result.images} image(s) on node {result.node[:8]} "
                f"({outcome.ran}/{len(todo)})"
            )

        with connected(run.address, run.settings):
            outcome.per_node = run_shards(
                generate_shard, job, [(k, layout[k]) for k in todo], run.settings, written
            )
    outcome.examples = merge(parts, run.image_ids, run.out, outcome.dropped)
    return outcome


def merge(parts: Parts, image_ids: Sequence[str], out: Path, dropped: Counter[str]) -> int:
    """Write the examples of every image in input order, each question id once (atomically);
    add the drop reasons to ``dropped``; return the number written."""
    readers: dict[int, Iterator[dict[str, Any]]] = {}
    seen: set[str] = set()
    n = 0
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for image_id in image_ids:
            shard = shard_of(image_id, parts.shards)
            if shard not in readers:
                readers[shard] = parts.records(shard)
            qids, lines, reasons = _record(parts, shard, next(readers[shard], None), image_id)
            dropped.update(reasons)
            for qid, line in zip(qids, lines, strict=True):
                if qid in seen:
                    dropped["duplicate-qid"] += 1
                    continue
                seen.add(qid)
                handle.write(line)
                handle.write("\n")
                n += 1
    tmp.replace(out)
    return n


def _record(
    parts: Parts, shard: int, record: dict[str, Any] | None, image_id: str
) -> tuple[list[str], list[str], dict[str, int]]:
    """An image's question ids, example lines and drop reasons from its part, checked."""
    where = str(parts.part(shard))
    if record is None or record["image"] != image_id:
        found = "the end of the file" if record is None else repr(record["image"])
        raise ScaleError(where, f"expected the record of image {image_id!r}, found {found}")
    qids, lines, reasons = record.get("qids"), record.get("examples"), record.get("dropped")
    if not (isinstance(qids, list) and isinstance(lines, list) and len(qids) == len(lines)):
        raise ScaleError(where, f"image {image_id!r}: qids and examples must be equal-length lists")
    if not isinstance(reasons, dict):
        raise ScaleError(where, f"image {image_id!r}: dropped must be an object")
    return qids, lines, reasons
