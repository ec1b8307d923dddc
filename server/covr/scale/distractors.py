"""``covr distractors``: positives and edit-distance-1/2 distractors, with their edit signatures,
for every subgraph of many images (or the subgraphs named per image), for training pipelines
that want hard negatives for their own images (issue 17 item 2).

The lookup is the related room's (``RelatedLookup.for_image`` through
:func:`covr.related.filters.serving_lookup`: the classifiers as the service uses them), so a
record here equals what ``covr related IMAGE --json`` and FindRelatedImages return for the same
subgraph and seed. Requests are sharded and merged like ``covr generate --ray``
(:mod:`covr.scale.runner`): in input order, the same bytes with or without Ray.

Input (``--images FILE``): one request per line, either an image id or a JSON object
``{"image_id": "gqa:1", "subgraphs": ["man[tall]", ...]}``; blank lines are skipped. Every
request is checked before any work starts (the image exists, each key parses and is a subgraph
of the image), and a bad one is named by file, line and field.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from covr.collector import batch_collection
from covr.graph import GraphStore
from covr.jsonlines import json_value
from covr.related.api import Distractor, RelatedError, RelatedResult, contains
from covr.related.lookup import RelatedLookup
from covr.scale.config import TaskSettings
from covr.scale.errors import ScaleError
from covr.scale.runner import Outcome, Say, execute
from covr.scale.shards import Parts, encode_records, run_key, shard_of
from covr.scale.tasks import Job, RelatedOptions, ShardResult, worker_for
from covr.scene.model import SceneGraph
from covr.scene.subgraph import Subgraph, SubgraphError

FORMATS = ("jsonl", "parquet")


@dataclass(frozen=True)
class Request:
    """One image and the subgraphs asked about (``None``: every subgraph of the image)."""

    image_id: str
    subgraphs: tuple[str, ...] | None = None

    def encode(self) -> str:
        return json.dumps([self.image_id, self.subgraphs])


def read_requests(path: Path) -> list[Request]:
    """The requests of an input file; :class:`ScaleError` naming file, line and field."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScaleError(str(path), f"cannot be read: {exc}") from None
    out: list[Request] = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        out.append(_parse(line, str(path), number))
    if not out:
        raise ScaleError(str(path), "holds no image id")
    return out


def _parse(line: str, path: str, number: int) -> Request:
    if not line.startswith("{"):
        return Request(line)
    where = f"{path}:{number}"
    item = json_value(line, path, number, ScaleError.of_line)
    if not isinstance(item, dict):
        raise ScaleError(where, "expected an image id or a JSON object")
    unknown = sorted(set(item) - {"image_id", "subgraphs"})
    if unknown:
        raise ScaleError(f"{where}: {unknown[0]}", "unknown field (image_id, subgraphs)")
    image_id = item.get("image_id")
    if not isinstance(image_id, str) or not image_id.strip():
        raise ScaleError(f"{where}: image_id", "must be a non-empty string")
    keys = item.get("subgraphs")
    if keys is None:
        return Request(image_id)
    if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
        raise ScaleError(f"{where}: subgraphs", "must be a non-empty list of subgraph keys")
    for n, key in enumerate(keys):
        try:
            Subgraph.from_key(key)
        except SubgraphError as exc:
            raise ScaleError(f"{where}: subgraphs[{n}]", str(exc)) from None
    return Request(image_id, tuple(keys))


def check_requests(lookup: RelatedLookup, requests: Sequence[Request], source: str) -> None:
    """Every image is stored and every named key is a subgraph of its image (before Ray)."""
    ids = list(dict.fromkeys(r.image_id for r in requests))
    found: dict[str, Any] = {}
    for start in range(0, len(ids), 500):
        try:
            found.update(lookup.scene_graphs(ids[start : start + 500]))
        except RelatedError as exc:
            raise ScaleError(source, str(exc)) from None
    for n, request in enumerate(requests):
        scene = found.get(request.image_id)
        if scene is None:
            raise ScaleError(f"{source}: request {n + 1}", f"unknown image {request.image_id!r}")
        foreign = foreign_key(scene, request.subgraphs or ())
        if foreign is not None:
            key = (request.subgraphs or ())[foreign]
            raise ScaleError(
                f"{source}: request {n + 1}",
                f"{key!r} is not a subgraph of image {request.image_id!r}",
            )


def foreign_key(scene: SceneGraph, keys: Sequence[str]) -> int | None:
    """The position of the first key that is not a subgraph of ``scene`` (``None``: all are);
    the keys parse (checked by the caller). Shared with the batch RPC's per-item check."""
    for n, key in enumerate(keys):
        if not contains(scene, Subgraph.from_key(key)):
            return n
    return None


def distractor_shard(job: Job, shard: int, items: Sequence[str]) -> ShardResult:
    """One record per request: a JSON line per subgraph with its positives and distractors."""
    assert job.related is not None
    options = job.related
    lookup = worker_for(job).lookup
    records: list[dict[str, Any]] = []
    with batch_collection():
        for item in items:
            image_id, keys = json.loads(item)
            results = image_results(lookup, image_id, keys, options)
            lines = [json.dumps(record(image_id, r), separators=(",", ":")) for r in results]
            records.append({"image": image_id, "lines": lines})
    return ShardResult(shard, encode_records(records), len(records), "", os.getpid())


def image_results(
    lookup: RelatedLookup,
    image_id: str,
    keys: Sequence[str] | None,
    options: RelatedOptions,
    *,
    presence: bool = True,
) -> list[RelatedResult]:
    """The lookup's answer for one request: a result per named subgraph (``keys``), or per
    subgraph of the image up to ``options.max_subgraphs``. ``covr distractors`` and the
    FindRelatedImagesBatch RPC both call this, so their rows cannot drift apart."""
    results: list[RelatedResult] = []
    targets: Sequence[str | None] = keys or [None]
    request = options.request(presence=presence)
    for key in targets:
        limit = options.max_subgraphs if key is None else None
        results += lookup.for_image(image_id, key, max_subgraphs=limit, request=request)
    return results


def record(image_id: str, result: RelatedResult) -> dict[str, Any]:
    """One output row: the image, the subgraph, its positives and its distractors."""
    return {
        "image_id": image_id,
        "subgraph": result.query.key,
        "split": result.split,
        "seed": result.seed,
        "positives": list(result.positives),
        "distractors": [_distractor(d) for d in result.distractors],
    }


def _distractor(d: Distractor) -> dict[str, Any]:
    return {
        "image_id": d.image_id,
        "signature": d.signature,
        "distance": d.distance,
        "subgraph": d.subgraph.key,
    }


@dataclass(frozen=True)
class Batch:
    """One ``covr distractors`` request (the CLI fills it)."""

    settings: TaskSettings
    requests: tuple[Request, ...]
    options: RelatedOptions
    out: Path
    address: str | None  # None: in this process
    shards: int
    resume: bool = False


def run(batch: Batch, say: Say, store: GraphStore | None = None) -> Outcome:
    """Look up every request (on Ray, or here over ``store``), then write the rows in input
    order."""
    if batch.shards < 1:
        raise ScaleError("shards", f"must be >= 1, got {batch.shards}")
    layout: list[list[str]] = [[] for _ in range(batch.shards)]
    for request in batch.requests:
        layout[shard_of(request.image_id, batch.shards)].append(request.encode())
    requests = hashlib.sha256("\n".join(r.encode() for r in batch.requests).encode()).hexdigest()
    description = {
        "command": "distractors",
        "options": asdict(batch.options),
        "requests": requests,
        "shards": batch.shards,
        "store": batch.settings.graph.graph_uri or str(batch.settings.graph.data_dir),
    }
    parts = Parts(batch.out, batch.shards, run_key(description))
    split = batch.options.split or ""
    job = Job(batch.settings, split, "store", related=batch.options, key=parts.run)
    outcome = execute(
        distractor_shard,
        job,
        layout,
        parts,
        batch.address,
        batch.settings.scale,
        batch.resume,
        say,
        store,
    )
    ids = [r.image_id for r in batch.requests]
    if batch.out.suffix == ".parquet":
        outcome.written = write_parquet(_rows(parts, ids), batch.out)
    else:
        outcome.written = write_jsonl(_lines(parts, ids), batch.out)
    if batch.address is None:  # nothing to resume: parts only carried the shards here
        parts.remove_all()
        outcome.parts = None
    return outcome


def _lines(parts: Parts, image_ids: Sequence[str]) -> Iterator[str]:
    for item in parts.in_order(image_ids):
        lines = item.get("lines")
        if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
            raise ScaleError(str(parts.part(shard_of(item["image"], parts.shards))), "bad lines")
        yield from lines


def _rows(parts: Parts, image_ids: Sequence[str]) -> Iterator[dict[str, Any]]:
    for line in _lines(parts, image_ids):
        yield json.loads(line)


def write_jsonl(lines: Iterator[str], out: Path) -> int:
    """The rows as JSON lines (atomically); the number written."""
    n = 0
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(line + "\n")
            n += 1
    tmp.replace(out)
    return n


def write_parquet(rows: Iterator[dict[str, Any]], out: Path) -> int:
    """The rows as one Parquet file (typed columns; distractors a list of structs)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    distractor = pa.struct(
        [
            ("image_id", pa.string()),
            ("signature", pa.string()),
            ("distance", pa.int8()),
            ("subgraph", pa.string()),
        ]
    )
    schema = pa.schema(
        [
            ("image_id", pa.string()),
            ("subgraph", pa.string()),
            ("split", pa.string()),
            ("seed", pa.int64()),
            ("positives", pa.list_(pa.string())),
            ("distractors", pa.list_(distractor)),
        ]
    )
    table = pa.Table.from_pylist(list(rows), schema=schema)
    tmp = out.with_name(out.name + ".tmp")
    pq.write_table(table, tmp)
    tmp.replace(out)
    return int(table.num_rows)
