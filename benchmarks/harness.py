"""What every benchmark of this folder measures with: the clock, CPU seconds (this process, its
children, a server process), memory, medians over runs, ratios, JSON output, the ``--quick``
mode that ``make bench`` runs, and git worktrees of other revisions.

A benchmark imports it as ``benchmarks.harness`` (run as a script, it first puts the repository
root on ``sys.path``, as every benchmark here does). Benchmarks import each other only for what
they measure (a loaded store, a request pool), never for these.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeGuard

REPO = Path(__file__).resolve().parent.parent
QUICK_DIR = Path(tempfile.gettempdir()) / "covr-bench-quick"
"""Where ``--quick`` runs keep their files and JSON (never ``benchmarks/results`` or ``docs``: a
quick run must not overwrite a measurement)."""
PACKAGES = {
    "covr": "server/covr",
    "covr_cypher": "cypher",
    "covr_loaders": "loaders/covr_loaders",
    "covr_client": "clients/python/covr_client",
}
"""The importable packages of a checkout and where they live in it (pyproject's package-dir and
the SDK's folder): a folder of links to them, first on ``PYTHONPATH``, runs that checkout's code."""
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


# ------------------------------------------------------------------------------- the machine
def load_average() -> float:
    """The 1-minute load average (the machines are shared: every report records it)."""
    return round(os.getloadavg()[0], 2)


def load_averages() -> list[float]:
    """The 1-, 5- and 15-minute load averages."""
    return [round(x, 2) for x in os.getloadavg()]


def say(text: str) -> None:
    """A progress line on stderr (stdout is the benchmark's report)."""
    print(text, file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------- time
@dataclass
class Lap:
    """Wall and CPU seconds (this process, all its threads) of one timed block."""

    wall_s: float = 0.0
    cpu_s: float = 0.0


@contextmanager
def stopwatch() -> Iterator[Lap]:
    """``with stopwatch() as lap: ...``; ``lap.wall_s`` and ``lap.cpu_s`` are set at the end."""
    lap = Lap()
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        yield lap
    finally:
        lap.wall_s = time.perf_counter() - wall
        lap.cpu_s = time.process_time() - cpu


@dataclass
class Timings:
    """Wall and CPU seconds of each repeat of one call."""

    wall_s: list[float] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)

    @property
    def median_wall_s(self) -> float:
        return median(self.wall_s)

    @property
    def median_cpu_s(self) -> float:
        return median(self.cpu_s)


def repeat(fn: Callable[[], Any], repeats: int, before: Callable[[], Any] | None = None) -> Timings:
    """``fn()`` ``repeats`` times, each timed (``before()`` runs untimed before each)."""
    out = Timings()
    for _ in range(repeats):
        if before is not None:
            before()
        with stopwatch() as lap:
            fn()
        out.wall_s.append(lap.wall_s)
        out.cpu_s.append(lap.cpu_s)
    return out


# ------------------------------------------------------------------------------- CPU and memory
def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a running process (all its threads) so far, from
    ``/proc/<pid>/stat``: how the benchmarks measure a graph server's or a service's work."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def children_cpu_s() -> float:
    """User + system CPU seconds of this process's children that have been waited for (a
    ``covr`` subprocess, the loader's forked reader, worker processes)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def process_tree_cpu_s() -> float:
    """CPU seconds of this process plus its waited-for children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime + children_cpu_s()


class CpuClock:
    """CPU seconds spent since it was made (or :meth:`restart`): by this process
    (:meth:`client_s`), by its waited-for children (:meth:`children_s`) and by a server process
    (:meth:`server_s`, when ``server_pid`` is given). The machine's load does not enter them."""

    def __init__(self, server_pid: int | None = None) -> None:
        self.server_pid = server_pid
        self.restart()

    def restart(self) -> None:
        self._client = time.process_time()
        self._children = children_cpu_s()
        self._server = proc_cpu_s(self.server_pid) if self.server_pid is not None else 0.0

    def client_s(self) -> float:
        return time.process_time() - self._client

    def children_s(self) -> float:
        return children_cpu_s() - self._children

    def server_s(self) -> float:
        if self.server_pid is None:
            return 0.0
        return proc_cpu_s(self.server_pid) - self._server


def _status_mb(pid: int, field_name: str) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field_name):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def rss_mb(pid: int) -> float:
    """Resident set of a process now (``VmRSS``), in MB; NaN when it is gone."""
    return _status_mb(pid, "VmRSS:")


def peak_rss_mb(pid: int) -> float:
    """Peak resident set of a process (``VmHWM``), in MB; NaN when it is gone."""
    return _status_mb(pid, "VmHWM:")


def max_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    """``ru_maxrss`` of this process (or, with ``RUSAGE_CHILDREN``, of its largest waited-for
    child), in MB."""
    return resource.getrusage(who).ru_maxrss / 1024


# ------------------------------------------------------------------------------- statistics
def median(values: Iterable[float]) -> float:
    """The median; NaN for no values."""
    items = list(values)
    return float(statistics.median(items)) if items else float("nan")


def percentile(values: Sequence[float], q: float) -> float:
    """The value at rank ``round(q * (n - 1))`` of the sorted values (nearest rank: always one
    of the values; ``q=0.5`` of an odd count is the median); NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _is_number(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def medians(
    runs: Sequence[Mapping[str, Any]],
    *,
    digits: int = 3,
    others: Literal["seen", "list", "first"] = "seen",
) -> dict[str, Any]:
    """One row from several runs of a measurement: per key of the first run (in its order; a
    run without the key is left out for it), the median of numbers as a float rounded to
    ``digits``. Other values (strings, booleans, lists) by ``others``: ``"seen"`` the value when
    every run agrees, else the sorted list of distinct values (as text); ``"list"`` always that
    list; ``"first"`` the first run's value."""
    out: dict[str, Any] = {}
    for key in runs[0]:
        values = [r[key] for r in runs if key in r]
        if all(_is_number(v) for v in values):
            out[key] = round(float(statistics.median(values)), digits)
        elif others == "first":
            out[key] = values[0]
        else:
            seen = sorted({str(v) for v in values})
            out[key] = seen[0] if others == "seen" and len(seen) == 1 else seen
    return out


def ratio(numerator: float, denominator: float, digits: int = 2) -> float | None:
    """``numerator / denominator`` rounded; None when the denominator is zero or NaN."""
    if not denominator or math.isnan(denominator):
        return None
    return round(numerator / denominator, digits)


def ratios(
    numerators: Mapping[str, Any], denominators: Mapping[str, Any], digits: int = 2
) -> dict[str, float]:
    """Per key of ``numerators`` that both hold as numbers: the ratio (keys whose denominator
    is zero are left out)."""
    out: dict[str, float] = {}
    for key, value in numerators.items():
        base = denominators.get(key)
        if _is_number(value) and _is_number(base):
            found = ratio(value, base, digits)
            if found is not None:
                out[key] = found
    return out


def format_ratio(value: float | None, digits: int = 2, unit: str = "x") -> str:
    """A ratio for a table: ``1.85x``; ``–`` when there is none."""
    if value is None or math.isnan(value):
        return "–"
    return f"{value:.{digits}f}{unit}"


def digest(value: Any) -> str:
    """A short hash of a JSON-able value (sorted keys): equal answers give equal digests."""
    text = json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# ------------------------------------------------------------------------------- output
def write_json(
    path: Path | str, data: Any, indent: int | None = 2, sort_keys: bool = False
) -> Path:
    """``data`` as JSON (paths and other objects as text) with a final newline; the folder is
    made when missing."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=indent, sort_keys=sort_keys, default=str)
    target.write_text(text + "\n", encoding="utf-8")
    return target


# ------------------------------------------------------------------------------- quick mode
def parse_args(
    parser: argparse.ArgumentParser,
    quick: Mapping[str, Any],
    argv: Sequence[str] | None = None,
) -> argparse.Namespace:
    """``parser.parse_args`` with a ``--quick`` flag: a small run that shows the benchmark still
    works (``make bench`` runs every benchmark so), in seconds and not minutes. ``quick`` holds
    the quick run's option values (argparse destinations); an option given on the command line
    wins over them. Its numbers prove nothing: measure without ``--quick``."""
    shown = " ".join(
        f"--{key.replace('_', '-')}"
        + ("" if value is True else f" {' '.join(map(str, _as_list(value)))}")
        for key, value in quick.items()
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"A quick run that shows the benchmark works, not a measurement: {shown}.",
    )
    args = parser.parse_args(argv)
    if args.quick:
        parser.set_defaults(**quick)
        args = parser.parse_args(argv)
    return args


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def quick_path(name: str) -> Path:
    """A file or folder for a quick run's output, under :data:`QUICK_DIR` (not made here)."""
    return QUICK_DIR / name


# ------------------------------------------------------------------------------- other revisions
WORKTREE = "WORKTREE"
"""A revision name meaning the working tree itself (uncommitted changes included)."""


def git(*args: str) -> str:
    """``git ARGS`` in the repository; its stdout, stripped."""
    done = subprocess.run(["git", *args], cwd=REPO, check=True, capture_output=True, text=True)
    return done.stdout.strip()


@contextmanager
def worktree(
    rev: str, work: Path, label: str, links: Mapping[str, Path] | None = None
) -> Iterator[Path]:
    """A folder of links to the packages of ``rev`` (a detached git worktree under ``work``,
    removed at the end; :data:`WORKTREE` links the working tree itself), plus ``links``
    (name -> target). Put it first on ``PYTHONPATH`` to run that revision's code."""
    shim = work / f"shim-{label}"
    shutil.rmtree(shim, ignore_errors=True)
    shim.mkdir(parents=True)
    tree = REPO
    if rev != WORKTREE:
        tree = work / f"tree-{label}"
        if tree.exists():
            git("worktree", "remove", "--force", str(tree))
        git(
            "worktree",
            "add",
            "--detach",
            str(tree),
            git("rev-parse", "--verify", f"{rev}^{{commit}}"),
        )
    try:
        for package, folder in PACKAGES.items():
            (shim / package).symlink_to(tree / folder, target_is_directory=True)
        for name, target in (links or {}).items():
            (shim / name).symlink_to(target, target_is_directory=target.is_dir())
        yield shim
    finally:
        shutil.rmtree(shim, ignore_errors=True)
        if tree != REPO:
            git("worktree", "remove", "--force", str(tree))
