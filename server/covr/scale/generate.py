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
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from covr.questions.engine import GENERATOR_VERSION
from covr.questions.generate import GenerationOptions
from covr.questions.quota import FormQuota, by_text
from covr.questions.templates import select_templates
from covr.scale.config import TaskSettings
from covr.scale.errors import ScaleError
from covr.scale.runner import Outcome, Say, execute
from covr.scale.shards import Parts, plan, run_key, shard_of
from covr.scale.tasks import Job, generate_shard


@dataclass(frozen=True)
class Run:
    """One ``covr generate --ray`` request (the CLI fills it)."""

    settings: TaskSettings
    options: GenerationOptions
    lookup: str
    image_ids: tuple[str, ...]
    out: Path
    address: str
    shards: int
    resume: bool = False


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
        "store": run.settings.graph.graph_uri or str(run.settings.graph.data_dir),
    }


def generate(run: Run, say: Say) -> Outcome:
    """Run the missing shards on Ray, then merge every part into ``run.out``."""
    if run.shards < 1:
        raise ScaleError("shards", f"must be >= 1, got {run.shards}")
    layout = plan(run.image_ids, run.shards)
    parts = Parts(run.out, run.shards, run_key(describe(run)))
    job = Job(run.settings, run.options.split, run.lookup, options=run.options, key=parts.run)
    outcome = execute(
        generate_shard, job, layout, parts, run.address, run.settings.scale, run.resume, say
    )
    forms = [t.name for t in select_templates(run.options.templates)]
    quota = FormQuota.for_run(run.options)
    shown: Counter[str] = Counter()
    outcome.written = merge(parts, run.image_ids, run.out, outcome.dropped, quota, shown)
    outcome.spread = quota.spread(shown, outcome.written)
    outcome.forms = quota.report(forms, outcome.dropped)
    return outcome


def merge(
    parts: Parts,
    image_ids: Sequence[str],
    out: Path,
    dropped: Counter[str],
    quota: FormQuota | None = None,
    shown: Counter[str] | None = None,
) -> int:
    """Write the examples of every image in input order, each question id once and each form
    within its quota (``--per-template``, applied here exactly as ``iter_examples`` applies it),
    atomically; add the drop reasons to ``dropped`` and the images of what is written to
    ``shown``; return the number written."""
    quota = quota if quota is not None else FormQuota(None)
    kept = _admitted(parts, image_ids, dropped, quota)
    n = 0
    tmp = out.with_name(out.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        for record in parts.in_order(image_ids):
            qids, lines, _ = _fields(parts, record)
            for qid, line in zip(qids, lines, strict=True):
                if kept.get(qid) == record["image"]:
                    if shown is not None:
                        shown.update(set(json.loads(line)["scenes"]))
                    handle.write(line)
                    handle.write("\n")
                    n += 1
    tmp.replace(out)
    return n


def _admitted(
    parts: Parts, image_ids: Sequence[str], dropped: Counter[str], quota: FormQuota
) -> dict[str, str]:
    """The question ids the run keeps, each with the source image whose record keeps it: each once, each text within its form's quota and the
    image cap, in input order, as ``iter_examples`` decides (a first pass over the parts that
    holds only ids, forms and images, so that the image cap's final trim does not hold every
    example line of a large run in memory)."""
    seen: set[str] = set()
    held: list[list[dict[str, Any]]] = []
    for record in parts.in_order(image_ids):
        _, lines, reasons = _fields(parts, record)
        dropped.update(reasons)
        for text in by_text(json.loads(line) for line in lines):
            new = [e for e in text if e["qid"] not in seen]
            if len(new) < len(text):
                dropped["duplicate-qid"] += len(text) - len(new)
            if quota.admit(new):  # counts every form's examples too
                seen.update(e["qid"] for e in new)
                held.append([{k: e[k] for k in KEPT_FIELDS} | {"at": record["image"]} for e in new])
    return {e["qid"]: e["at"] for text in quota.select(held) for e in text}


KEPT_FIELDS = ("qid", "template", "scenes")
"""What the merge's first pass holds of an example (the quota and the image cap need no more)."""


def _fields(parts: Parts, record: dict[str, Any]) -> tuple[list[str], list[str], dict[str, int]]:
    """An image's question ids, example lines and drop reasons from its record, checked."""
    image_id = record["image"]
    where = str(parts.part(shard_of(image_id, parts.shards)))
    qids, lines, reasons = record.get("qids"), record.get("examples"), record.get("dropped")
    if not (isinstance(qids, list) and isinstance(lines, list) and len(qids) == len(lines)):
        raise ScaleError(where, f"image {image_id!r}: qids and examples must be equal-length lists")
    if not isinstance(reasons, dict):
        raise ScaleError(where, f"image {image_id!r}: dropped must be an object")
    return qids, lines, reasons
