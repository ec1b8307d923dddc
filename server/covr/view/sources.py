"""Where drawings get their scene graphs and photos from, behind two small interfaces.

The view room never opens the store itself (DESIGN.md §1): the CLI hands it a *batch reader*
(``image ids -> {id: SceneGraph}``, in practice ``covr_loaders.readback.get_scene_graphs`` bound
to the open store) and :class:`SceneSource` adds what a browser needs on top: an LRU cache (the
same images come back in many examples), one lock (store clients are not shared between threads)
and "not in the store" as ``None`` instead of an exception.
"""

from __future__ import annotations

import base64
import mimetypes
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from covr.scene.model import SceneGraph

BatchReader = Callable[[list[str]], Mapping[str, SceneGraph]]
PHOTO_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp")


class SceneSource:
    """Scene graphs by image id, cached; unknown ids map to ``None``."""

    def __init__(self, reader: BatchReader, cache_size: int = 2048) -> None:
        self._reader = reader
        self._cache: OrderedDict[str, SceneGraph | None] = OrderedDict()
        self._size = cache_size
        self._lock = threading.Lock()

    @classmethod
    def from_graphs(cls, graphs: Iterable[SceneGraph]) -> SceneSource:
        """A source over in-memory scene graphs (tests, static samples)."""
        known = {g.image_id: g for g in graphs}
        return cls(lambda ids: {i: known[i] for i in ids if i in known})

    def get_many(self, image_ids: Iterable[str]) -> dict[str, SceneGraph | None]:
        wanted = list(dict.fromkeys(image_ids))
        with self._lock:
            missing = [i for i in wanted if i not in self._cache]
            if missing:
                found = self._reader(missing)
                for image_id in missing:
                    self._cache[image_id] = found.get(image_id)
            out = {}
            for image_id in wanted:
                self._cache.move_to_end(image_id)
                out[image_id] = self._cache[image_id]
            while len(self._cache) > self._size:
                self._cache.popitem(last=False)
        return out

    def get(self, image_id: str) -> SceneGraph | None:
        return self.get_many([image_id])[image_id]


def find_photo(images_dir: Path | None, image_id: str) -> Path | None:
    """The photo of ``image_id`` under ``COVR_IMAGES_DIR``, if there is one.

    Looked up as ``<dir>/<source>/<original id>`` then ``<dir>/<original id>``, each as given
    (imSitu ids end in ``.jpg``) or with a usual image suffix. Ids never leave the folder: both
    parts must be plain names, and the file found must resolve to a path under the folder (a
    link out of it is refused). Until issue 40 only the part after ``:`` was checked, and
    ``..%2Foutside:secret`` or ``%2Fany%2Fdir:secret`` served files from anywhere.
    """
    if images_dir is None:
        return None
    source, _, original = image_id.partition(":")
    if not (_plain_name(source) and _plain_name(original)):
        return None
    root = images_dir.resolve()
    for folder in (root / source, root):
        for name in (original, *(original + s for s in PHOTO_SUFFIXES)):
            candidate = folder / name
            if candidate.suffix.lower() in PHOTO_SUFFIXES and candidate.is_file():
                real = candidate.resolve()
                return real if real.is_relative_to(root) else None
    return None


def _plain_name(part: str) -> bool:
    """One path component that names something inside a folder (no separator, no dot start,
    no NUL)."""
    return bool(part) and not any(c in part for c in "/\\\x00") and not part.startswith(".")


def data_uri(path: Path) -> str:
    """A photo as a ``data:`` URI (standalone SVG files keep working when moved)."""
    kind = mimetypes.guess_type(path.name)[0] or "image/jpeg"
    return f"data:{kind};base64," + base64.b64encode(path.read_bytes()).decode("ascii")
