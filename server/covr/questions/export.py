"""Writing and reading example files: JSONL (the released COVR fields plus provenance).

One example per line, keys in a fixed order, compact separators and UTF-8: the same examples give
the same bytes (the determinism tests compare files).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from covr.questions.errors import QuestionError
from covr.questions.example import ExampleRecord

COVR_FIELDS = ("qid", "utterance", "scenes", "answer", "pattern_name", "program", "properties")
PROVENANCE_FIELDS = (
    "template",
    "paper_template",
    "answer_type",
    "source_image",
    "subgraphs",
    "structure",
    "signatures",
    "seed",
    "generator_version",
    "split",
)
FIELDS = COVR_FIELDS + PROVENANCE_FIELDS


class ExampleFileError(QuestionError):
    """An examples file is unreadable or a line is not an example; names file, line and field."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}")
        self.path = path
        self.line = line


def dumps(example: ExampleRecord) -> str:
    """One example as a canonical JSON line (without the newline)."""
    fields: Mapping[str, Any] = example  # the fixed order first, then any other field
    ordered = {k: fields[k] for k in FIELDS if k in fields}
    ordered.update({k: v for k, v in sorted(example.items()) if k not in ordered})
    return json.dumps(ordered, ensure_ascii=False, separators=(",", ":"))


def write_jsonl(examples: Iterable[ExampleRecord], path: Path) -> int:
    """Write examples (atomically: a temporary file renamed at the end); return the count."""
    tmp = path.with_name(path.name + ".tmp")
    n = 0
    with tmp.open("w", encoding="utf-8") as handle:
        for example in examples:
            handle.write(dumps(example))
            handle.write("\n")
            n += 1
    tmp.replace(path)
    return n


def read_jsonl(path: Path) -> Iterator[ExampleRecord]:
    """Examples of a JSONL file; a bad line raises :class:`ExampleFileError` naming it."""
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise ExampleFileError(str(path), 0, f"cannot be read: {exc.strerror}") from None
    with handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                example = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ExampleFileError(str(path), number, f"not JSON: {exc.msg}") from None
            if not isinstance(example, dict):
                raise ExampleFileError(str(path), number, "an example must be a JSON object")
            for key in COVR_FIELDS:
                if key not in example:
                    raise ExampleFileError(str(path), number, f"field {key!r} is missing")
            yield example


def _answer_text(answer: Any) -> str:
    """Answers as text in Parquet (one column type): ``True``/``False``, ``3``, ``red``."""
    if isinstance(answer, bool):
        return "True" if answer else "False"
    return str(answer)


PARQUET_COLUMNS: tuple[tuple[str, str], ...] = (
    ("qid", "string"),
    ("utterance", "string"),
    ("scenes", "list<string>"),
    ("answer", "string"),
    ("pattern_name", "string"),
    ("program", "string (JSON)"),
    ("properties", "list<string>"),
    ("template", "string"),
    ("paper_template", "string"),
    ("answer_type", "string"),
    ("source_image", "string"),
    ("subgraphs", "string (JSON)"),
    ("signatures", "string (JSON)"),
    ("seed", "int64"),
    ("generator_version", "string"),
    ("split", "string"),
)


def write_parquet(
    examples: Iterable[ExampleRecord],
    out_dir: Path,
    *,
    split: str | None = None,
    rows_per_file: int = 100_000,
) -> list[Path]:
    """Parquet for the Hugging Face Hub: ``out_dir/data/<split>-0000i-of-0000N.parquet`` plus a
    ``README.md`` dataset card whose YAML header has ``dataset_info`` and ``configs``.

    Nested values (program, subgraphs, signatures) are JSON strings so the schema is fixed;
    ``answer`` is text. Files of other splits already in ``data/`` are kept (one call per split).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = list(examples)
    splits = sorted({split or str(r.get("split", "train")) for r in rows}) or [split or "train"]
    schema = pa.schema(
        [
            ("qid", pa.string()),
            ("utterance", pa.string()),
            ("scenes", pa.list_(pa.string())),
            ("answer", pa.string()),
            ("pattern_name", pa.string()),
            ("program", pa.string()),
            ("properties", pa.list_(pa.string())),
            ("template", pa.string()),
            ("paper_template", pa.string()),
            ("answer_type", pa.string()),
            ("source_image", pa.string()),
            ("subgraphs", pa.string()),
            ("signatures", pa.string()),
            ("seed", pa.int64()),
            ("generator_version", pa.string()),
            ("split", pa.string()),
        ]
    )
    data_dir = out_dir / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    counts: dict[str, int] = {}
    for name in splits:
        part = [r for r in rows if (split or str(r.get("split", "train"))) == name]
        counts[name] = len(part)
        for old in data_dir.glob(f"{name}-*.parquet"):
            old.unlink()
        chunks = [part[i : i + rows_per_file] for i in range(0, len(part), rows_per_file)] or [[]]
        for i, chunk in enumerate(chunks):
            columns = {
                "qid": [r["qid"] for r in chunk],
                "utterance": [r["utterance"] for r in chunk],
                "scenes": [list(r["scenes"]) for r in chunk],
                "answer": [_answer_text(r["answer"]) for r in chunk],
                "pattern_name": [r.get("pattern_name") for r in chunk],
                "program": [json.dumps(r["program"], ensure_ascii=False) for r in chunk],
                "properties": [list(r.get("properties", [])) for r in chunk],
                "template": [r.get("template") for r in chunk],
                "paper_template": [r.get("paper_template") for r in chunk],
                "answer_type": [r.get("answer_type") for r in chunk],
                "source_image": [r.get("source_image") for r in chunk],
                "subgraphs": [json.dumps(r.get("subgraphs"), ensure_ascii=False) for r in chunk],
                "signatures": [json.dumps(r.get("signatures"), ensure_ascii=False) for r in chunk],
                "seed": [r.get("seed") for r in chunk],
                "generator_version": [r.get("generator_version") for r in chunk],
                "split": [name for _ in chunk],
            }
            table = pa.table(columns, schema=schema)
            path = data_dir / f"{name}-{i:05d}-of-{len(chunks):05d}.parquet"
            pq.write_table(table, path)
            written.append(path)
    _write_card(out_dir, counts)
    return written


def _write_card(out_dir: Path, counts: dict[str, int]) -> None:
    import pyarrow.parquet as pq

    counts = dict(counts)
    for path in sorted((out_dir / "data").glob("*.parquet")):
        name = path.name.split("-", 1)[0]
        if name not in counts:  # a split written by an earlier call
            counts[name] = sum(
                pq.read_metadata(p).num_rows for p in (out_dir / "data").glob(f"{name}-*.parquet")
            )
    all_splits = sorted(counts)
    dtype = {
        "string": "string",
        "string (JSON)": "string",
        "list<string>": "list: string",
        "int64": "int64",
    }
    lines = ["---", "configs:", "- config_name: default", "  data_files:"]
    for name in all_splits:
        lines += [f"  - split: {name}", f"    path: data/{name}-*"]
    lines += ["dataset_info:", "  features:"]
    for column, kind in PARQUET_COLUMNS:
        if kind == "list<string>":
            lines += [f"  - name: {column}", "    sequence: string"]
        else:
            lines += [f"  - name: {column}", f"    dtype: {dtype[kind]}"]
    lines += ["  splits:"]
    for name in all_splits:
        lines += [f"  - name: {name}", f"    num_examples: {counts.get(name, 0)}"]
    lines += [
        "---",
        "",
        "# COVR-style compositional visual questions",
        "",
        "Generated by the COVR graph service question engine (DESIGN §7). Each example has a",
        "question (`utterance`), up to 5 images (`scenes`, scene-graph image ids), an executable",
        "`program` (JSON) and the `answer` computed by running it; provenance columns record the",
        "template, source image, subgraphs, the edit signature of each distractor image, seed and",
        "generator version. Images are not included: `scenes` are ids of GQA / imSitu / VG images.",
        "",
    ]
    (out_dir / "README.md").write_text("\n".join(lines), encoding="utf-8")
