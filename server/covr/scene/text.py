"""English rendering of subgraphs (DESIGN.md §4): "a man that is wearing a red hat".

Why hand-written rules instead of an inflection library: the vocabulary is small and visual
(GQA/VG/imSitu nouns), the few irregular words matter a lot in generated questions ("people",
"jeans", "glasses"), and the output must be deterministic and dependency-free.

Forms:
- :func:`describe` — the long form used in questions. Relations become relative clauses
  ("that is on", "that has"), chains nest ("a man that is holding a bat that is on a wooden
  table"), two relations of one object are joined with "and" ("... that is holding a bat and is
  wearing a hat"), rel-mods follow their relation's object with their connector ("a man that is
  stapling a paper onto a wall using a stapler"). ``plural=True`` makes the root plural ("men that
  are wearing a red hat").
- :func:`describe_short` — the short form: no articles, no "that is" ("young man wearing red hat").
"""

from __future__ import annotations

from functools import lru_cache

from covr.scene.subgraph import Subgraph
from covr.scene.tree import TreeEdge, TreeNode

IRREGULAR_PLURALS: dict[str, str] = {
    "man": "men",
    "woman": "women",
    "person": "people",
    "child": "children",
    "foot": "feet",
    "tooth": "teeth",
    "goose": "geese",
    "mouse": "mice",
    "ox": "oxen",
    "leaf": "leaves",
    "knife": "knives",
    "wife": "wives",
    "life": "lives",
    "shelf": "shelves",
    "wolf": "wolves",
    "loaf": "loaves",
    "calf": "calves",
    "half": "halves",
    "scarf": "scarves",
    "thief": "thieves",
    "policeman": "policemen",
    "fireman": "firemen",
    "gentleman": "gentlemen",
    "businessman": "businessmen",
    "snowman": "snowmen",
    "cactus": "cacti",
    "fungus": "fungi",
    "tomato": "tomatoes",
    "potato": "potatoes",
    "hero": "heroes",
    "volcano": "volcanoes",
    "mango": "mangoes",
    "photo": "photos",
    "piano": "pianos",
    "radio": "radios",
    "kangaroo": "kangaroos",
    "zoo": "zoos",
    "video": "videos",
    "logo": "logos",
    "roof": "roofs",
    "chief": "chiefs",
    "belief": "beliefs",
    "cliff": "cliffs",
    "giraffe": "giraffes",
}
PLURAL_ONLY: frozenset[str] = frozenset(
    {
        # pluralia tantum and collective plurals: no article, plural verb, no singular to compare
        "jeans",
        "glasses",
        "sunglasses",
        "eyeglasses",
        "goggles",
        "pants",
        "shorts",
        "trousers",
        "scissors",
        "tongs",
        "pliers",
        "binoculars",
        "headphones",
        "earphones",
        "clothes",
        "overalls",
        "pajamas",
        "leggings",
        "tights",
        "boxers",
        "briefs",
        "people",
        "police",
        "cattle",
        "stairs",
        "suspenders",
        "sweatpants",
        "khakis",
        "slacks",
        "jeans shorts",
        # window blinds: "blind" is a window blind too, but the slats of one window are named
        # "blinds" and have no singular ("vertical blindses" before issue 37)
        "blinds",
    }
)
_NOT_PLURAL_ENDINGS = ("ss", "us", "is")
_SINGULAR_IN_S: frozenset[str] = frozenset(
    {
        "lens",
        "news",
        "series",
        "species",
        "tennis",
        "chess",
        "canvas",
        "gas",
        "bus",
        "iris",
        "octopus",
        "cactus",
        "hummus",
        "asparagus",
        "christmas",
        "atlas",
    }
)
INVARIANT: frozenset[str] = frozenset(
    {
        # same singular and plural
        "sheep",
        "deer",
        "fish",
        "moose",
        "bison",
        "aircraft",
        "series",
        "species",
        "shrimp",
    }
)
MASS_NOUNS: frozenset[str] = frozenset(
    {
        # no article in the singular: "a boat that is in water"
        "water",
        "snow",
        "grass",
        "sand",
        "dirt",
        "hair",
        "fur",
        "mud",
        "ice",
        "rice",
        "bread",
        "meat",
        "cheese",
        "broccoli",
        "lettuce",
        "foliage",
        "gravel",
        "smoke",
        "steam",
        "sunlight",
        "food",
        "furniture",
        "luggage",
        "traffic",
        "graffiti",
        "pasta",
        "soup",
        "milk",
        "coffee",
        "tea",
        "wine",
        "beer",
        "juice",
        "sauce",
        "cream",
        "frosting",
        "icing",
        "paint",
        "writing",
        "text",
        "lettering",
        "wood",
        "metal",
        "concrete",
        "cloth",
        "fabric",
        "plastic",
        "leather",
        "foam",
        "rope",
        "wire",
        "string",
        "wool",
        "hay",
        "straw",
        "mulch",
        "soil",
        "pavement",
        "asphalt",
        "clothing",
        "equipment",
        "machinery",
        "money",
        "stuff",
        "debris",
        "trash",
        "garbage",
        "rubbish",
        "scenery",
        "weather",
        "daylight",
        "darkness",
        "lightning",
        "fog",
        "mist",
        "rain",
        "vegetation",
        # issue 37: counted on 100 real GQA images ("How many mustards", "exactly 2 basils")
        "mustard",
        "basil",
        "toilet paper",
        "produce",
    }
)
# Words beginning with a vowel letter but a consonant sound, and the reverse (silent h).
_A_BEFORE_VOWEL = (
    "uni",
    "use",
    "usu",
    "uti",
    "ure",
    "uro",
    "eu",
    "ewe",
    "one",
    "once",
    "ubi",
    "uku",
    "ufo",
    "ute",
    "utensil",
    "uganda",
    "ukulele",
)
_AN_BEFORE_H = ("hour", "honest", "honor", "honour", "heir", "herb")
FINITE_VERBS: dict[str, str] = {
    # relation words that are finite verbs: singular -> plural form (GQA "has", "have");
    # the question renderer (covr.questions.render) conjugates with the same table
    "has": "have",
    "contains": "contain",
    "covers": "cover",
    "holds": "hold",
    "shows": "show",
    "hangs": "hang",
    "sits": "sit",
    "stands": "stand",
    "wears": "wear",
    "surrounds": "surround",
}
_FINITE_PLURAL = {many: one for one, many in FINITE_VERBS.items()}
_PLURAL_TO_SINGULAR = {many: one for one, many in IRREGULAR_PLURALS.items()} | {
    "skis": "ski",
    "taxis": "taxi",
    "kiwis": "kiwi",
    "menus": "menu",
    "tutus": "tutu",
}


def indefinite_article(phrase: str) -> str:
    """``"a"`` or ``"an"`` for the first word of ``phrase`` (by sound, for common exceptions)."""
    word = phrase.strip().lower()
    if word.startswith(_AN_BEFORE_H):
        return "an"
    if word.startswith(_A_BEFORE_VOWEL):
        return "a"
    return "an" if word[:1] in ("a", "e", "i", "o", "u", "8") else "a"


def _last_word(noun: str) -> str:
    return noun.strip().lower().rpartition(" ")[2]


_WORD_CACHE = 1 << 14
"""Entries of each memoized inflection: more than the datasets' vocabularies (~3,000 names in
GQA), bounded because a long-running service also inflects names its callers send."""


@lru_cache(maxsize=_WORD_CACHE)
def is_plural(noun: str) -> bool:
    """Whether ``noun`` is already plural (``people``, ``jeans``, ``men``, ``trees``)."""
    whole, last = noun.strip().lower(), _last_word(noun)
    if whole in PLURAL_ONLY or last in PLURAL_ONLY:
        return True
    if last in INVARIANT or last in _SINGULAR_IN_S or last in IRREGULAR_PLURALS:
        return False
    if last in _PLURAL_TO_SINGULAR:
        return True
    return len(last) > 2 and last.endswith("s") and not last.endswith(_NOT_PLURAL_ENDINGS)


def _pluralize_word(word: str) -> str:
    lower = word.lower()
    if lower in IRREGULAR_PLURALS:
        return IRREGULAR_PLURALS[lower]
    if lower in INVARIANT or lower in MASS_NOUNS:
        return word
    if lower.endswith("man") and lower not in ("human", "german", "shaman"):
        return word[:-3] + "men"
    if lower.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


@lru_cache(maxsize=_WORD_CACHE)
def plural(noun: str) -> str:
    """The plural of ``noun`` (a compound's last word is inflected: "tennis players")."""
    if not noun.strip() or is_plural(noun) or noun.strip().lower() in MASS_NOUNS:
        return noun  # "toilet paper": a mass compound has no plural either
    head, _, last = noun.rpartition(" ")
    return f"{head} {_pluralize_word(last)}" if head else _pluralize_word(last)


@lru_cache(maxsize=_WORD_CACHE)
def singular(noun: str) -> str:
    """A best-effort singular, used to compare nouns; plural-only words are returned as is."""
    if noun.strip().lower() in _PLURAL_TO_SINGULAR:
        return _PLURAL_TO_SINGULAR[noun.strip().lower()]
    if not is_plural(noun) or noun.strip().lower() in PLURAL_ONLY:
        return noun
    head, _, last = noun.rpartition(" ")
    lower = last.lower()
    if _last_word(noun) in PLURAL_ONLY:
        one = last
    elif lower in _PLURAL_TO_SINGULAR:
        one = _PLURAL_TO_SINGULAR[lower]
    elif lower.endswith("men"):
        one = last[:-3] + "man"
    elif lower.endswith("ies") and len(lower) > 4:
        one = last[:-3] + "y"
    elif lower.endswith(("ches", "shes", "xes", "sses", "zes", "uses")):
        one = last[:-2]
    else:
        one = last[:-1]
    return f"{head} {one}" if head else one


def noun_phrase(
    name: str, attribute: str | None = None, *, plural_form: bool = False, article: bool = True
) -> str:
    """``"a red hat"``, ``"an old man"``, ``"jeans"``, ``"men"`` (no article for plurals/mass)."""
    noun = plural(name) if plural_form else name
    words = f"{attribute} {noun}" if attribute else noun
    if not article or plural_form or is_plural(name) or name.strip().lower() in MASS_NOUNS:
        return words
    return f"{indefinite_article(words)} {words}"


def _relation_phrase(relation: str, plural_subject: bool, *, short: bool) -> str:
    """``"is wearing"``, ``"are on"``, ``"has"``/``"have"``; the short form is the bare relation."""
    if short:
        return relation
    first, _, rest = relation.partition(" ")
    lower = first.lower()
    if lower in ("has", "have"):
        verb = "have" if plural_subject else "has"
    elif lower in FINITE_VERBS:
        verb = FINITE_VERBS[lower] if plural_subject else first
    elif lower in _FINITE_PLURAL:
        verb = first if plural_subject else _FINITE_PLURAL[lower]
    else:
        return f"{'are' if plural_subject else 'is'} {relation}"
    return f"{verb} {rest}" if rest else verb


def _edge_text(edge: TreeEdge, plural_subject: bool, *, short: bool) -> str:
    parts = [
        _relation_phrase(edge.name, plural_subject, short=short),
        _node_text(edge.target, plural_form=False, short=short),
    ]
    for mod in edge.mods:
        parts.append(mod.name)
        parts.append(_node_text(mod.target, plural_form=False, short=short))
    return " ".join(parts)


def _node_text(node: TreeNode, *, plural_form: bool, short: bool) -> str:
    head = noun_phrase(node.name, node.attribute, plural_form=plural_form, article=not short)
    if not node.edges:
        return head
    plural_subject = plural_form or is_plural(node.name)
    clauses = [_edge_text(e, plural_subject, short=short) for e in node.edges]
    if short:
        return f"{head} {' and '.join(clauses)}"
    return f"{head} that {' and '.join(clauses)}"


def describe(g: Subgraph, *, plural: bool = False) -> str:
    """The long description; ``plural`` makes the root plural ("men that are ...")."""
    return _node_text(g.tree(), plural_form=plural, short=False)


def describe_short(g: Subgraph, *, plural: bool = False) -> str:
    """The short description: "young man wearing red hat"."""
    return _node_text(g.tree(), plural_form=plural, short=True)
