"""Dataset statistics like the paper's Table 3 and plots like its Figures 4–6.

Works on any examples file with the COVR fields (ours or the released ones): provenance fields
are used when present and inferred from ``pattern_name``/``answer`` otherwise.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from covr.questions.example import ExampleRecord
from covr.scene.program import anonymize_program, structure_key

CHOICE_PATTERNS = frozenset({"choose_object", "choose_rel", "choose_attr"})


anonymize = anonymize_program
"""The paper's "anonymized program": names replaced by one placeholder, decided by the
argument's position. The project's one rule (:mod:`covr.scene.program`), the same the program
split holds out, so "unique anonymized programs" counts the program split's structures."""


def _kind(ex: ExampleRecord) -> str:
    answer_type = ex.get("answer_type")
    if answer_type is None:
        answer = ex["answer"]
        if isinstance(answer, bool) or answer in ("True", "False", "true", "false"):
            answer_type = "bool"
        elif isinstance(answer, int):
            answer_type = "number"
        else:
            answer_type = "name"
    if answer_type == "bool":
        return "tf"
    if answer_type == "number":
        return "how_many"
    if ex.get("pattern_name") in CHOICE_PATTERNS:
        return "x_or_y"
    return "open"


def _operations(program: Sequence[Mapping[str, Any]]) -> Iterable[str]:
    for step in program:
        yield step["operation"]
        for arg in step["arguments"]:
            if isinstance(arg, list):
                yield from _operations(arg)


def table3(examples: Sequence[ExampleRecord]) -> dict[str, Any]:
    """The rows of the paper's Table 3 plus a few extras (two-answer share, per template)."""
    import json

    kinds = Counter(_kind(e) for e in examples)
    answers_of: dict[str, set[str]] = defaultdict(set)
    for e in examples:
        answers_of[e["utterance"]].add(json.dumps(e["answer"]))
    n = len(examples)
    images = {i for e in examples for i in e["scenes"]}
    programs = {structure_key(e["program"]) for e in examples}
    return {
        "total questions": n,
        "unique questions": len(answers_of),
        "unique answers": len({json.dumps(e["answer"]) for e in examples}),
        "unique images": len(images),
        "unique anonymized programs": len(programs),
        "True/False questions": kinds["tf"],
        '"X or Y" questions': kinds["x_or_y"],
        '"how many" questions': kinds["how_many"],
        "open questions": kinds["open"],
        "avg words per question": round(
            sum(len(e["utterance"].split()) for e in examples) / max(1, n), 2
        ),
        "avg images per question": round(sum(len(e["scenes"]) for e in examples) / max(1, n), 2),
        "questions with two answers (share of texts)": round(
            sum(len(a) >= 2 for a in answers_of.values()) / max(1, len(answers_of)), 3
        ),
        "per template": dict(
            sorted(Counter(str(e.get("template", e.get("pattern_name"))) for e in examples).items())
        ),
        **image_spread(examples),
    }


MOST_SHOWN = 5
"""How many of the most-shown images ``covr stats`` lists."""


def image_spread(examples: Sequence[ExampleRecord]) -> dict[str, Any]:
    """How evenly the examples show their images (issue 36): the most-shown images with the
    share of examples each is in, and the share of all image slots the top five fill. A model
    that learns which image ids go with which answers has a shortcut when few images carry
    many examples."""
    n = len(examples)
    per_example = Counter(i for e in examples for i in set(e["scenes"]))
    slots = Counter(i for e in examples for i in e["scenes"])
    top = per_example.most_common(MOST_SHOWN)
    return {
        "most-shown images (share of questions)": {i: round(k / max(1, n), 4) for i, k in top},
        "top-5 images' share of image slots": round(
            sum(k for _, k in slots.most_common(MOST_SHOWN)) / max(1, sum(slots.values())), 4
        ),
    }


def integer_categories(counts: Counter[int]) -> list[tuple[str, int]]:
    """Every integer from 1 (0 when present) to the largest key, with zero for missing ones."""
    keys = range(min(1, min(counts, default=1)), max(counts, default=0) + 1)
    return [(str(k), counts.get(k, 0)) for k in keys]


def plots(examples: Sequence[ExampleRecord], out_dir: Path) -> list[Path]:
    """PNG plots: top-30 answers without True/False (Fig. 4), images per question (Fig. 5),
    find/filter/with_relation occurrences per question (Fig. 6), examples per template."""
    import json

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def bar(name: str, counts: Counter[Any] | list[tuple[str, int]], title: str, x: str) -> None:
        """One chart; a Counter of integers gets every integer from 1 (or 0) to its largest
        key as a category, so empty categories show as zero bars instead of vanishing."""
        if isinstance(counts, Counter):
            pairs, rotate = integer_categories(counts), False
        else:
            pairs, rotate = counts, True
        labels = [k for k, _ in pairs]
        fig, ax = plt.subplots(figsize=(max(6.0, 0.35 * len(labels)), 4.5))
        ax.bar(range(len(labels)), [v for _, v in pairs])
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=60 if rotate else 0, ha="right" if rotate else "center")
        ax.set_title(title)
        ax.set_xlabel(x)
        ax.set_ylabel("questions")
        fig.tight_layout()
        path = out_dir / name
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)

    answers = Counter(
        json.dumps(e["answer"]).strip('"')
        for e in examples
        if not isinstance(e["answer"], bool) and e["answer"] not in ("True", "False")
    ).most_common(30)
    bar("answers_top30.png", answers, "Top-30 answers (excluding True/False)", "answer")
    per_q = Counter(len(e["scenes"]) for e in examples)
    bar("images_per_question.png", per_q, "Images per question", "images in the question")
    for op in ("find", "filter", "with_relation"):
        occ = Counter(sum(1 for o in _operations(e["program"]) if o == op) for e in examples)
        bar(f"ops_{op}.png", occ, f"Occurrences of {op} per question", f"{op} operations")
    templates = Counter(str(e.get("template", e.get("pattern_name"))) for e in examples)
    bar(
        "examples_per_template.png",
        sorted(templates.items()),
        "Examples per template",
        "template",
    )
    return written
