"""Validation and normal form of the terms and node types the classifiers accept.

Why one place: the CLI, the gRPC service and the related-images lookup all pass user or dataset
text into the models, and each must get the same clear error for the same bad input.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from functools import lru_cache
from typing import Final, Literal

from covr.models.errors import ModelInputError

NodeType = Literal["object", "attribute", "relation", "relmod"]
NODE_TYPES: Final[tuple[NodeType, ...]] = ("object", "attribute", "relation", "relmod")
ModelType = Literal["object", "attribute", "relation"]
MODEL_TYPES: Final[tuple[ModelType, ...]] = ("object", "attribute", "relation")
_ALIASES: Final[dict[str, NodeType]] = {
    "object": "object",
    "noun": "object",
    "nouns": "object",
    "attribute": "attribute",
    "attributes": "attribute",
    "relation": "relation",
    "relations": "relation",
    "relmod": "relmod",
}
MAX_TERM_CHARS: Final = 100
TERM_CACHE: Final = 200_000
"""Terms the memo of :func:`normal_form` holds until a model loader sizes it from
``COVR_MODEL_CACHE_TERMS`` (whose default is the same number: tests/unit/test_settings.py)."""
"""Longer strings are not node names of any scene graph dataset (GQA's longest is ~30)."""


def node_type(value: object, field: str = "node_type") -> NodeType:
    """``object|attribute|relation|relmod`` (``noun`` is accepted for ``object``)."""
    if type(value) is str:
        kind = _ALIASES.get(value) or _ALIASES.get(value.strip().lower())
        if kind is not None:
            return kind
    raise ModelInputError(
        field, f"unknown node type {value!r}; expected one of {', '.join(NODE_TYPES)} (or noun)"
    )


def model_type(kind: NodeType) -> ModelType:
    """Rel-mods (imSitu connectors such as ``using``/``onto``) are scored as relations."""
    return "relation" if kind == "relmod" else kind


def normalize_term(value: object, field: str = "term") -> str:
    """Lower case, single spaces, accents folded (``café`` -> ``cafe``); errors name ``field``.

    Rejected: non-strings, empty or blank text, more than :data:`MAX_TERM_CHARS` characters,
    control characters, and characters with no ASCII form after accent folding (CJK, emoji),
    because WordNet and every feature here are defined over English words.
    """
    if type(value) is not str:
        raise ModelInputError(field, f"must be a string, got {type(value).__name__}")
    text, problem = normal_form(value)
    if problem is not None:
        raise ModelInputError(field, problem)
    return text


TermCheck = Callable[[str], tuple[str, str | None]]
_memo: TermCheck | None = None
_memo_size = 0


def normal_form(value: str) -> tuple[str, str | None]:
    """``(normal form, None)`` or ``("", problem)``; memoized because serving sees the same
    dataset names over and over (validation was a third of the cost of a cold batch). The memo
    holds ``COVR_MODEL_CACHE_TERMS`` terms (LRU): the model loaders size it from their settings
    section (:func:`size_term_cache`); before any has, it holds :data:`TERM_CACHE`."""
    memo = _memo or configure_term_cache(TERM_CACHE)
    return memo(value)


def size_term_cache(size: int) -> None:
    """Give the memo ``size`` terms, keeping what it holds when it has that size already (every
    model load of a process passes the same setting)."""
    if _memo is None or _memo_size != size:
        configure_term_cache(size)


def configure_term_cache(size: int) -> TermCheck:
    """A fresh memo of :func:`normal_form` holding ``size`` terms (what the settings say, or a
    test's own size); returns it."""
    global _memo, _memo_size
    _memo = lru_cache(maxsize=size)(_check_term)
    _memo_size = size
    return _memo


def _check_term(value: str) -> tuple[str, str | None]:
    """:func:`normal_form` without the memo."""
    if len(value) > MAX_TERM_CHARS:
        return "", f"is {len(value)} characters long; at most {MAX_TERM_CHARS} are allowed"
    text = " ".join(value.split()).lower()
    if not text:
        return "", "must not be empty or only whitespace"
    if not text.isascii():
        folded = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in folded if not unicodedata.combining(c))
        bad = sorted({c for c in text if not c.isascii()})
        if bad:
            shown = ", ".join(f"U+{ord(c):04X}" for c in bad[:5])
            return "", (
                f"{value!r} has characters with no English form ({shown}); "
                "the models score English words only"
            )
        # "¨" folds to a space and a combining mark: nothing is left of it (a term without
        # a word reached the featurizer and failed there, an INTERNAL error of the service)
        text = " ".join(text.split())
        if not text:
            return "", f"{value!r} has no letters once its accents are removed"
    if not text.isprintable():
        return "", f"{value!r} contains control characters"
    return text, None
