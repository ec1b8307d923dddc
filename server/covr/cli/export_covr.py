"""``covr export --format covr``: the released COVR layout (``covr.questions.covr_format``).

The CLI is where the two rooms meet (DESIGN §1): the question room converts records, the splits
room supplies the properties (``covr properties``, computed here for examples that carry none)
and the program / lexical split folders whose held-out examples get the ``program_N`` /
``lexical_N`` markers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from covr.cli.common import EXIT_BAD_INPUT, fail

if TYPE_CHECKING:
    from covr.questions.example import ExampleRecord

MARKED_KINDS = ("program", "lexical")


def held_out(examples: Sequence[ExampleRecord], lists: dict[str, list[str]]) -> set[str]:
    """The qids a split holds out: its test examples and the training-pool examples it
    removed from training (the released markers name both sides)."""
    from covr.splits.examples import is_train

    train = set(lists.get("train", ()))
    test = set(lists.get("test", ()))
    return {
        e["qid"] for e in examples if e["qid"] in test or (is_train(e) and e["qid"] not in train)
    }


def split_markers(
    examples: Sequence[ExampleRecord], src: Path, folders: Sequence[Path]
) -> dict[str, list[str]]:
    """qid → markers; ``N`` counts the folders of one kind in the order given. A folder that
    is not a program or lexical split, or was cut from another file, exits 2 naming it."""
    from covr.splits.builders import SplitError, file_digest, read_manifest

    digest = file_digest(src)
    seen: dict[str, int] = {}
    markers: dict[str, list[str]] = {}
    for folder in folders:
        try:
            manifest, lists = read_manifest(folder)
        except SplitError as exc:
            fail(f"--splits {folder}: {exc}", EXIT_BAD_INPUT)
        kind = manifest.get("kind")
        if kind not in MARKED_KINDS:
            fail(
                f"--splits {folder}: a {kind!r} split; the released markers exist for program "
                "and lexical splits only",
                EXIT_BAD_INPUT,
            )
        made_from = (manifest.get("inputs") or {}).get("examples_sha256")
        if made_from != digest:
            fail(
                f"--splits {folder}: cut from another examples file than {src} "
                "(inputs.examples_sha256 differs)",
                EXIT_BAD_INPUT,
            )
        number = seen.get(kind, 0)
        seen[kind] = number + 1
        for qid in held_out(examples, lists):
            markers.setdefault(qid, []).append(f"{kind}_{number}")
    return markers


def export_covr(
    examples: Sequence[ExampleRecord], src: Path, dst: Path, folders: Sequence[Path]
) -> int:
    """Write ``examples`` (read from ``src``) to ``dst`` in the released layout; the count."""
    from covr.questions.covr_format import to_released, write_released
    from covr.splits.properties import compute_properties

    markers = split_markers(examples, src, folders)
    records = (
        to_released(e, e.get("properties") or compute_properties(e), markers.get(e["qid"], ()))
        for e in examples
    )
    return write_released(records, dst)
