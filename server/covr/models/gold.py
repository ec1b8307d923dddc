"""The hand-written exclusivity gold set (``resources/exclusivity_gold_*.tsv``).

Why separate files that training never sees: the paper reports accuracy on held-out
hand-labelled pairs (94.4 / 95.7 / 82.5 %); our training labels come from WordNet and the lexicon
rules, so only labels written independently by a person can say whether the model is right.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

from covr.models.errors import ModelResourceError
from covr.models.terms import MODEL_TYPES, ModelType, normalize_term

GOLD_FILES: dict[ModelType, str] = {
    "object": "exclusivity_gold_nouns.tsv",
    "attribute": "exclusivity_gold_attributes.tsv",
    "relation": "exclusivity_gold_relations.tsv",
}


@dataclass(frozen=True, slots=True)
class GoldPair:
    kind: ModelType
    x: str
    x_prime: str
    label: int


def parse_gold(text: str, kind: ModelType, name: str) -> list[GoldPair]:
    """Rows of one gold file; errors name the file and line."""
    out: list[GoldPair] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        where = f"{name}:{number}"
        if len(parts) != 3 or parts[2] not in ("0", "1"):
            raise ModelResourceError(f"{where}: expected x<TAB>x_prime<TAB>0|1, got {line!r}")
        try:
            x = normalize_term(parts[0], f"{where} x")
            y = normalize_term(parts[1], f"{where} x_prime")
        except ValueError as exc:
            raise ModelResourceError(str(exc)) from exc
        out.append(GoldPair(kind, x, y, int(parts[2])))
    return out


def load_gold() -> list[GoldPair]:
    """Every gold pair of the three packaged files."""
    out: list[GoldPair] = []
    base = resources.files("covr.models").joinpath("resources")
    for kind in MODEL_TYPES:
        name = GOLD_FILES[kind]
        out.extend(parse_gold(base.joinpath(name).read_text("utf-8"), kind, name))
    return out


def gold_keys(gold: list[GoldPair]) -> set[tuple[ModelType, frozenset[str]]]:
    """Unordered keys: training drops a gold pair in both orders, relations included."""
    return {(g.kind, frozenset((g.x, g.x_prime))) for g in gold}
