"""Running the pending shards of a batch run and writing their parts (both batch commands).

With an address the shards go to Ray (:mod:`covr.scale.cluster`); without one they run here,
one after another, through the same task function, so the two paths write the same parts.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from covr.graph import GraphStore
from covr.scale.cluster import connected, run_shards
from covr.scale.config import ScaleSettings
from covr.scale.shards import Parts
from covr.scale.tasks import Job, ShardResult, in_process

Say = Callable[[str], None]
Task = Callable[[Job, int, Sequence[str]], ShardResult]


@dataclass
class Outcome:
    """What a run did: records written, drop reasons (generation), shards reused or run, and
    how many shards each node finished."""

    written: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    reused: int = 0
    ran: int = 0
    per_node: Counter[str] = field(default_factory=Counter)
    parts: Path | None = None
    forms: dict[str, Any] = field(default_factory=dict)
    spread: dict[str, Any] = field(default_factory=dict)
    """Generation: the most-shown image against the image share (``FormQuota.spread``)."""
    """Generation: per form, examples wanted, made and why dropped (``FormQuota.report``)."""


def pending_shards(
    parts: Parts, layout: Sequence[Sequence[str]], resume: bool, say: Say
) -> list[int]:
    """The shards to run: all of them, or with ``resume`` those without a verified part (a part
    that fails its check is redone, and said so)."""
    if not resume:
        parts.remove_stale()
        return [k for k, items in enumerate(layout) if items]
    todo: list[int] = []
    for k, items in enumerate(layout):
        if not items:
            continue
        problem = parts.problem(k)
        if problem is None:
            continue
        if problem != "missing":
            say(f"shard {k}: part not reused, {problem}; running it again")
        todo.append(k)
    return todo


def execute(
    task: Task,
    job: Job,
    layout: Sequence[Sequence[str]],
    parts: Parts,
    address: str | None,
    settings: ScaleSettings,
    resume: bool,
    say: Say,
    store: GraphStore | None = None,
) -> Outcome:
    """Run every shard without a verified part (``layout[k]``: shard k's items) and write each
    part as soon as its shard finishes, so an interrupted run keeps what was done. Without an
    address the shards run here over ``store`` (the driver's connection)."""
    todo = pending_shards(parts, layout, resume, say)
    outcome = Outcome(parts=parts.directory)
    outcome.reused = sum(1 for items in layout if items) - len(todo)
    if outcome.reused:
        say(f"{outcome.reused} shard(s) already written and verified: not run again")

    def written(result: ShardResult) -> None:
        parts.write(result.shard, result.data, result.images)
        outcome.ran += 1
        where = f"node {result.node[:8]}" if result.node else "this process"
        elapsed = time.monotonic() - started
        say(
            f"shard {result.shard}: {result.images} image(s) on {where} "
            f"({outcome.ran}/{len(todo)}, {elapsed:.0f} s)"
        )

    if not todo:
        return outcome
    started = time.monotonic()
    if address is None:
        if store is None:
            raise ValueError("without a Ray address the shards need the driver's store")
        with in_process(job, store):
            for k in todo:
                written(task(job, k, layout[k]))
        return outcome
    with connected(address, settings):
        outcome.per_node = run_shards(task, job, [(k, layout[k]) for k in todo], settings, written)
    return outcome
