"""The disk fills up under the embedded FalkorDB, and a snapshot is asked for (issue 21, item 5).

The data directory is a small tmpfs of the test's own, filled with a file until the kernel
says ENOSPC. Then ``snapshot()`` must fail with a clear error (the store's own error type, naming
the directory and its free space), not hang or crash the server; the previous snapshot must be left as it was (the
server writes a new one beside it and renames only a complete one); once space is freed the
store snapshots again and, reopened, holds everything it held before.

Needs ``mount -t tmpfs`` (root, or a user namespace the machine allows); skipped where the
mount is refused. FalkorDB only: a snapshot (``SAVE``) is that server's mechanism; the managed
Neo4j checkpoints its transaction log itself.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from covr.graph import open_store
from covr.graph.errors import GraphError, StoreUnavailable
from covr_loaders.samples import load_bundled_samples
from tests.integration.conftest import make_settings

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

SIZE = "24m"
"""Room for the server's files and the samples, and small enough to fill in a moment."""


@contextlib.contextmanager
def small_filesystem(where: Path) -> Iterator[Path]:
    """A tmpfs of :data:`SIZE` mounted at ``where`` for the block (skips if it cannot be)."""
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SIZE},mode=0700", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(path: Path) -> int:
    """Write ``path`` until the filesystem is full; the bytes written."""
    written = 0
    chunk = b"\0" * 65536
    with path.open("wb", buffering=0) as out:
        while True:
            try:
                written += out.write(chunk)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                chunk = chunk[: len(chunk) // 2]
                if not chunk:
                    return written


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def image_count(store: object) -> int:
    rows = store.read("MATCH (i:Image) RETURN count(i) AS n", {})  # type: ignore[attr-defined]
    return int(rows[0]["n"])


def test_a_snapshot_on_a_full_disk_fails_clearly_and_keeps_the_last_one(tmp_path: Path) -> None:
    with small_filesystem(tmp_path / "small") as data_dir:
        settings = make_settings(data_dir)
        with open_store(settings.graph) as store:
            store.apply_schema()
            load_bundled_samples(store, settings.load)
            images = image_count(store)
            store.snapshot()
            snapshots = sorted(data_dir.rglob("*.rdb"))
            assert snapshots, sorted(p.name for p in data_dir.rglob("*"))
            before = {p: digest(p) for p in snapshots}

            filler = data_dir / "filler"
            fill(filler)
            with pytest.raises(GraphError) as failed:
                store.snapshot()
            message = str(failed.value)
            print("snapshot on a full disk:", message)
            # it said only "SAVE: " (the server's bare ERR) before the store explained it
            assert f"could not be written to {data_dir}" in message
            assert "bytes free there" in message
            assert "previous snapshot is kept" in message
            assert {p: digest(p) for p in snapshots} == before  # the last one is intact
            assert not list(data_dir.rglob("temp-*.rdb"))  # no half-written file left

            os.unlink(filler)
            assert image_count(store) == images  # the server lived through it
            store.snapshot()
        with open_store(settings.graph) as reopened:
            assert image_count(reopened) == images


def servers_of(data_dir: Path) -> list[int]:
    """Pids of the running processes whose command line names ``data_dir`` (its servers)."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().split(") ", 1)[1][:1]
        except (OSError, IndexError):
            continue
        if str(data_dir) in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def test_a_write_on_a_full_disk_is_refused_as_unavailable_and_leaks_no_server(
    tmp_path: Path,
) -> None:
    """With fsync-always durability the server exits when its log cannot grow; the store's
    restart then could not write its state file and raised a bare OSError (INTERNAL through
    the service) and left the restarted server running unrecorded, one more per call."""
    with small_filesystem(tmp_path / "small") as data_dir:
        settings = make_settings(data_dir)
        with open_store(settings.graph) as store:
            store.apply_schema()
            load_bundled_samples(store, settings.load)
            images = image_count(store)
            filler = data_dir / "filler"
            fill(filler)
            for _ in range(2):
                with pytest.raises(StoreUnavailable) as refused:
                    store.write("CREATE (:Probe {v: 1})", {})
                assert "free disk space" in str(refused.value)
                assert len(servers_of(data_dir)) <= 1
            os.unlink(filler)
            assert image_count(store) == images  # restarted once there is room
            assert store.read("MATCH (p:Probe) RETURN count(p) AS n", {})[0]["n"] == 0
            assert len(servers_of(data_dir)) == 1
        assert servers_of(data_dir) == []
