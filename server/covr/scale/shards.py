"""Shards of a batch run and their part files (pure: no Ray, no store).

Why a hash of the image id and not contiguous ranges: a shard's images are then spread over the
whole split (no shard gets all the large scene graphs of one source), and an image's shard does
not depend on which other images are in the run. Python's ``hash`` is salted per process, so the
hash is BLAKE2b.

A part file holds one JSON line per source image, in input order within the shard; beside it a
small manifest records the run it belongs to and the SHA-256 of the part, so ``--resume`` reuses
a part only when it is complete, of this run, and unchanged (DESIGN §10: "outputs are written per
shard and merged deterministically").
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from covr.jsonlines import json_lines
from covr.scale.errors import ScaleError

MANIFEST_FORMAT = 1


def shard_of(image_id: str, shards: int) -> int:
    """The shard of an image: the first 8 bytes of BLAKE2b of its id, modulo ``shards``."""
    digest = hashlib.blake2b(image_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % shards


def plan(image_ids: Sequence[str], shards: int) -> list[list[str]]:
    """The images of each shard (index = shard number), each list in input order."""
    if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:
        raise ScaleError("shards", f"must be an integer >= 1, got {shards!r}")
    out: list[list[str]] = [[] for _ in range(shards)]
    for image_id in image_ids:
        out[shard_of(image_id, shards)].append(image_id)
    return out


def run_key(description: Mapping[str, Any]) -> str:
    """A fingerprint of everything a part's content depends on (command, options, the image
    list, the shard count): a part written under another key is not reused."""
    text = json.dumps(description, sort_keys=True, separators=(",", ":"), default=_plain)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _plain(value: object) -> object:
    """JSON for what ``json`` cannot write: sets sorted (their order is salted), the rest as
    text."""
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    return repr(value)


def encode_records(records: Sequence[Mapping[str, Any]]) -> bytes:
    """A part's content: one compact JSON line per record."""
    lines = (json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records)
    return "".join(line + "\n" for line in lines).encode("utf-8")


@dataclass(frozen=True)
class Parts:
    """The part files of one run: ``<out>.parts/part-<k>-of-<n>.jsonl`` and ``.json``."""

    out: Path
    shards: int
    run: str

    @property
    def directory(self) -> Path:
        return self.out.with_name(self.out.name + ".parts")

    def part(self, shard: int) -> Path:
        return self.directory / f"part-{shard:05d}-of-{self.shards:05d}.jsonl"

    def manifest(self, shard: int) -> Path:
        return self.part(shard).with_suffix(".json")

    def write(self, shard: int, data: bytes, images: int) -> None:
        """Write a part, then its manifest (each atomically: a crash leaves no half file, and
        a part without its manifest is redone)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        _atomic_write(self.part(shard), data)
        manifest = {
            "format": MANIFEST_FORMAT,
            "run": self.run,
            "shard": shard,
            "shards": self.shards,
            "images": images,
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
        _atomic_write(self.manifest(shard), (json.dumps(manifest, indent=1) + "\n").encode())

    def problem(self, shard: int) -> str | None:
        """Why a part cannot be reused (None when it is complete, of this run and unchanged)."""
        if not self.part(shard).is_file():
            return "missing"
        try:
            manifest = json.loads(self.manifest(shard).read_text())
        except (OSError, ValueError):
            return "its manifest is missing or unreadable"
        if not isinstance(manifest, dict) or manifest.get("run") != self.run:
            return "it belongs to another run (other options, images or shard count)"
        data = self.part(shard).read_bytes()
        if hashlib.sha256(data).hexdigest() != manifest.get("sha256"):
            return "checksum mismatch (the file was changed or cut short)"
        return None

    def records(self, shard: int) -> Iterator[dict[str, Any]]:
        """The records of a verified part; :class:`ScaleError` naming the file otherwise."""
        problem = self.problem(shard)
        if problem is not None:
            raise ScaleError(str(self.part(shard)), problem)
        for number, _, _, record in json_lines(self.part(shard), ScaleError.of_line):
            if not isinstance(record, dict) or not isinstance(record.get("image"), str):
                raise ScaleError(f"{self.part(shard)}:{number}", "a record needs an image id")
            yield record

    def in_order(self, image_ids: Sequence[str]) -> Iterator[dict[str, Any]]:
        """Each image's record in input order, taken from its shard's part (a part holds its
        images in input order, so one reader per shard suffices); :class:`ScaleError` naming
        the part when it does not hold the image expected next."""
        readers: dict[int, Iterator[dict[str, Any]]] = {}
        for image_id in image_ids:
            shard = shard_of(image_id, self.shards)
            if shard not in readers:
                readers[shard] = self.records(shard)
            record = next(readers[shard], None)
            if record is None or record["image"] != image_id:
                found = "the end of the file" if record is None else repr(record["image"])
                raise ScaleError(
                    str(self.part(shard)),
                    f"expected the record of image {image_id!r}, found {found}",
                )
            yield record

    def remove_stale(self) -> None:
        """Delete every part file in the directory (a fresh run without ``--resume``: parts of
        an earlier run must not be mistaken for this one's)."""
        if not self.directory.is_dir():
            return
        for path in self.directory.glob("part-*"):
            path.unlink()

    def remove_all(self) -> None:
        """Delete the parts and their directory once the merged output is written."""
        self.remove_stale()
        if self.directory.is_dir() and not any(self.directory.iterdir()):
            self.directory.rmdir()


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    tmp.replace(path)
