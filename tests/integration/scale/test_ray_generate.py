"""``covr generate --ray`` on a real local Ray (2 CPUs), on a real two-node Ray cluster on this
machine, and a real embedded FalkorDB (issue 17 item 4): the output equals the single-process
run byte for byte when a worker is killed mid-shard, when two nodes share the shards, and after
a resume that reuses verified parts and redoes a corrupted one; bad input exits 2 before Ray
starts.

One module so the store, the single-process output and the cluster are set up once (Ray takes
20-30 s to start on a loaded 2-core machine)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.scale.support import (
    VENV_BIN,
    World,
    by_directory,
    descendants,
    make_world,
    stop,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(400)]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    yield from make_world(tmp_path_factory)


def test_a_worker_killed_mid_shard_is_retried_and_the_output_is_complete(world: World) -> None:
    """The test SIGKILLs the first Ray worker it sees running a shard (its process title is
    ``ray::_on_node`` only while a task runs); Ray reruns that shard on another worker."""
    out = world.base / "killed.jsonl"
    args = [*world.generate_args(), "--out", str(out), "--ray", "local", "--shards", "5"]
    proc = subprocess.Popen(
        [str(VENV_BIN / "covr"), *args],
        env=world.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    killed = None
    try:
        deadline = time.monotonic() + 300
        while killed is None and proc.poll() is None and time.monotonic() < deadline:
            for pid in descendants(proc.pid):
                if _title(pid).startswith(b"ray::_on_node"):
                    os.kill(pid, signal.SIGKILL)
                    killed = pid
                    break
            time.sleep(0.01)
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            stop([*descendants(proc.pid), proc.pid])
    assert killed is not None, "no worker was seen running a shard"
    assert proc.returncode == 0, err
    assert "shards: 5 run, 0 reused" in err
    assert out.read_bytes() == world.single
    assert Path(f"{out}.dropped.json").read_bytes() == world.single_dropped
    assert sorted(p.name for p in Path(f"{out}.parts").glob("*.jsonl")) == [
        f"part-0000{k}-of-00005.jsonl" for k in range(5)
    ]


def _title(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--ray", "127.0.0.1:1"], "no Ray cluster answers at '127.0.0.1:1'"),
        (["--ray", "ray://"], "expected local, auto, HOST:PORT or ray://HOST:PORT"),
        (["--ray", "local", "--shards", "0"], "--shards must be >= 1"),
        (["--shards", "3"], "--shards and --resume go with --ray"),
        (["--ray", "local", "--workers", "2"], "excludes --gqa/--vg/--workers"),
        (["--ray", "local", "--image", "gqa:nope"], "unknown image 'gqa:nope'"),
        (["--ray", "local", "COVR_RAY_SHARDS=0"], "COVR_RAY_SHARDS"),
    ],
)
def test_bad_input_exits_2_before_ray_starts(world: World, extra: list[str], message: str) -> None:
    from typer.testing import CliRunner

    from covr.cli.main import app

    out = world.base / "bad.jsonl"
    env = {k: v for k, v in world.env.items() if k.startswith(("COVR_", "RAY_"))}
    env.update(a.partition("=")[::2] for a in extra if a.startswith("COVR_"))  # a bad setting
    args = [a for a in extra if not a.startswith("COVR_")]
    started = time.monotonic()
    base = world.generate_args()
    del base[base.index("--images") : base.index("--images") + 2]  # --image excludes it
    done = CliRunner().invoke(app, [*base, "--out", str(out), *args], env=env)
    assert done.exit_code == 2, done.output
    assert message in done.output
    assert not out.exists()
    assert time.monotonic() - started < 60


@pytest.fixture(scope="module")
def cluster(world: World, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A head (1 CPU) and a second node (1 CPU, resource ``second``) started with ``ray start
    --block``, each with its own temporary directory; stopped by pid (SIGTERM to ``ray start``
    stops its children), then whatever still names their directories."""
    port = free_port()
    dirs = [tmp_path_factory.mktemp("h"), tmp_path_factory.mktemp("n")]
    common = ["--block", "--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats"]
    head = ["--head", f"--port={port}", "--include-dashboard=false"]
    second = [f"--address=127.0.0.1:{port}", '--resources={"second": 1}']
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for directory, args, extra_env in (
            (dirs[0], head, {}),
            (dirs[1], second, {"RAY_AUTH_MODE": "token"}),
        ):
            log = directory / "start.log"
            with log.open("wb") as handle:
                procs.append(
                    subprocess.Popen(
                        [str(VENV_BIN / "ray"), "start", *args, *common, f"--temp-dir={directory}"],
                        env={**world.env, **extra_env},
                        stdout=handle,
                        stderr=subprocess.STDOUT,
                    )
                )
            wait_for(log, b"will now block", procs[-1])
        yield f"127.0.0.1:{port}"
    finally:
        stop([p.pid for p in reversed(procs)], grace_s=20)
        stop([pid for d in dirs for pid in by_directory(d)])


def test_two_nodes_share_the_shards_and_resume_redoes_only_what_is_missing_or_corrupt(
    world: World, cluster: str
) -> None:
    # the in-memory matcher's path too: each worker reads the split's scene graphs itself
    memory = [world.base / f"memory-{n}.jsonl" for n in (1, 2)]
    done = world.covr(*world.generate_args("memory"), "--out", str(memory[0]), "--quiet")
    assert done.returncode == 0, done.stderr
    ray = ["--ray", cluster, "--shards", "3", "--quiet"]
    done = world.covr(*world.generate_args("memory"), "--out", str(memory[1]), *ray)
    assert done.returncode == 0, done.stderr
    assert memory[0].read_bytes() == memory[1].read_bytes()

    out = world.base / "cluster.jsonl"
    args = [*world.generate_args(), "--out", str(out), "--ray", cluster, "--shards", "5"]
    done = world.covr(*args)
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == world.single
    per_node = re.search(r"per node: (.*?);", done.stderr)
    assert per_node is not None, done.stderr
    counts = [int(n.split(": ")[1]) for n in per_node.group(1).split(", ")]
    assert len(counts) == 2, done.stderr  # both nodes did work
    assert min(counts) >= 1, done.stderr
    assert sum(counts) == 5, done.stderr

    # an interrupted run: one part never written, one cut short
    parts = Path(f"{out}.parts")
    for path in parts.glob("part-00001-of-00005.*"):
        path.unlink()
    cut = parts / "part-00002-of-00005.jsonl"
    cut.write_bytes(cut.read_bytes()[:-10])
    out.unlink()
    done = world.covr(*args, "--resume")
    assert done.returncode == 0, done.stderr
    assert "shard 2: part not reused, checksum mismatch" in done.stderr
    assert "3 shard(s) already written and verified" in done.stderr
    assert "shards: 2 run, 3 reused" in done.stderr
    assert out.read_bytes() == world.single
    assert Path(f"{out}.dropped.json").read_bytes() == world.single_dropped


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(log: Path, text: bytes, proc: subprocess.Popen[bytes], timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while text not in log.read_bytes():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"ray start did not come up: {log.read_text()[-2000:]}")
        time.sleep(0.2)
