"""WordNet 3.0 from Debian's ``wordnet-base`` read locally by nltk (no download, ever).

Why a prepared folder: nltk's reader wants the database files plus a ``lexnames`` table in one
directory. Debian installs the database under ``/usr/share/wordnet`` but not ``lexnames``; the
45-line table is printed in the ``lexnames(5WN)`` man page the package installs, so we generate the
file from that page (falling back to the same table written below, which the man page lists) and
copy the database files next to it (nltk refuses links that leave its data folder). ``scripts/setup-system.sh`` installs the packages.
"""

from __future__ import annotations

import gzip
import importlib.abc
import os
import re
import shutil
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

from covr.models.errors import ModelResourceError

__all__ = ["LEXNAMES", "lexnames_table", "open_wordnet", "prepare_wordnet_dir"]

# (lexicographer file number, name, syntactic category) as in lexnames(5WN).
_CATEGORY = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}
LEXNAMES: tuple[str, ...] = (
    "adj.all",
    "adj.pert",
    "adv.all",
    "noun.Tops",
    "noun.act",
    "noun.animal",
    "noun.artifact",
    "noun.attribute",
    "noun.body",
    "noun.cognition",
    "noun.communication",
    "noun.event",
    "noun.feeling",
    "noun.food",
    "noun.group",
    "noun.location",
    "noun.motive",
    "noun.object",
    "noun.person",
    "noun.phenomenon",
    "noun.plant",
    "noun.possession",
    "noun.process",
    "noun.quantity",
    "noun.relation",
    "noun.shape",
    "noun.state",
    "noun.substance",
    "noun.time",
    "verb.body",
    "verb.change",
    "verb.cognition",
    "verb.communication",
    "verb.competition",
    "verb.consumption",
    "verb.contact",
    "verb.creation",
    "verb.emotion",
    "verb.motion",
    "verb.perception",
    "verb.possession",
    "verb.social",
    "verb.stative",
    "verb.weather",
    "adj.ppl",
)
_MAN_PAGE = Path("/usr/share/man/man5/lexnames.5WN.gz")
_DATABASE_FILES = [
    "adj.exc",
    "adv.exc",
    "cntlist.rev",
    "data.adj",
    "data.adv",
    "data.noun",
    "data.verb",
    "index.adj",
    "index.adv",
    "index.noun",
    "index.sense",
    "index.verb",
    "noun.exc",
    "verb.exc",
]
_REQUIRED = ("data.noun", "index.noun", "data.adj", "index.adj", "data.verb", "index.verb")
_LINE = re.compile(r"^(\d\d)\s+([a-z]+\.[A-Za-z]+)\s")


def lexnames_table(man_page: Path = _MAN_PAGE) -> list[str]:
    """The ``lexnames`` file lines, read from the man page when it is there."""
    names: dict[int, str] = {}
    if man_page.is_file():
        with gzip.open(man_page, "rt", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                match = _LINE.match(line)
                if match:
                    names[int(match.group(1))] = match.group(2)
    if sorted(names) != list(range(len(LEXNAMES))) or tuple(names.values()) != LEXNAMES:
        names = dict(enumerate(LEXNAMES))  # man page missing or reformatted: same table
    return [f"{i:02d}\t{n}\t{_CATEGORY[n.split('.')[0]]}" for i, n in sorted(names.items())]


def prepare_wordnet_dir(source: Path, target: Path) -> Path:
    """A folder nltk can read: copies of ``source``'s database files plus ``lexnames``."""
    missing = [f for f in _REQUIRED if not (source / f).is_file()]
    if missing:
        raise ModelResourceError(
            f"WordNet 3.0 not found in {source} (missing {', '.join(missing)}); install the "
            "Debian packages wordnet-base and wordnet-sense-index (scripts/setup-system.sh) or "
            "set COVR_WORDNET_DIR"
        )
    target.mkdir(parents=True, exist_ok=True)
    for name in _DATABASE_FILES:
        src, dst = source / name, target / name
        if not src.is_file() or (dst.is_file() and dst.stat().st_size == src.stat().st_size):
            continue
        # nltk refuses symlinks leaving its root and multiply-linked files: a plain copy (~35 MB).
        tmp = target / f"{name}.{os.getpid()}.{threading.get_ident()}.tmp"
        shutil.copyfile(src, tmp)
        tmp.replace(dst)
    lexnames = target / "lexnames"
    text = "\n".join(lexnames_table()) + "\n"
    if not lexnames.is_file() or lexnames.read_text("utf-8") != text:
        tmp = target / f"lexnames.{threading.get_ident()}.tmp"
        tmp.write_text(text, "utf-8")
        tmp.replace(lexnames)
    return target


_LOCK = threading.Lock()
_READERS: dict[tuple[Path, Path], Any] = {}


def open_wordnet(source: Path, cache_dir: Path) -> Any:
    """One shared nltk ``WordNetCorpusReader`` per folder (loading takes a few seconds)."""
    key = (source.resolve(), cache_dir.resolve())
    with _LOCK:
        reader = _READERS.get(key)
        if reader is None:
            _import_nltk()
            import nltk.data

            # An nltk data folder: <cache>/corpora/wordnet (nltk looks WordNet up by that name
            # and only opens files under its data path).
            root = prepare_wordnet_dir(source, cache_dir / "corpora" / "wordnet")
            folder = str(cache_dir.resolve())
            if folder not in nltk.data.path:
                nltk.data.path.append(folder)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "multilingual functions not available"
                reader = _english_reader()(str(root), None)
            _READERS[key] = reader
        return reader


_NOT_FOR_WORDNET = ("scipy", "sklearn")
"""Packages nltk imports when they are installed (the training extra installs them) for its
statistics and classifiers, never for WordNet: ``import nltk`` took 3.5 s instead of 1.5 on a
quiet machine (``-X importtime``: ``scipy.stats`` through ``nltk.metrics``, scikit-learn through
``nltk.classify``), paid by every process that opens WordNet."""


class _HideFromNltk(importlib.abc.MetaPathFinder):
    """Makes :data:`_NOT_FOR_WORDNET` look absent while nltk is imported: nltk guards those
    imports (it leaves the features that need them unavailable), and the models use none."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname.partition(".")[0] in _NOT_FOR_WORDNET:
            raise ImportError(f"{fullname} is not imported for nltk's WordNet reader")


def _import_nltk() -> None:
    """Import nltk without the packages it does not need for WordNet, unless this process has
    imported them already (then nothing is saved, and nothing is hidden from nltk)."""
    if "nltk" in sys.modules or any(name in sys.modules for name in _NOT_FOR_WORDNET):
        return
    hide = _HideFromNltk()
    sys.meta_path.insert(0, hide)
    try:
        import nltk.corpus.reader.wordnet  # noqa: F401
    finally:
        sys.meta_path.remove(hide)


def _english_reader() -> Any:
    """nltk's reader without the multilingual (OMW) synset map it builds on opening.

    nltk compares the database's version ("3.0") with the name "wordnet", finds them unequal and
    maps every sense key of ``index.sense`` to itself, read twice: 55 % of the time opening
    WordNet took (8.2 of 14.8 s profiled; ``covr related`` on a new data directory: 11 s). The
    map only serves other languages' wordnets, which the models never read.
    """
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class EnglishWordNetReader(WordNetCorpusReader):  # type: ignore[misc]
        def map_wn(self, version: str = "wordnet") -> None:
            return None

    return EnglishWordNetReader
