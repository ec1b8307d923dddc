"""Per-batch checkpoints, so an interrupted load continues where it stopped (``--resume``).

The file lives in ``<data dir>/loads/`` and is named after the load's *fingerprint*: source,
split, limit, batch size, the loader options and every input file's path, size and modification
time. A resume with different inputs or options therefore never reuses a stale checkpoint.
It is rewritten atomically (temporary file + rename) after every batch.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any


def fingerprint(parts: Mapping[str, Any], files: Iterable[Path]) -> str:
    """A stable hash of what determines the batch sequence of a load."""
    described = []
    for path in files:
        resolved = path.resolve()
        stat = resolved.stat()
        described.append([str(resolved), stat.st_size, stat.st_mtime_ns])
    payload = json.dumps({"parts": parts, "files": described}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass
class Checkpoint:
    """How far a load got: batches written (in order) and images in them."""

    path: Path
    fingerprint: str
    batches_done: int = 0
    images_done: int = 0
    completed: bool = False
    updated: float = 0.0

    @classmethod
    def location(cls, data_dir: Path, source: str, split: str, print_: str) -> Path:
        """Where the checkpoint of a load with this fingerprint lives."""
        return data_dir / "loads" / f"{source}-{split}-{print_[:16]}.json"

    @classmethod
    def open(cls, path: Path, print_: str) -> Checkpoint | None:
        """The saved checkpoint at ``path`` if it belongs to this fingerprint."""
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None
        if not isinstance(raw, dict) or raw.get("fingerprint") != print_:
            return None
        return cls(
            path=path,
            fingerprint=print_,
            batches_done=int(raw.get("batches_done", 0)),
            images_done=int(raw.get("images_done", 0)),
            completed=bool(raw.get("completed", False)),
            updated=float(raw.get("updated", 0.0)),
        )

    def save(self) -> None:
        """Write atomically: a crash leaves the old or the new checkpoint, never half of one."""
        self.updated = time.time()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {k: v for k, v in asdict(self).items() if k != "path"}
        # a temporary name of this process and thread: two loads of one file into one data
        # directory save the same checkpoint, and a shared ``.tmp`` made the second one crash
        # in os.replace (issue 40 item 7); the last save wins, each one whole
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        with tmp.open("w", encoding="utf-8") as handle:
            json.dump(data, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.path)
