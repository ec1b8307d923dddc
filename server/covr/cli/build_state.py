"""``covr build``'s bookkeeping: one state file per completed stage, fingerprints, directories
written all at once, and what each stage cost (wall time, peak resident memory).

Why it is built this way (issue 39 item 1: "resumable after a kill at any stage"):

- A stage is *done* when ``OUTDIR/.build/state/<stage>.json`` exists, its fingerprint equals the
  one this run computes, and the outputs it lists still have the digests it recorded. The state
  file is written (atomically) only after every output is in place, so a kill leaves either a
  complete stage with its state file or no state file: a re-run skips the first and redoes the
  second.
- A stage's fingerprint hashes its own options *and the digests of what the stages before it
  produced*, so a changed input file, store or option invalidates that stage and every later one
  (their fingerprints change in turn), while an unchanged one is reused.
- Every output goes to a temporary sibling renamed into place (:func:`atomic_dir`, and the
  question room's JSONL writers), so a half-written output is never taken for a finished one.
- Peak memory per stage: Linux lets a process reset its own high-water mark
  (``/proc/self/clear_refs``, value 5), so each stage reports its own peak, not the process's
  peak so far; forked workers are reported as the children's peak when it grew in the stage.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

STATE_VERSION = 1
"""Bumped when a stage's outputs change shape: older state files are then not reused."""


def _plain(value: Any) -> Any:
    """A JSON value for what ``json`` cannot write: a set as a sorted list (its iteration order
    changes with the process's hash seed), anything else as its ``str``."""
    if isinstance(value, set | frozenset):
        return sorted(value, key=lambda v: json.dumps(v, sort_keys=True, default=_plain))
    return str(value)


def fingerprint(*parts: Any) -> str:
    """A stable hash of JSON-able parts (sorted keys, sets sorted, other values by ``str``):
    the same in every process."""
    payload = json.dumps(parts, sort_keys=True, default=_plain, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def digest_of(path: Path) -> str | None:
    """A file's sha256, or for a directory a hash of every file's relative path and sha256;
    ``None`` when the path does not exist."""
    if path.is_file():
        return file_sha256(path)
    if not path.is_dir():
        return None
    files = sorted(p for p in path.rglob("*") if p.is_file())
    return fingerprint([[p.relative_to(path).as_posix(), file_sha256(p)] for p in files])


def describe_input(path: Path) -> list[Any]:
    """What identifies an input file for a fingerprint: resolved path, size and modification
    time, as the loader's checkpoints identify it (hashing a 400 MB GQA file on every re-run
    would cost more than the check is worth)."""
    resolved = path.resolve()
    stat = resolved.stat()
    return [str(resolved), stat.st_size, stat.st_mtime_ns]


@dataclass
class StageRecord:
    """A completed stage, as its state file holds it."""

    stage: str
    fingerprint: str
    outputs: dict[str, str]
    """Output path (relative to the build directory, or ``store:``) → digest."""
    wall_s: float = 0.0
    peak_rss_mb: float | None = None
    workers_peak_rss_mb: float | None = None
    details: dict[str, Any] = field(default_factory=dict)
    version: int = STATE_VERSION

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> StageRecord:
        return cls(
            stage=str(raw["stage"]),
            fingerprint=str(raw["fingerprint"]),
            outputs={str(k): str(v) for k, v in dict(raw["outputs"]).items()},
            wall_s=float(raw.get("wall_s", 0.0)),
            peak_rss_mb=raw.get("peak_rss_mb"),
            workers_peak_rss_mb=raw.get("workers_peak_rss_mb"),
            details=dict(raw.get("details") or {}),
            version=int(raw.get("version", 0)),
        )


class BuildState:
    """The state files of one build directory (``OUTDIR/.build/state``)."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.dir = out / ".build" / "state"

    def path(self, stage: str) -> Path:
        return self.dir / f"{stage.replace(':', '-')}.json"

    def outputs(self, paths: list[str]) -> dict[str, str]:
        """Digests of outputs given relative to the build directory (all must exist)."""
        found: dict[str, str] = {}
        for rel in paths:
            digest = digest_of(self.out / rel)
            if digest is None:
                raise FileNotFoundError(f"{self.out / rel}: a stage output is missing")
            found[rel] = digest
        return found

    def done(self, stage: str, print_: str, store_digest: str | None = None) -> StageRecord | None:
        """The record of ``stage`` if it completed with this fingerprint and its outputs are
        unchanged (``store_digest``: the store's current digest, for a ``store:`` output)."""
        try:
            record = StageRecord.from_json(json.loads(self.path(stage).read_text("utf-8")))
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if record.version != STATE_VERSION or record.fingerprint != print_:
            return None
        for rel, digest in record.outputs.items():
            current = store_digest if rel == "store:" else digest_of(self.out / rel)
            if current != digest:
                return None
        return record

    def save(self, record: StageRecord) -> None:
        """Write a stage's state file atomically (temporary file, fsync, rename)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        target = self.path(record.stage)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        with tmp.open("w", encoding="utf-8") as handle:
            json.dump(asdict(record), handle, indent=1, sort_keys=True)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)

    def forget(self, stage: str) -> None:
        self.path(stage).unlink(missing_ok=True)


@contextmanager
def atomic_dir(target: Path) -> Iterator[Path]:
    """Yield an empty temporary sibling of ``target``; when the block ends normally it replaces
    ``target`` (the old one is moved aside first and removed after), else it is removed."""
    tmp = target.with_name(f".{target.name}.tmp")
    old = target.with_name(f".{target.name}.old")
    for leftover in (tmp, old):  # from a run killed inside this function
        shutil.rmtree(leftover, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if target.exists():
        target.rename(old)
    tmp.rename(target)
    shutil.rmtree(old, ignore_errors=True)


# -- cost of a stage ---------------------------------------------------------------------------


def _reset_peak() -> bool:
    """Reset this process's peak resident memory (Linux 4.0+); whether it worked."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _peak_mb() -> float:
    """This process's peak resident memory since the last reset (else since it started)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _children_mb() -> float:
    """The largest peak of the finished child processes so far (forked generation workers)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


@dataclass
class Cost:
    """What a stage cost; filled when its :func:`measured` block ends."""

    wall_s: float = 0.0
    peak_rss_mb: float | None = None
    workers_peak_rss_mb: float | None = None


@contextmanager
def measured() -> Iterator[Cost]:
    """Measure the wall time and peak resident memory of the block."""
    cost = Cost()
    _reset_peak()
    children = _children_mb()
    started = time.perf_counter()
    try:
        yield cost
    finally:
        cost.wall_s = round(time.perf_counter() - started, 3)
        cost.peak_rss_mb = round(_peak_mb(), 1)
        after = _children_mb()
        cost.workers_peak_rss_mb = round(after, 1) if after > children else None
