"""Bad input to the models gets errors that name the field; good input is normalized."""

from __future__ import annotations

import pytest

from covr.models import terms
from covr.models.errors import ModelInputError
from covr.models.terms import MAX_TERM_CHARS, node_type, normalize_term


def test_normalize_lowercases_collapses_and_folds_accents() -> None:
    assert normalize_term("  Tennis   Player ") == "tennis player"
    assert normalize_term("Café") == "cafe"
    assert normalize_term("crème brûlée") == "creme brulee"


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("", "empty"),
        ("   \t ", "empty"),
        ("x" * (MAX_TERM_CHARS + 1), "at most"),
        ("猫", "U+732B"),
        ("dog 🐕", "U+1F415"),
        ("a\x00b", "control"),
        ("¨", "no letters"),  # folds to a space and a combining mark (found by the RPC fuzz)
        (42, "must be a string"),
        (None, "must be a string"),
    ],
)
def test_bad_terms_are_refused_with_the_field_named(value: object, fragment: str) -> None:
    with pytest.raises(ModelInputError) as info:
        normalize_term(value, "pairs[3].x")
    assert info.value.field == "pairs[3].x"
    assert fragment in str(info.value)


def test_node_types_and_aliases() -> None:
    assert node_type("noun") == "object"
    assert node_type("Relation") == "relation"
    assert node_type("relmod") == "relmod"
    with pytest.raises(ModelInputError, match="unknown node type 'verb'"):
        node_type("verb")
    with pytest.raises(ModelInputError, match="node_type"):
        node_type(None)


def test_term_memo_holds_the_configured_number_of_terms(monkeypatch: pytest.MonkeyPatch) -> None:
    """``COVR_MODEL_CACHE_TERMS`` sizes the memo of checked terms (an LRU): answers are the
    same, memory is bounded."""
    monkeypatch.setattr(terms, "_memo", None)
    memo = terms.configure_term_cache(3)
    words = ["Dog", "café", "Big  Cat", "truck", "dog"]
    assert [normalize_term(w) for w in words] == ["dog", "cafe", "big cat", "truck", "dog"]
    info = memo.cache_info()  # type: ignore[attr-defined]
    assert info.maxsize == 3
    assert info.currsize == 3
