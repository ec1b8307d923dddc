"""Dataset statistics like the paper's Table 3 and plots like its Figures 4–6.

Works on any examples file with the COVR fields (ours or the released ones): provenance fields
are used when present and inferred from ``pattern_name``/``answer`` otherwise.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

Example = dict[str, Any]
CHOICE_PATTERNS = frozenset({"choose_object", "choose_rel", "choose_attr"})


def anonymize(program: Sequence[dict[str, Any]]) -> list[Any]:
    """A program with every name replaced by ``_`` (numbers and structure kept): the paper's
    "anonymized program" used to count program structures."""
    out: list[Any] = []
    for step in program:
        args: list[Any] = []
        for arg in step["arguments"]:
            if isinstance(arg, list):
                args.append(anonymize(arg))
            elif isinstance(arg, int) and not isinstance(arg, bool):
                args.append(arg)
            else:
                args.append("_")
        out.append([step["operation"], args, list(step["dependencies"])])
    return out


def _kind(ex: Example) -> str:
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


def _operations(program: Sequence[dict[str, Any]]) -> Iterable[str]:
    for step in program:
        yield step["operation"]
        for arg in step["arguments"]:
            if isinstance(arg, list):
                yield from _operations(arg)


def table3(examples: Sequence[Example]) -> dict[str, Any]:
    """The rows of the paper's Table 3 plus a few extras (two-answer share, per template)."""
    import json

    kinds = Counter(_kind(e) for e in examples)
    answers_of: dict[str, set[str]] = defaultdict(set)
    for e in examples:
        answers_of[e["utterance"]].add(json.dumps(e["answer"]))
    n = len(examples)
    images = {i for e in examples for i in e["scenes"]}
    programs = {json.dumps(anonymize(e["program"])) for e in examples}
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
    }


def plots(examples: Sequence[Example], out_dir: Path) -> list[Path]:
    """PNG plots: top-30 answers without True/False (Fig. 4), images per question (Fig. 5),
    find/filter/with_relation occurrences per question (Fig. 6), examples per template."""
    import json

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def bar(name: str, labels: list[str], values: list[int], title: str, rotate: bool) -> None:
        fig, ax = plt.subplots(figsize=(max(6.0, 0.35 * len(labels)), 4.0))
        ax.bar(range(len(labels)), values)
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=75 if rotate else 0, ha="right" if rotate else "center")
        ax.set_title(title)
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
    bar(
        "answers_top30.png",
        [a for a, _ in answers],
        [c for _, c in answers],
        "Top-30 answers (excluding True/False)",
        True,
    )
    per_q = Counter(len(e["scenes"]) for e in examples)
    keys = sorted(per_q)
    bar(
        "images_per_question.png",
        [str(k) for k in keys],
        [per_q[k] for k in keys],
        "Images per question",
        False,
    )
    for op in ("find", "filter", "with_relation"):
        occ = Counter(sum(1 for o in _operations(e["program"]) if o == op) for e in examples)
        keys = sorted(occ)
        bar(
            f"ops_{op}.png",
            [str(k) for k in keys],
            [occ[k] for k in keys],
            f"Occurrences of {op} per question",
            False,
        )
    templates = Counter(str(e.get("template", e.get("pattern_name"))) for e in examples)
    names = sorted(templates)
    bar(
        "examples_per_template.png",
        names,
        [templates[t] for t in names],
        "Examples per template",
        True,
    )
    return written
