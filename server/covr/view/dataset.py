"""An examples file opened for browsing: a SQLite index kept beside it, paging and filters.

Why an index: a generated file can hold hundreds of thousands of examples (250,000 lines of a few
hundred bytes to a few KB each); the browser must show its first page and answer a filter within a
second without reading the file. The index is built once by streaming the file (one line, or one
Parquet record batch, at a time) and kept beside it as ``<file>.covr-index.sqlite`` (or under
``COVR_DATA_DIR/view-index/`` when that folder is read-only). It holds, per example, where it is
(byte offset and length for JSONL, row number for Parquet), the columns the filters use (template,
paper template, answer, split, image count, properties, images) and the question text in an FTS5
table for full-text search. An index whose recorded size, modification time or first bytes differ
from the file is rebuilt.

Only the examples on the page are read from the file (``seek`` + one line each), so memory does
not grow with the file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from covr.jsonlines import json_lines
from covr.questions.example import ExampleRecord

INDEX_VERSION = "2"
INDEX_SUFFIX = ".covr-index.sqlite"
REQUIRED_FIELDS = ("qid", "utterance", "scenes", "answer")
_HEAD_BYTES = 1 << 16
_BATCH = 5000
MAX_OFFSET = 2**62
"""The largest page offset asked of SQLite (its integers are 64-bit; no file has this many)."""


class DatasetError(ValueError):
    """A dataset file cannot be opened or indexed; the message names file and line."""

    def __init__(self, path: Path | str, line: int | None, message: str) -> None:
        where = f"{path}:{line}" if line else str(path)  # 0 or None: the file as a whole
        super().__init__(f"{where}: {message}")
        self.path = str(path)
        self.line = line


class UnknownExample(KeyError):
    """No example with this qid in the dataset."""

    def __str__(self) -> str:
        return f"no example with qid {self.args[0]!r}"


def answer_key(answer: Any) -> str:
    """The answer as the filters show it: ``true``/``false``, numbers and words as written."""
    if isinstance(answer, bool):
        return "true" if answer else "false"
    if isinstance(answer, str) and answer in ("True", "False"):  # Parquet keeps answers as text
        return answer.lower()
    return str(answer)


@dataclass(frozen=True)
class Filters:
    """What the browser's form asks for; empty fields do not filter."""

    template: str = ""
    paper_template: str = ""
    answer: str = ""
    property: str = ""
    split: str = ""  # a split list "<name>/<list>" (see :class:`SplitLists`)
    image: str = ""
    text: str = ""

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> Filters:
        return cls(**{k: query.get(k, "").strip() for k in cls.__dataclass_fields__})

    def as_query(self) -> dict[str, str]:
        return {k: v for k, v in self.__dict__.items() if v}


@dataclass(frozen=True)
class Row:
    """One example as the list shows it (read from the index, not the file)."""

    row: int
    qid: str
    utterance: str
    template: str
    paper_template: str
    answer: str
    images: int


@dataclass(frozen=True)
class Page:
    rows: list[Row]
    total: int
    offset: int
    limit: int


@dataclass
class SplitLists:
    """Split manifests (``covr split``): ``name/list`` -> qids, read when first filtered on."""

    manifests: dict[str, Path] = field(default_factory=dict)
    _lists: dict[str, list[str]] | None = None

    def names(self) -> list[str]:
        return sorted(self._load())

    def qids(self, key: str) -> list[str]:
        lists = self._load()
        if key not in lists:
            raise DatasetError(key, None, f"unknown split list (known: {', '.join(sorted(lists))})")
        return lists[key]

    def _load(self) -> dict[str, list[str]]:
        if self._lists is None:
            out: dict[str, list[str]] = {}
            if not self.manifests:  # covr.splits is not imported for nothing (start-up time)
                self._lists = out
                return out
            from covr.splits.builders import read_manifest

            for name, path in sorted(self.manifests.items()):
                _, lists = read_manifest(path)
                for list_name, qids in lists.items():
                    out[f"{name}/{list_name}"] = qids
            self._lists = out
        return self._lists


def index_path_for(path: Path, fallback_dir: Path | None = None) -> Path:
    """Where the index of ``path`` lives: beside it, or in ``fallback_dir`` if not writable."""
    beside = path.with_name(path.name + INDEX_SUFFIX)
    if os.access(path.parent, os.W_OK) or fallback_dir is None:
        return beside
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    return fallback_dir / f"{path.stem}-{digest}{INDEX_SUFFIX}"


def _fingerprint(path: Path) -> dict[str, str]:
    stat = path.stat()
    with path.open("rb") as handle:
        head = hashlib.sha256(handle.read(_HEAD_BYTES)).hexdigest()
    return {"size": str(stat.st_size), "mtime_ns": str(stat.st_mtime_ns), "head": head}


_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE examples(
    row INTEGER PRIMARY KEY, qid TEXT NOT NULL, pos INTEGER NOT NULL, length INTEGER NOT NULL,
    template TEXT NOT NULL, paper_template TEXT NOT NULL, answer TEXT NOT NULL,
    split TEXT NOT NULL, images INTEGER NOT NULL, utterance TEXT NOT NULL);
CREATE TABLE props(row INTEGER NOT NULL, property TEXT NOT NULL);
CREATE TABLE images(row INTEGER NOT NULL, image TEXT NOT NULL);
CREATE VIRTUAL TABLE text USING fts5(utterance, content='examples', content_rowid='row');
"""
_INDEXES = """
CREATE UNIQUE INDEX examples_qid ON examples(qid);
CREATE INDEX examples_template ON examples(template, row);
CREATE INDEX examples_paper ON examples(paper_template, row);
CREATE INDEX examples_answer ON examples(answer, row);
CREATE INDEX props_property ON props(property, row);
CREATE INDEX images_image ON images(image, row);
INSERT INTO text(text) VALUES('rebuild');
"""


_FACETS = {
    "template": "SELECT template, count(*) c FROM examples GROUP BY template",
    "paper_template": "SELECT paper_template, count(*) c FROM examples GROUP BY paper_template",
    "answer": "SELECT answer, count(*) c FROM examples GROUP BY answer",
    "split": "SELECT split, count(*) c FROM examples GROUP BY split",
    "property": "SELECT property, count(*) c FROM props GROUP BY property",
}
"""The filter menus' values and counts, computed when the index is built."""


def _rows_jsonl(path: Path) -> Iterator[tuple[int, int, int, dict[str, Any]]]:
    """``(line number, byte offset, length, example)`` per non-empty line, streamed."""
    for number, offset, length, example in json_lines(path, DatasetError):
        if not isinstance(example, dict):
            raise DatasetError(path, number, "an example must be a JSON object")
        yield number, offset, length, example


def _rows_parquet(path: Path) -> Iterator[tuple[int, int, int, dict[str, Any]]]:
    """``(row number, row number, 0, example)`` per Parquet row, one record batch at a time."""
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several types for a bad file
        raise DatasetError(path, None, f"not a Parquet file: {exc}") from None
    number = 0
    columns = [
        "qid",
        "utterance",
        "scenes",
        "answer",
        "properties",
        "template",
        "paper_template",
        "split",
    ]
    present = [c for c in columns if c in parquet.schema_arrow.names]
    for batch in parquet.iter_batches(batch_size=_BATCH, columns=present):
        for record in batch.to_pylist():
            number += 1
            yield number, number - 1, 0, record


def _check(path: Path, number: int, example: Mapping[str, Any]) -> None:
    for key in REQUIRED_FIELDS:
        if key not in example:
            raise DatasetError(path, number, f"field {key!r} is missing")
    if not isinstance(example["qid"], str) or not example["qid"]:
        raise DatasetError(path, number, "field 'qid' must be a non-empty string")
    if not isinstance(example["scenes"], list) or not all(
        isinstance(s, str) for s in example["scenes"]
    ):
        raise DatasetError(path, number, "field 'scenes' must be a list of image ids")


def build_index(path: Path, index: Path) -> int:
    """Stream ``path`` into a fresh index at ``index`` (atomically replaced); return the count."""
    kind = "parquet" if path.suffix == ".parquet" else "jsonl"
    rows = _rows_parquet(path) if kind == "parquet" else _rows_jsonl(path)
    tmp = index.with_name(index.name + f".tmp{os.getpid()}")
    tmp.unlink(missing_ok=True)
    con = sqlite3.connect(tmp)
    try:
        con.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;" + _SCHEMA)
        examples: list[tuple[Any, ...]] = []
        props: list[tuple[int, str]] = []
        images: list[tuple[int, str]] = []
        seen: dict[str, int] = {}
        count = 0
        for number, pos, length, ex in rows:
            _check(path, number, ex)
            qid = ex["qid"]
            if qid in seen:
                raise DatasetError(path, number, f"qid {qid!r} repeats line {seen[qid]}")
            seen[qid] = number
            row = count
            count += 1
            examples.append(
                (
                    row,
                    qid,
                    pos,
                    length,
                    str(ex.get("template") or ""),
                    str(ex.get("paper_template") or ""),
                    answer_key(ex["answer"]),
                    str(ex.get("split") or ""),
                    len(ex["scenes"]),
                    str(ex["utterance"]),
                )
            )
            props.extend((row, str(p)) for p in ex.get("properties") or [])
            images.extend((row, s) for s in dict.fromkeys(ex["scenes"]))
            if len(examples) >= _BATCH:
                _flush(con, examples, props, images)
        _flush(con, examples, props, images)
        con.executescript(_INDEXES)
        meta = {"version": INDEX_VERSION, "kind": kind, "count": str(count), **_fingerprint(path)}
        for column, sql in _FACETS.items():  # counted once here: the browser starts without it
            counted = con.execute(sql + " ORDER BY c DESC, 1 LIMIT 500").fetchall()
            meta[f"facet:{column}"] = json.dumps([[str(v), int(c)] for v, c in counted if v != ""])
        con.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
        con.commit()
    except BaseException:
        con.close()
        tmp.unlink(missing_ok=True)
        raise
    con.close()
    tmp.replace(index)
    return count


def _flush(
    con: sqlite3.Connection,
    examples: list[tuple[Any, ...]],
    props: list[tuple[int, str]],
    images: list[tuple[int, str]],
) -> None:
    con.executemany("INSERT INTO examples VALUES (?,?,?,?,?,?,?,?,?,?)", examples)
    con.executemany("INSERT INTO props VALUES (?, ?)", props)
    con.executemany("INSERT INTO images VALUES (?, ?)", images)
    examples.clear()
    props.clear()
    images.clear()


def _fts_query(text: str) -> str:
    """User text as an FTS5 query: every word must occur, the last one as a prefix."""
    words = re.findall(r"\w+", text.lower())
    if not words:
        return ""
    quoted = [f'"{w}"' for w in words]
    quoted[-1] += "*"
    return " ".join(quoted)


class Dataset:
    """One examples file (JSONL or Parquet) with its index; safe to share between threads."""

    def __init__(
        self,
        path: Path,
        *,
        index_dir: Path | None = None,
        splits: SplitLists | None = None,
        rebuild: bool = False,
        on_build: Callable[[Path], None] | None = None,
    ) -> None:
        if not path.is_file():
            raise DatasetError(path, None, "no such file")
        self.path = path
        self.index_path = index_path_for(path, index_dir)
        self.index_path.parent.mkdir(parents=True, exist_ok=True)
        self.splits = splits or SplitLists()
        self.built = False
        if rebuild or not self._fresh():
            if on_build is not None:  # the CLI says what it is doing: a big file takes a while
                on_build(path)
            build_index(path, self.index_path)
            self.built = True
        self._lock = threading.Lock()
        self._con = sqlite3.connect(
            f"file:{self.index_path}?mode=ro", uri=True, check_same_thread=False
        )
        self._con.execute("PRAGMA temp_store=MEMORY")
        meta = dict(self._con.execute("SELECT key, value FROM meta").fetchall())
        self.kind = meta["kind"]
        self.count = int(meta["count"])
        self._facets: dict[str, list[tuple[str, int]]] = {
            column: [(str(v), int(c)) for v, c in json.loads(meta[f"facet:{column}"])]
            for column in _FACETS
        }
        self._loaded_splits: set[str] = set()
        self._parquet_cache: tuple[int, list[dict[str, Any]]] | None = None

    def _fresh(self) -> bool:
        if not self.index_path.is_file():
            return False
        try:
            con = sqlite3.connect(f"file:{self.index_path}?mode=ro", uri=True)
            try:
                meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
            finally:
                con.close()
        except sqlite3.Error:
            return False
        if meta.get("version") != INDEX_VERSION:
            return False
        current = _fingerprint(self.path)
        return all(meta.get(k) == v for k, v in current.items())

    def close(self) -> None:
        self._con.close()

    # -- queries -------------------------------------------------------------------------------

    def facets(self, column: str) -> list[tuple[str, int]]:
        """Values of a filter column with their counts (most frequent first, at most 500),
        as counted when the index was built."""
        if column not in _FACETS:
            raise ValueError(f"no facet {column!r}")
        return self._facets[column]

    def _where(self, filters: Filters) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        for column in ("template", "paper_template", "answer"):
            value = getattr(filters, column)
            if value:
                clauses.append(f"{column} = ?")
                params.append(value)
        if filters.property:
            clauses.append("row IN (SELECT row FROM props WHERE property = ?)")
            params.append(filters.property)
        if filters.image:
            clauses.append("row IN (SELECT row FROM images WHERE image = ?)")
            params.append(filters.image)
        if filters.split:
            table = self._split_table(filters.split)
            # the table name is a hash made here, never user text
            clauses.append(f"qid IN (SELECT qid FROM temp.{table})")  # noqa: S608
        if filters.text:
            query = _fts_query(filters.text)
            if query:
                clauses.append("row IN (SELECT rowid FROM text WHERE text MATCH ?)")
                params.append(query)
        where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
        return where, params

    def _split_table(self, key: str) -> str:
        """A temp table of the qids of one split list (filled once per list)."""
        table = "split_" + hashlib.sha256(key.encode()).hexdigest()[:12]
        if key not in self._loaded_splits:
            qids = self.splits.qids(key)
            with self._lock:
                self._con.execute(f"CREATE TEMP TABLE IF NOT EXISTS {table}(qid TEXT PRIMARY KEY)")
                self._con.executemany(
                    f"INSERT OR IGNORE INTO temp.{table} VALUES (?)",  # noqa: S608
                    ((q,) for q in qids),
                )
            self._loaded_splits.add(key)
        return table

    def page(self, filters: Filters, offset: int = 0, limit: int = 25) -> Page:
        """One page of matching examples in file order, and how many match in all."""
        where, params = self._where(filters)
        # SQLite takes 64-bit integers: /?offset=10^30 was an OverflowError and an HTTP 500
        # (issue 40 item 11); past the last row is an empty page, however far past
        offset = min(max(0, offset), MAX_OFFSET)
        with self._lock:
            total = int(
                self._con.execute(f"SELECT count(*) FROM examples{where}", params).fetchone()[0]  # noqa: S608
            )
            rows = self._con.execute(
                "SELECT row, qid, utterance, template, paper_template, answer, images "  # noqa: S608
                f"FROM examples{where} ORDER BY row LIMIT ? OFFSET ?",
                [*params, limit, offset],
            ).fetchall()
        return Page([Row(*r) for r in rows], total, offset, limit)

    def qids(self, filters: Filters, limit: int) -> list[str]:
        """The first ``limit`` qids matching ``filters`` (for static export)."""
        return [r.qid for r in self.page(filters, 0, limit).rows]

    def neighbours(self, qid: str, filters: Filters) -> tuple[str | None, str | None]:
        """The previous and next qid within ``filters`` (for the example page's arrows)."""
        where, params = self._where(filters)
        row = self._row_of(qid)[0]
        joiner = " AND " if where else " WHERE "
        with self._lock:
            before = self._con.execute(
                f"SELECT qid FROM examples{where}{joiner}row < ? ORDER BY row DESC LIMIT 1",  # noqa: S608
                [*params, row],
            ).fetchone()
            after = self._con.execute(
                f"SELECT qid FROM examples{where}{joiner}row > ? ORDER BY row LIMIT 1",  # noqa: S608
                [*params, row],
            ).fetchone()
        return (before[0] if before else None, after[0] if after else None)

    def _row_of(self, qid: str) -> tuple[int, int, int]:
        with self._lock:
            hit = self._con.execute(
                "SELECT row, pos, length FROM examples WHERE qid = ?", (qid,)
            ).fetchone()
        if hit is None:
            raise UnknownExample(qid)
        return int(hit[0]), int(hit[1]), int(hit[2])

    def example(self, qid: str) -> ExampleRecord:
        """The full example with this qid, read from the file (not from the index)."""
        _row, pos, length = self._row_of(qid)
        if self.kind == "parquet":
            return self._parquet_row(pos)
        with self.path.open("rb") as handle:
            handle.seek(pos)
            raw = handle.read(length)
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            raise DatasetError(
                self.path, None, "changed since it was indexed; restart to re-index"
            ) from None
        if not isinstance(value, dict) or value.get("qid") != qid:
            raise DatasetError(self.path, None, "changed since it was indexed; restart to re-index")
        return value

    def _parquet_row(self, number: int) -> ExampleRecord:
        """Row ``number`` of a Parquet file: its row group is read once and kept."""
        import pyarrow.parquet as pq

        parquet = pq.ParquetFile(self.path)
        start = 0
        for group in range(parquet.num_row_groups):
            size = parquet.metadata.row_group(group).num_rows
            if number < start + size:
                cached = self._parquet_cache
                if cached is None or cached[0] != group:
                    records = parquet.read_row_group(group).to_pylist()
                    cached = (group, records)
                    self._parquet_cache = cached
                return from_parquet(cached[1][number - start])
            start += size
        raise DatasetError(self.path, number + 1, "row is gone; restart to re-index")


def from_parquet(record: dict[str, Any]) -> ExampleRecord:
    """A Parquet row back in the JSONL shape (nested columns are JSON text there)."""
    out = dict(record)
    for key in ("program", "subgraphs", "signatures"):
        value = out.get(key)
        if isinstance(value, str):
            with contextlib.suppress(json.JSONDecodeError):
                out[key] = json.loads(value)
    answer = out.get("answer")
    if answer in ("True", "False"):
        out["answer"] = answer == "True"
    elif isinstance(answer, str) and re.fullmatch(r"-?\d+", answer):
        out["answer"] = int(answer)
    return out


def find_datasets(root: Path) -> list[Path]:
    """Example files under a folder: ``*.jsonl`` and ``*.parquet`` (sorted, indexes skipped)."""
    return [
        p
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.suffix in (".jsonl", ".parquet") and not p.name.endswith(INDEX_SUFFIX)
    ]


def find_split_manifests(root: Path) -> dict[str, Path]:
    """Split manifests (``manifest.json`` written by ``covr split``) under a folder, by name."""
    out: dict[str, Path] = {}
    for manifest in sorted(root.rglob("manifest.json")):
        name = manifest.parent.relative_to(root).as_posix() or manifest.parent.name
        out[name] = manifest
    return out
