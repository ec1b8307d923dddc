"""Compositional splits (paper §3, arXiv §4): zero-shot, few-shot, program and lexical splits.

Every split starts from the source dataset's own split (paper: "all compositional splits are
based on the original training/validation splits ... to guarantee that no image appears in both
the training set and any of the test sets"): examples whose images come from the source *train*
split form the training pool, all others the evaluation pool, and a split only *removes*
examples from either. The builders refuse input where one image is in both pools.

A split is a :class:`Split`: lists of qids (``train``, ``test``, and ``iid_test`` = the
evaluation examples without the held-out phenomenon, used for early stopping and for the
systematicity gap) plus a manifest with the counts (``filtered`` = the "Filtered" column of
Tables 7–8), the definition and the seed. The same input and seed give the same split.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from covr.scene.program import program_names, structure_key
from covr.splits.examples import ExampleRecord, Step, is_train, iter_steps, source_split
from covr.splits.properties import compute_properties

SPLIT_FORMAT_VERSION = 1
PROPERTY_ALIASES = {"HAS-QUANT-COMP": "HAS-QUANT-COMPSCOPE", "HAS-RM/V/C": "RM/V/C"}


class SplitError(ValueError):
    """A split cannot be built from this input (the message says which example or setting)."""


@dataclass
class Split:
    """One split: qid lists and everything a manifest records."""

    name: str
    kind: str
    definition: dict[str, Any]
    seed: int | None
    train: list[str]
    test: list[str]
    iid_test: list[str]
    counts: dict[str, int]
    extra: dict[str, Any] = field(default_factory=dict)

    def manifest(self) -> dict[str, Any]:
        return {
            "format_version": SPLIT_FORMAT_VERSION,
            "name": self.name,
            "kind": self.kind,
            "definition": self.definition,
            "seed": self.seed,
            "counts": self.counts,
            "files": {"train": "train.txt", "test": "test.txt", "iid_test": "iid_test.txt"},
            **self.extra,
        }


# --- pools -------------------------------------------------------------------------------------


def pools(examples: Sequence[ExampleRecord]) -> tuple[list[ExampleRecord], list[ExampleRecord]]:
    """(training pool, evaluation pool) by source split; an image in both is an error."""
    train = [e for e in examples if is_train(e)]
    evaluation = [e for e in examples if not is_train(e)]
    train_images: dict[str, str] = {}
    for e in train:
        for image in e["scenes"]:
            train_images.setdefault(image, e["qid"])
    for e in evaluation:
        for image in e["scenes"]:
            if image in train_images:
                raise SplitError(
                    f"image {image!r} is in training example {train_images[image]!r} and in "
                    f"evaluation example {e['qid']!r} (provenance.split "
                    f"{source_split(e)!r}): splits need disjoint images"
                )
    if not train:
        raise SplitError(
            "no training examples: no example's split is 'train' (the split of its images, "
            "which covr generate --split writes); generate some with --split train and put "
            "them in the same file"
        )
    if not evaluation:
        raise SplitError(
            "no evaluation examples: every example's split is 'train'; generate some with "
            "--split val and put them in the same file"
        )
    return train, evaluation


def properties_of(example: ExampleRecord) -> frozenset[str]:
    """The example's properties (computed when the file does not carry them), case-folded."""
    props = example.get("properties") or compute_properties(example)
    return frozenset(p.casefold() for p in props)


# --- property expressions ----------------------------------------------------------------------


def parse_expression(text: str) -> list[list[str]]:
    """``A&B|C`` → [[A, B], [C]]: a union (``|``, ``∪``, ``,``) of intersections (``&``, ``∩``)."""
    normalized = text.replace("∪", "|").replace(",", "|").replace("∩", "&")
    clauses: list[list[str]] = []
    for clause in normalized.split("|"):
        terms = [t.strip() for t in clause.split("&")]
        if not clause.strip() or any(not t for t in terms):
            raise SplitError(f"property expression {text!r}: empty term")
        clauses.append([PROPERTY_ALIASES.get(t.upper(), t) for t in terms])
    return clauses


def predicate(text: str) -> Callable[[ExampleRecord], bool]:
    """A test ``example -> bool`` for a property expression (case-insensitive names)."""
    clauses = [frozenset(t.casefold() for t in c) for c in parse_expression(text)]

    def matches(example: ExampleRecord) -> bool:
        props = properties_of(example)
        return any(clause <= props for clause in clauses)

    return matches


def _check_known(text: str, examples: Sequence[ExampleRecord]) -> None:
    seen: set[str] = set()
    for e in examples:
        seen |= properties_of(e)
    unknown = sorted(
        t for clause in parse_expression(text) for t in clause if t.casefold() not in seen
    )
    if unknown:
        raise SplitError(
            f"property expression {text!r}: no example has {', '.join(unknown)} "
            "(run 'covr properties' first, or check the spelling)"
        )


def _qids(examples: Iterable[ExampleRecord]) -> list[str]:
    return [e["qid"] for e in examples]


def split_counts(
    train_pool: Sequence[ExampleRecord],
    eval_pool: Sequence[ExampleRecord],
    train: Sequence[Any],
    test: Sequence[Any],
    iid: Sequence[Any],
    **extra: int,
) -> dict[str, int]:
    """The ``counts`` every split manifest records (pools, what filtering removed, the three
    sets), plus the builder's own ``extra`` counts; one place, so every manifest agrees."""
    return {
        "train_pool": len(train_pool),
        "eval_pool": len(eval_pool),
        "filtered": len(train_pool) - len(train),
        "train": len(train),
        "test": len(test),
        "iid_test": len(iid),
        **extra,
    }


# --- zero-shot and few-shot ----------------------------------------------------------------------


def zero_shot(
    examples: Sequence[ExampleRecord], expression: str, *, name: str | None = None
) -> Split:
    """Hold out every training example matching the expression; test on exactly those."""
    train_pool, eval_pool = pools(examples)
    _check_known(expression, examples)
    match = predicate(expression)
    train = [e for e in train_pool if not match(e)]
    test = [e for e in eval_pool if match(e)]
    iid = [e for e in eval_pool if not match(e)]
    if not test:
        raise SplitError(f"zero-shot {expression!r}: no evaluation example has it")
    return Split(
        name=name or f"zero-shot-{_slug(expression)}",
        kind="zero-shot",
        definition={"properties": expression, "clauses": parse_expression(expression)},
        seed=None,
        train=_qids(train),
        test=_qids(test),
        iid_test=_qids(iid),
        counts=split_counts(train_pool, eval_pool, train, test, iid),
    )


def few_shot(
    examples: Sequence[ExampleRecord],
    expression: str,
    keep: int,
    *,
    seed: int = 0,
    name: str | None = None,
) -> Split:
    """Like zero-shot, but M (``keep``) training examples with the property stay (seeded draw)."""
    if keep < 0:
        raise SplitError(f"few-shot: keep must be >= 0, got {keep}")
    train_pool, eval_pool = pools(examples)
    _check_known(expression, examples)
    match = predicate(expression)
    with_property = [e for e in train_pool if match(e)]
    if keep > len(with_property):
        raise SplitError(
            f"few-shot {expression!r}: keep={keep} but only {len(with_property)} training "
            "examples have it"
        )
    kept = {e["qid"] for e in random.Random(seed).sample(with_property, keep)}
    train = [e for e in train_pool if not match(e) or e["qid"] in kept]
    test = [e for e in eval_pool if match(e)]
    iid = [e for e in eval_pool if not match(e)]
    if not test:
        raise SplitError(f"few-shot {expression!r}: no evaluation example has it")
    return Split(
        name=name or f"few-shot-{_slug(expression)}-{keep}",
        kind="few-shot",
        definition={
            "properties": expression,
            "clauses": parse_expression(expression),
            "keep": keep,
        },
        seed=seed,
        train=_qids(train),
        test=_qids(test),
        iid_test=_qids(iid),
        counts=split_counts(train_pool, eval_pool, train, test, iid),
    )


# --- program split --------------------------------------------------------------------------------


def program_split(
    examples: Sequence[ExampleRecord],
    *,
    holdout: float = 0.2,
    seed: int = 0,
    name: str | None = None,
) -> Split:
    """Hold out a seeded ``holdout`` share of the anonymized program structures.

    A structure is :func:`covr.scene.program.structure_key`: names replaced by one placeholder
    by their position (``find hair`` is ``find X``), so no structure is in training and test."""
    if not 0 < holdout < 1:
        raise SplitError(f"program split: holdout must be in (0, 1), got {holdout}")
    train_pool, eval_pool = pools(examples)
    keys = {e["qid"]: structure_key(e["program"]) for e in examples}
    structures = sorted(set(keys.values()))
    rng = random.Random(seed)
    rng.shuffle(structures)
    count = max(1, round(holdout * len(structures)))
    held = set(structures[:count])
    train = [e for e in train_pool if keys[e["qid"]] not in held]
    test = [e for e in eval_pool if keys[e["qid"]] in held]
    iid = [e for e in eval_pool if keys[e["qid"]] not in held]
    if not test:
        raise SplitError(
            f"program split seed {seed}: no evaluation example has a held-out structure"
        )
    test_ops = {s["operation"] for e in test for s in _steps(e)}
    train_ops = {s["operation"] for e in train for s in _steps(e)}
    return Split(
        name=name or f"program-seed{seed}",
        kind="program",
        definition={"holdout": holdout, "structures": len(structures), "held_out": count},
        seed=seed,
        train=_qids(train),
        test=_qids(test),
        iid_test=_qids(iid),
        counts=split_counts(train_pool, eval_pool, train, test, iid),
        extra={
            "held_out_structures": sorted(held),
            "unseen_operators_in_test": sorted(test_ops - train_ops),
        },
    )


def _steps(example: ExampleRecord) -> Iterable[Step]:
    return iter_steps(example["program"])


# --- lexical split ----------------------------------------------------------------------------------


def lexical_split(
    examples: Sequence[ExampleRecord],
    *,
    pairs: int = 65,
    min_train: int = 50,
    min_eval: int = 15,
    seed: int = 0,
    name: str | None = None,
) -> Split:
    """Hold out pairs of names never seen together in a training program (arXiv §4).

    Candidate pairs co-occur in some evaluation program and both names occur in at least
    ``min_eval`` evaluation examples; pairs are drawn in seeded order and kept while every name
    of a kept pair still occurs in at least ``min_train`` remaining training examples.
    """
    if pairs < 1:
        raise SplitError(f"lexical split: pairs must be >= 1, got {pairs}")
    train_pool, eval_pool = pools(examples)
    train_names = [program_names(e["program"]) for e in train_pool]
    eval_names = [program_names(e["program"]) for e in eval_pool]
    train_count: Counter[str] = Counter(n for names in train_names for n in names)
    eval_count: Counter[str] = Counter(n for names in eval_names for n in names)
    frequent = {
        n for n, c in train_count.items() if c >= min_train and eval_count.get(n, 0) >= min_eval
    }
    candidates: set[tuple[str, str]] = set()
    for names in eval_names:
        candidates.update(combinations(sorted(names & frequent), 2))
    by_pair: defaultdict[tuple[str, str], list[int]] = defaultdict(list)
    for index, names in enumerate(train_names):
        for pair in combinations(sorted(names & frequent), 2):
            if pair in candidates:
                by_pair[pair].append(index)
    order = sorted(candidates)
    random.Random(seed).shuffle(order)
    removed: set[int] = set()
    counts = Counter(train_count)
    held: list[tuple[str, str]] = []
    guarded: set[str] = set()
    for pair in order:
        if len(held) == pairs:
            break
        new = [i for i in by_pair.get(pair, ()) if i not in removed]
        loss: Counter[str] = Counter(n for i in new for n in train_names[i])
        if any(counts[n] - loss.get(n, 0) < min_train for n in guarded | set(pair)):
            continue
        held.append(pair)
        guarded.update(pair)
        removed.update(new)
        counts.subtract(loss)
    if not held:
        raise SplitError(
            f"lexical split seed {seed}: no name pair satisfies min_train={min_train} and "
            f"min_eval={min_eval}"
        )
    held_set = set(held)

    def has_pair(names: set[str]) -> bool:
        return any(p in held_set for p in combinations(sorted(names & guarded), 2))

    train = [e for i, e in enumerate(train_pool) if i not in removed]
    test = [e for e, names in zip(eval_pool, eval_names, strict=True) if has_pair(names)]
    iid = [e for e, names in zip(eval_pool, eval_names, strict=True) if not has_pair(names)]
    return Split(
        name=name or f"lexical-seed{seed}",
        kind="lexical",
        definition={
            "pairs": pairs,
            "min_train": min_train,
            "min_eval": min_eval,
            "candidates": len(candidates),
        },
        seed=seed,
        train=_qids(train),
        test=_qids(test),
        iid_test=_qids(iid),
        counts=split_counts(train_pool, eval_pool, train, test, iid, pairs=len(held)),
        extra={"held_out_pairs": [list(p) for p in held]},
    )


# --- output -------------------------------------------------------------------------------------------


def _slug(text: str) -> str:
    out = "".join(c.lower() if c.isalnum() else "-" for c in text)
    return "-".join(p for p in out.split("-") if p) or "split"


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_split(
    split: Split, out_dir: Path, *, inputs: Mapping[str, str] | None = None, overwrite: bool = False
) -> Path:
    """Write ``<out_dir>/<name>/{train,test,iid_test}.txt`` and ``manifest.json`` all at once.

    The files go to a temporary directory renamed into place, so a failed run leaves nothing
    half-written; an existing split directory is replaced only with ``overwrite``.
    """
    target = out_dir / split.name
    if target.exists() and not overwrite:
        raise SplitError(f"{target} exists (use --overwrite to replace it)")
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{split.name}.", dir=out_dir))
    try:
        for key, ids in (
            ("train", split.train),
            ("test", split.test),
            ("iid_test", split.iid_test),
        ):
            (tmp / f"{key}.txt").write_text("".join(f"{q}\n" for q in ids), encoding="utf-8")
        manifest = split.manifest()
        if inputs:
            manifest["inputs"] = dict(inputs)
        (tmp / "manifest.json").write_text(
            json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
            encoding="utf-8",
        )
        if target.exists():
            shutil.rmtree(target)
        tmp.rename(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def read_manifest(path: Path) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """A split's manifest and its id lists; ``path`` is the manifest file or its directory."""
    manifest_path = path / "manifest.json" if path.is_dir() else path
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SplitError(f"{manifest_path}: cannot read: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise SplitError(f"{manifest_path}: invalid JSON: {exc.msg}") from exc
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise SplitError(f"{manifest_path}: files: missing (not a split manifest)")
    lists: dict[str, list[str]] = {}
    for key, file_name in manifest["files"].items():
        file_path = manifest_path.parent / str(file_name)
        try:
            text = file_path.read_text(encoding="utf-8")
        except OSError as exc:
            raise SplitError(f"{file_path}: cannot read: {exc.strerror or exc}") from exc
        lists[key] = [line for line in text.splitlines() if line]
    return manifest, lists
