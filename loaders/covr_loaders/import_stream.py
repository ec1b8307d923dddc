"""Import a stream of scene graphs the way ``covr load`` writes files (the ImportSceneGraphs RPC).

The service turns each request message into a domain scene graph (or a :class:`Rejected` when
the message cannot become one) and hands the stream here: the writing rules are the loaders',
so an import behaves exactly like a load. A bad scene graph is skipped and reported while the
others are written; ``strict`` checks everything first and writes nothing when anything is
wrong; the same image id twice keeps the first copy; writing uses the batch writer
(all-or-nothing per batch, stored images replaced atomically), so importing the same scene graphs
again leaves the store unchanged; the name statistics the related-image lookups anchor on are
refreshed after anything was written (as at the end of every load, docs/related.md §2).

Memory is bounded in bytes as well as in scene graphs (issue 40 item 2): every item comes with its
size (the bytes of its request message), a strict import that would hold more than
:attr:`ImportLimits.max_bytes` is refused before anything is written, and a non-strict one writes
its pending batch early when it reaches them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from covr.errors import CovrError
from covr.graph import name_stats
from covr.graph.store import GraphStore
from covr.scene.limits import SceneLimits
from covr.scene.model import SceneGraph
from covr_loaders.writer import Batch, write_batch


@dataclass(frozen=True)
class Rejected:
    """An item of the stream that is no scene graph: the caller could not convert it."""

    field: str
    message: str


@dataclass(frozen=True)
class ImportProblem:
    """One skipped item: its position in the stream, its image id if known, field and reason."""

    index: int
    image_id: str
    field: str
    message: str


@dataclass
class ImportReport:
    """What an import did; ``problems`` lists at most ``max_problems`` (all are counted)."""

    dry_run: bool = False
    received: int = 0
    valid: int = 0
    written: int = 0
    skipped: int = 0
    nodes_created: int = 0
    relationships_created: int = 0
    problems: list[ImportProblem] = field(default_factory=list)


Item = tuple[SceneGraph | Rejected, int]
"""One item of an import stream and its size in bytes (its request message's; 0 if unknown)."""

MAX_PROBLEM_FIELD = 200
MAX_PROBLEM_MESSAGE = 500
"""Characters of a problem's field and message kept: both can quote input (a 9 MiB extras key
in a field path made the answer larger than any message)."""


@dataclass(frozen=True)
class ImportLimits:
    """Batch size of the writer, how many scene graphs (and bytes of them) an import may hold in
    memory before writing, and how many problems a report lists."""

    batch_size: int
    strict_cap: int
    max_problems: int
    scene: SceneLimits = field(default_factory=SceneLimits)
    """What one scene graph may hold: the loaders' limits (``COVR_LIMIT_*``)."""
    max_bytes: int = 0
    """Bytes of scene graphs held at once (0: no budget): a strict import beyond it is refused,
    a non-strict one writes its pending batch (``COVR_SERVICE_IMPORT_MAX_BYTES``)."""
    max_bytes_setting: str = "COVR_SERVICE_IMPORT_MAX_BYTES"
    """The setting named when :attr:`max_bytes` is exceeded."""


class ImportTooLarge(CovrError):
    """A strict import holds more scene graphs than :attr:`ImportLimits.strict_cap`, or more
    bytes of them than :attr:`ImportLimits.max_bytes`; nothing was written."""


class ImportCancelled(Exception):
    """The caller left before the stream ended: what arrived is not a complete import."""


class StrictImportRejected(CovrError):
    """A strict import met bad scene graphs; nothing was written. ``problems`` lists them."""

    def __init__(self, problems: list[ImportProblem], skipped: int) -> None:
        super().__init__("", f"strict import: {skipped} bad scene graph(s); nothing was written")
        self.problems = problems


class _Importer:
    """The state of one import: counters, the pending batch and the ids already seen."""

    def __init__(self, store: GraphStore, limits: ImportLimits, dry_run: bool) -> None:
        self.store = store
        self.limits = limits
        self.report = ImportReport(dry_run=dry_run)
        self.pending: list[SceneGraph] = []
        self.pending_bytes = 0
        self.seen: dict[str, int] = {}
        self.batches = 0

    def problem(self, index: int, image_id: str, where: str, message: str) -> None:
        """Count a skipped item and list it while the report has room."""
        self.report.skipped += 1
        if len(self.report.problems) < self.limits.max_problems:
            self.report.problems.append(
                ImportProblem(
                    index,
                    image_id,
                    _clip(where, MAX_PROBLEM_FIELD),
                    _clip(message, MAX_PROBLEM_MESSAGE),
                )
            )

    def accept(self, index: int, item: SceneGraph | Rejected) -> SceneGraph | None:
        """``item`` when it is a new valid scene graph, else ``None`` (its problem recorded)."""
        if isinstance(item, Rejected):
            self.problem(index, "", item.field, item.message)
            return None
        over = self.limits.scene.violation(item)
        if over is not None:
            self.problem(index, item.image_id[:80], f"scene_graphs[{index}].{over[0]}", over[1])
            return None
        first = self.seen.get(item.image_id)
        if first is not None:
            self.problem(
                index,
                item.image_id,
                f"scene_graphs[{index}].original_id",
                f"duplicate image id: {item.image_id} was already sent as "
                f"scene_graphs[{first}]; this copy is skipped",
            )
            return None
        self.seen[item.image_id] = index
        self.report.valid += 1
        return item

    def flush(self, graphs: list[SceneGraph]) -> None:
        """Write ``graphs`` as batches of the writer's size."""
        size = self.limits.batch_size
        for start in range(0, len(graphs), size):
            chunk = graphs[start : start + size]
            nodes, rels = write_batch(self.store, Batch.of(self.batches, chunk))
            self.batches += 1
            self.report.written += len(chunk)
            self.report.nodes_created += nodes
            self.report.relationships_created += rels


def import_scene_graphs(
    store: GraphStore,
    items: Iterable[Item],
    *,
    strict: bool,
    dry_run: bool,
    limits: ImportLimits,
    still_wanted: Callable[[], bool] = lambda: True,
) -> ImportReport:
    """Validate-and-write ``items`` (see the module text); ``still_wanted`` is asked once the
    stream ends, because a stream a client cancelled ends quietly and must not count as whole.

    Raises :class:`ImportTooLarge`, :class:`ImportCancelled` or :class:`StrictImportRejected`;
    before raising, the scene graphs held are let go (the exception's traceback keeps this
    frame alive until the caller has answered, and with it anything still referenced here).
    """
    run = _Importer(store, limits, dry_run)
    try:
        return _run(run, items, strict=strict, dry_run=dry_run, still_wanted=still_wanted)
    except BaseException:
        run.pending = []
        run.seen.clear()
        raise


def _run(
    run: _Importer,
    items: Iterable[Item],
    *,
    strict: bool,
    dry_run: bool,
    still_wanted: Callable[[], bool],
) -> ImportReport:
    limits = run.limits
    for index, (item, size) in enumerate(items):
        run.report.received += 1
        graph = run.accept(index, item)
        if graph is None or dry_run:
            continue
        run.pending.append(graph)
        run.pending_bytes += size
        if not strict:
            if len(run.pending) >= limits.batch_size or (
                limits.max_bytes and run.pending_bytes >= limits.max_bytes
            ):
                run.flush(run.pending)
                run.pending, run.pending_bytes = [], 0
        elif len(run.pending) > limits.strict_cap:
            raise ImportTooLarge(
                f"scene_graphs[{index}]",
                f"a strict import holds at most {limits.strict_cap} scene graphs; split the stream",
            )
        elif limits.max_bytes and run.pending_bytes > limits.max_bytes:
            raise ImportTooLarge(
                f"scene_graphs[{index}]",
                f"a strict import holds at most {limits.max_bytes:,} bytes of scene graphs "
                f"({limits.max_bytes_setting}); this one reached {run.pending_bytes:,} here, and "
                "nothing was written: split the stream",
            )
    if not still_wanted():
        raise ImportCancelled("the client cancelled the import; unwritten scene graphs dropped")
    if strict and run.report.skipped:
        raise StrictImportRejected(run.report.problems, run.report.skipped)
    run.flush(run.pending)
    run.pending, run.pending_bytes = [], 0
    if run.report.written:
        name_stats.refresh(store=run.store)
    return run.report


def _clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, marked with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
