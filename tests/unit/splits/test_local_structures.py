"""Local structures (seed 004): trees, n-LS, symbol similarity (Fig. 3), easiness, TMCD."""

from __future__ import annotations

from typing import Any

import pytest

from covr.splits.local_structures import (
    EasinessModel,
    SymbolContexts,
    Tree,
    compound_divergence,
    local_structures,
    program_tree,
    structure_similarity,
)
from tests.unit.splits.programs import build

pytestmark = pytest.mark.unit

# Fig. 3 (top) of the paper: `exists` and `most` both appear under <s>, or, and; exists has the
# children {find, filter}, most {find, filter, with_relation}.
FIG3: list[Any] = [
    ("exists", ("find", "dog")),
    ("or", ("exists", ("filter", ("find", "cat"), "black")), ("most", ("find", "dog"), ("find", "cat"))),
    (
        "and",
        ("exists", ("find", "dog")),
        ("most", ("filter", ("find", "cat"), "white"), ("with_relation", ("find", "dog"), ("find", "cat"), "chasing")),
    ),
    ("most", ("find", "dog"), ("find", "cat")),
]  # fmt: skip


def trees(exprs: list[Any], **kw: bool) -> list[Tree]:
    return [program_tree(build(e), **kw) for e in exprs]


def test_program_tree_has_root_dependencies_then_arguments() -> None:
    tree = program_tree(build(("filter", ("find", "cat"), "black")))
    assert tree.labels == ["<s>", "filter", "find", "cat", "black"]
    assert tree.parent == [-1, 0, 1, 2, 1]
    assert tree.children[1] == [2, 4]


def test_nested_program_becomes_a_subtree() -> None:
    tree = program_tree(build(("all", ("find", "dog"), [("verify_attr", "black")])))
    assert tree.labels == ["<s>", "all", "find", "dog", "verify_attr", "black"]
    assert tree.parent[4] == 1


def test_anonymized_tree_keeps_operators_numbers_and_types() -> None:
    tree = program_tree(build(("eq", ("query_attr", ("find", "dog"), "color"), 2)), anonymize=True)
    assert tree.labels == ["<s>", "eq", "query_attr", "find", "X", "color", "2"]


def test_n_ls_sets() -> None:
    tree = program_tree(build(("filter", ("find", "cat"), "black")))
    two = {
        ("pc", "<s>", "filter"), ("pc", "filter", "find"), ("pc", "filter", "black"),
        ("pc", "find", "cat"), ("sib", "find", "black"),
    }  # fmt: skip
    assert local_structures(tree, 2) == two
    three = two | {
        ("pc2", "<s>", "filter", "find"), ("pc2", "<s>", "filter", "black"),
        ("pc2", "filter", "find", "cat"), ("psib", "filter", "find", "black"),
    }  # fmt: skip
    assert local_structures(tree, 3) == three
    four = three | {
        ("pc3", "<s>", "filter", "find", "cat"),
        ("gpsib", "<s>", "filter", "find", "black"),
    }
    assert local_structures(tree, 4) == four
    assert local_structures(tree, 2, siblings=False) == two - {("sib", "find", "black")}


def test_three_and_four_siblings() -> None:
    tree = program_tree(build(("f", "a", "b", "c", "d")))
    three = local_structures(tree, 3)
    assert ("sib2", "a", "b", "c") in three
    assert ("psib", "f", "a", "b") in three
    four = local_structures(tree, 4)
    assert ("sib3", "a", "b", "c", "d") in four
    assert ("psib2", "f", "b", "c", "d") in four
    with pytest.raises(ValueError, match="n must be"):
        local_structures(tree, 5)


def test_figure_3_similarity_of_exists_and_most_is_83_percent() -> None:
    contexts = SymbolContexts(trees(FIG3), siblings=False)  # the figure leaves siblings out
    assert contexts.similarity("exists", "most") == pytest.approx(5 / 6)  # (100 % + 66.7 %) / 2
    assert round(100 * contexts.similarity("exists", "most"), 1) == 83.3


def test_similarity_with_sibling_contexts() -> None:
    contexts = SymbolContexts(trees(FIG3))
    # parent 1, child 2/3, left {} vs {exists} = 0, right {most} vs {} = 0 → (1 + 2/3) / 4
    assert contexts.similarity("exists", "most") == pytest.approx(5 / 12)
    assert contexts.similarity("dog", "dog") == 1.0
    assert contexts.similarity("unknown", "other") == 0.0


def test_structure_similarity_rules() -> None:
    contexts = SymbolContexts(trees(FIG3), siblings=False)
    assert structure_similarity(("pc", "or", "exists"), ("pc", "or", "exists"), contexts) == 1.0
    assert structure_similarity(
        ("pc", "or", "exists"), ("pc", "or", "most"), contexts
    ) == pytest.approx(5 / 6)
    assert structure_similarity(("pc", "and", "exists"), ("pc", "or", "most"), contexts) == 0.0
    assert structure_similarity(("pc", "or", "exists"), ("sib", "or", "exists"), contexts) == 0.0


def test_easiness_is_min_over_test_structures_of_max_similarity() -> None:
    model = EasinessModel([build(e) for e in FIG3])
    seen = model.easiness(
        build(("and", ("exists", ("find", "dog")), ("most", ("find", "dog"), ("find", "cat"))))
    )
    assert seen.score == 1.0
    assert seen.unobserved == 0
    # or(exists, exists): the sibling pair (exists, exists) was never seen; the closest observed
    # structure is (exists, most), so easiness = sim(exists, most) with sibling contexts = 5/12.
    result = model.easiness(build(("or", ("exists", ("find", "dog")), ("exists", ("find", "cat")))))
    assert result.score == pytest.approx(5 / 12)
    assert result.hardest == ("sib", "exists", "exists")
    # a structure with an operator never seen at all gets no similar structure: easiness 0
    assert model.easiness(build(("xor", ("exists", ("find", "dog"))))).score == 0.0


def test_compound_divergence() -> None:
    same = compound_divergence([build(e) for e in FIG3], [build(e) for e in FIG3])
    assert same["atom_divergence"] == pytest.approx(0.0, abs=1e-12)
    assert same["compound_divergence"] == pytest.approx(0.0, abs=1e-12)
    other = compound_divergence([build(e) for e in FIG3], [build(("count", ("find", "horse")))])
    assert other["compound_divergence"] == 1.0
    assert 0 < other["atom_divergence"] < 1  # `find` is shared, `count`/`horse` are not
