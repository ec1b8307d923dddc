"""Examples as Parquet files with a dataset card, laid out as dataset hubs expect.

``out_dir/data/<split>-0000i-of-0000N.parquet`` plus ``out_dir/README.md`` whose YAML header
declares the features, the splits (with ``num_bytes`` and ``num_examples``: without them
``datasets.load_dataset`` warns that the card is malformed), a licence and a citation.

Every field of an example survives the trip (issue 20): nested values (program, subgraphs,
structure, signatures) are JSON strings so the schema is fixed; the answer keeps its type in
one typed column per kind (``answer_bool``, ``answer_number``, ``answer_text``) beside the
display text in ``answer``; fields this schema does not know go into ``extra`` (JSON).
:func:`read_parquet` turns rows back into the examples that were written.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from covr.questions.example import ExampleRecord

# column name, card dtype (a list is "sequence: string"), how the value is stored
COLUMNS: tuple[tuple[str, str], ...] = (
    ("qid", "string"),
    ("utterance", "string"),
    ("scenes", "list"),
    ("answer", "string"),
    ("answer_bool", "bool"),
    ("answer_number", "float64"),
    ("answer_text", "string"),
    ("pattern_name", "string"),
    ("program", "json"),
    ("properties", "list"),
    ("template", "string"),
    ("paper_template", "string"),
    ("answer_type", "string"),
    ("source_image", "string"),
    ("subgraphs", "json"),
    ("structure", "json"),
    ("signatures", "json"),
    ("seed", "int64"),
    ("generator_version", "string"),
    ("split", "string"),
    ("extra", "json"),
)
_DERIVED = {"answer_bool", "answer_number", "answer_text", "extra"}
_KNOWN = {name for name, _ in COLUMNS} - _DERIVED

CITATION = """@inproceedings{bogin-etal-2021-covr,
    title = "{COVR}: A Test-Bed for Visually Grounded Compositional Generalization with Real
             Images",
    author = "Bogin, Ben and Gupta, Shivanshu and Gardner, Matt and Berant, Jonathan",
    booktitle = "Proceedings of the 2021 Conference on Empirical Methods in Natural Language
                 Processing",
    year = "2021",
}"""


def _schema() -> Any:
    import pyarrow as pa

    kinds = {
        "string": pa.string(),
        "json": pa.string(),
        "list": pa.list_(pa.string()),
        "bool": pa.bool_(),
        "float64": pa.float64(),
        "int64": pa.int64(),
    }
    return pa.schema([(name, kinds[kind]) for name, kind in COLUMNS])


def _answer_text(answer: Any) -> str:
    """The display text: ``True``/``False``, ``3``, ``red`` (what viewers show)."""
    if isinstance(answer, bool):
        return "True" if answer else "False"
    return str(answer)


def _row(example: Mapping[str, Any], split: str) -> dict[str, Any]:
    answer = example["answer"]
    extra = {k: v for k, v in example.items() if k not in _KNOWN}
    row: dict[str, Any] = {}
    for name, kind in COLUMNS:
        if name in _DERIVED:
            continue
        value = example.get(name)
        if kind == "json":
            row[name] = None if value is None else json.dumps(value, ensure_ascii=False)
        elif kind == "list":
            row[name] = None if value is None else [str(v) for v in value]
        else:
            row[name] = value
    row["split"] = split
    row["answer"] = _answer_text(answer)
    row["answer_bool"] = answer if isinstance(answer, bool) else None
    is_number = isinstance(answer, int | float) and not isinstance(answer, bool)
    row["answer_number"] = float(answer) if is_number else None
    row["answer_text"] = answer if isinstance(answer, str) else None
    row["extra"] = json.dumps(extra, ensure_ascii=False) if extra else None
    return row


def write_parquet(
    examples: Iterable[ExampleRecord],
    out_dir: Path,
    *,
    split: str | None = None,
    rows_per_file: int = 100_000,
) -> list[Path]:
    """Write the examples (grouped by their ``split``, or all as ``split``) and the card.

    Files of other splits already in ``data/`` are kept (one call per split), and the card
    counts them too.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = list(examples)
    splits = sorted({split or str(r.get("split", "train")) for r in rows}) or [split or "train"]
    data_dir = out_dir / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name in splits:
        part = [_row(r, name) for r in rows if (split or str(r.get("split", "train"))) == name]
        for old in data_dir.glob(f"{name}-*.parquet"):
            old.unlink()
        chunks = [part[i : i + rows_per_file] for i in range(0, len(part), rows_per_file)] or [[]]
        for i, chunk in enumerate(chunks):
            table = pa.Table.from_pylist(chunk, schema=_schema())
            path = data_dir / f"{name}-{i:05d}-of-{len(chunks):05d}.parquet"
            pq.write_table(table, path)
            written.append(path)
    write_card(out_dir)
    return written


def read_parquet(path: Path) -> Iterator[dict[str, Any]]:
    """The examples of one file written by :func:`write_parquet`, with their original types."""
    import pyarrow.parquet as pq

    for batch in pq.ParquetFile(path).iter_batches():
        for row in batch.to_pylist():
            yield _example(row)


def _example(row: Mapping[str, Any]) -> dict[str, Any]:
    example: dict[str, Any] = {}
    for name, kind in COLUMNS:
        value = row.get(name)
        if name in _DERIVED or value is None:
            continue
        example[name] = json.loads(value) if kind == "json" else value
    example["answer"] = _typed_answer(row)
    if row.get("extra"):
        example.update(json.loads(row["extra"]))
    return example


def _typed_answer(row: Mapping[str, Any]) -> Any:
    if row.get("answer_bool") is not None:
        return row["answer_bool"]
    number = row.get("answer_number")
    if number is not None:
        return int(number) if float(number).is_integer() else number
    if row.get("answer_text") is not None:
        return row["answer_text"]
    return row.get("answer")


def write_card(out_dir: Path) -> None:
    """``README.md`` describing every split file under ``out_dir/data``."""
    import pyarrow.parquet as pq

    splits: dict[str, dict[str, int]] = {}
    for path in sorted((out_dir / "data").glob("*.parquet")):
        meta = pq.read_metadata(path)
        entry = splits.setdefault(path.name.split("-", 1)[0], {"rows": 0, "bytes": 0})
        entry["rows"] += meta.num_rows
        entry["bytes"] += sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    (out_dir / "README.md").write_text("\n".join(_card_lines(splits)), encoding="utf-8")


def _card_lines(splits: Mapping[str, Mapping[str, int]]) -> list[str]:
    dtype = {"string": "string", "json": "string", "bool": "bool", "float64": "float64"}
    dtype["int64"] = "int64"
    lines = ["---", "license: other", "license_name: per-source-images", "language:", "- en"]
    lines += ["pretty_name: COVR-style compositional visual questions", "task_categories:"]
    lines += ["- visual-question-answering", "configs:", "- config_name: default"]
    lines += ["  data_files:"]
    for name in splits:
        lines += [f"  - split: {name}", f"    path: data/{name}-*"]
    lines += ["dataset_info:", "  features:"]
    for column, kind in COLUMNS:
        if kind == "list":
            lines += [f"  - name: {column}", "    sequence: string"]
        else:
            lines += [f"  - name: {column}", f"    dtype: {dtype[kind]}"]
    lines += ["  splits:"]
    for name, entry in splits.items():
        lines += [f"  - name: {name}", f"    num_bytes: {entry['bytes']}"]
        lines += [f"    num_examples: {entry['rows']}"]
    total = sum(e["bytes"] for e in splits.values())
    lines += [f"  dataset_size: {total}", "---", ""]
    return lines + _card_text()


def _card_text() -> list[str]:
    return [
        "# COVR-style compositional visual questions",
        "",
        "Each example has a question (`utterance`), up to 5 images (`scenes`, ids of GQA, imSitu",
        "or Visual Genome images), an executable `program` (JSON) and the `answer` it computes",
        "(`answer` as text; `answer_bool`, `answer_number` or `answer_text` with its type).",
        "Provenance columns record the template, the source image, the subgraphs and their",
        "structure, the edit that makes each distractor image differ, the seed and the generator",
        "version; `extra` holds any other field of the example (JSON).",
        "",
        "## Licence",
        "",
        "The questions are generated from scene-graph annotations; the images are not included.",
        "Use of the images and annotations is governed by their sources: GQA and Visual Genome",
        "(CC BY 4.0), imSitu (its terms of use: non-commercial research).",
        "",
        "## Citation",
        "",
        "The question forms follow COVR:",
        "",
        "```bibtex",
        CITATION,
        "```",
        "",
    ]
