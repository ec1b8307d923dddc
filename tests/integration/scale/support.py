"""Helpers of the Ray tests: a loaded store shared by the module, ``covr`` in a subprocess, and
the processes a test started (found by ancestry or by their own temporary directory, never by
name)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from covr_loaders import synthetic

VENV_BIN = Path(sys.executable).parent
IMAGES = 40
SEED = "2"
SOURCES = "10"  # source images of a run; over 5 shards they fall 3, 2, 1, 2, 2 (none empty)


@dataclass
class World:
    """A store with 40 synthetic val images served by `covr db start`, and the single-process
    output (default lookup) the Ray runs are compared with."""

    base: Path
    env: dict[str, str]
    single: bytes
    single_dropped: bytes

    def covr(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(VENV_BIN / "covr"), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def generate_args(self, lookup: str = "store") -> list[str]:
        """``covr generate`` over the first ``SOURCES`` images: the default lookup (the store's
        Cypher lookup with the classifiers) unless told ``memory``."""
        return [
            "generate",
            "--split",
            "val",
            "--images",
            SOURCES,
            "--seed",
            SEED,
            "--lookup",
            lookup,
        ]


def make_world(tmp: pytest.TempPathFactory) -> Iterator[World]:
    base = tmp.mktemp("sc")
    scenes = base / "val.json"
    synthetic.write("gqa", scenes, images=IMAGES, seed=3, split="val")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COVR_", "RAY_"))}
    env.update(
        COVR_DATA_DIR=str(base / "d"),
        COVR_GRAPH_URI="",
        COVR_QUESTIONS_SUBGRAPHS_PER_IMAGE="4",
        # the synthetic words are unknown to the presence model; the Ray runs are checked
        # against a run on one machine, not the model's judgement of answer images
        COVR_RELATED_ANSWER_PRESENCE="1",
        COVR_RAY_CPUS="2",
        COVR_RAY_TEMP_DIR=str(tmp.mktemp("r")),
        RAY_USAGE_STATS_ENABLED="0",
    )
    world = World(base, env, b"", b"")
    for args in (["load", "gqa", str(scenes), "--split", "val"], ["db", "start"]):
        done = world.covr(*args)
        assert done.returncode == 0, done.stderr
    try:
        out = base / "single.jsonl"
        done = world.covr(*world.generate_args(), "--out", str(out), "--quiet")
        assert done.returncode == 0, done.stderr
        world.single = out.read_bytes()
        world.single_dropped = Path(f"{out}.dropped.json").read_bytes()
        # every text with two answers over as many images (issue 36): 26 examples on 10 images
        assert world.single.count(b"\n") > 20
        yield world
    finally:
        world.covr("db", "stop")


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _parent(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("PPid:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def descendants(root: int) -> list[int]:
    """Every live process whose chain of parents reaches ``root``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        seen, up = 0, _parent(pid)
        while up > 1 and seen < 64:
            if up == root:
                found.append(pid)
                break
            up, seen = _parent(up), seen + 1
    return found


def stop(pids: Sequence[int], grace_s: float = 10.0) -> None:
    """SIGTERM these processes (the test started them), SIGKILL what still runs after
    ``grace_s``."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(_running(p) for p in pids):
        time.sleep(0.1)
    for pid in pids:
        if _running(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _running(pid: int) -> bool:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1]
    except (OSError, IndexError):
        return False
    return not state.startswith("Z")


def by_directory(directory: Path) -> list[int]:
    """Processes whose command line names ``directory`` (a Ray node's own temp dir)."""
    mark = str(directory).encode()
    return [
        int(e.name)
        for e in Path("/proc").iterdir()
        if e.name.isdigit() and mark in cmdline(int(e.name))
    ]
