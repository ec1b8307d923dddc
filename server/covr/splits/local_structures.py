"""Local structures of programs (seed 004, Bogin et al. "Unobserved local structures ...").

A program becomes a tree (§4.1): a node per step labelled by its operator, whose children are
its dependencies (in order) followed by its literal arguments (leaves labelled by the value) and
nested condition programs (the root step of the nested program); a root ``<s>`` sits above the
program's last step. The graph adds edges between *consecutive* siblings.

n-LS (§4.1, App. C): 2-LS = parent-child pairs and consecutive-sibling pairs; 3-LS adds
grandparent-parent-child chains, three consecutive siblings and a parent with two consecutive
children; 4-LS adds four-node chains, four consecutive siblings, a grandparent with a child and
two consecutive grandchildren, and a parent with three consecutive children.

Symbol similarity (§4.2) is the mean Jaccard similarity of a symbol's parent, child,
left-sibling and right-sibling context sets in the training programs, over the context types
non-empty for either symbol. Two structures are similar only if they have the same shape and
differ in at most one label: 1.0 if equal, the symbol similarity of the differing labels
otherwise. Instance easiness (§4.3) = min over the test program's structures of the max
similarity to any training structure. Compound divergence (TMCD, App. D) is here too; the
adversarial splits (§6.1) and budgeted training-set selection (§6.2) built on these pieces are
in :mod:`covr.splits.structure_splits`.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from covr.scene.program import anonymize_argument, name_positions
from covr.splits.examples import Step

ROOT = "<s>"
QUANTIFIED = "<obj>"
Structure = tuple[str, ...]
"""(shape, label, label, ...): the shape names the edges, the labels the nodes in a fixed order."""

CONTEXTS = ("parent", "child", "left", "right")


@dataclass
class Tree:
    """A program tree: node labels, parent of each node (-1 for the root) and ordered children."""

    labels: list[str] = field(default_factory=list)
    parent: list[int] = field(default_factory=list)
    children: list[list[int]] = field(default_factory=list)

    def add(self, label: str, parent: int) -> int:
        self.labels.append(label)
        self.parent.append(parent)
        self.children.append([])
        node = len(self.labels) - 1
        if parent >= 0:
            self.children[parent].append(node)
        return node


def _leaf_label(arg: Any, as_name: bool) -> str:
    """A literal argument's leaf: the placeholder for a name being anonymized, else its value."""
    return str(anonymize_argument(arg, as_name))


def program_tree(program: Sequence[Step], *, anonymize: bool = False) -> Tree:
    """The tree of a program (see the module docstring); names become ``X`` when anonymized,
    decided by the argument's position (:func:`covr.scene.program.name_positions`)."""
    tree = Tree()
    root = tree.add(ROOT, -1)

    def emit(prog: Sequence[Step], index: int, parent: int) -> None:
        step = prog[index]
        node = tree.add(str(step["operation"]), parent)
        for dep in step.get("dependencies", ()):
            if dep < 0:
                tree.add(QUANTIFIED, node)  # a nested program's reference to its object
            else:
                emit(prog, dep, node)
        arguments = step.get("arguments", ())
        names = name_positions(step) if anonymize else [False] * len(arguments)
        for arg, is_name in zip(arguments, names, strict=True):
            if isinstance(arg, list):
                if arg:
                    emit(arg, len(arg) - 1, node)
            else:
                tree.add(_leaf_label(arg, is_name), node)

    if program:
        emit(program, len(program) - 1, root)
    return tree


def local_structures(tree: Tree, n: int = 2, *, siblings: bool = True) -> set[Structure]:
    """The n-LS set of a tree (n = 2, 3 or 4); ``siblings=False`` is the paper's NoSib ablation."""
    if n not in (2, 3, 4):
        raise ValueError(f"n must be 2, 3 or 4, got {n}")
    labels = tree.labels
    out: set[Structure] = set()
    for p, kids in enumerate(tree.children):
        lp = labels[p]
        g = tree.parent[p]
        for c in kids:
            out.add(("pc", lp, labels[c]))
            if n >= 3 and g >= 0:
                out.add(("pc2", labels[g], lp, labels[c]))
                if n >= 4 and tree.parent[g] >= 0:
                    out.add(("pc3", labels[tree.parent[g]], labels[g], lp, labels[c]))
        if not siblings:
            continue
        k = [labels[c] for c in kids]
        for i in range(len(k) - 1):
            out.add(("sib", k[i], k[i + 1]))
            if n >= 3:
                out.add(("psib", lp, k[i], k[i + 1]))
                if i + 2 < len(k):
                    out.add(("sib2", k[i], k[i + 1], k[i + 2]))
            if n >= 4:
                if g >= 0:
                    out.add(("gpsib", labels[g], lp, k[i], k[i + 1]))
                if i + 2 < len(k):
                    out.add(("psib2", lp, k[i], k[i + 1], k[i + 2]))
                if i + 3 < len(k):
                    out.add(("sib3", k[i], k[i + 1], k[i + 2], k[i + 3]))
    return out


def program_key(program: Sequence[Step], *, anonymize: bool) -> str:
    """Identity of a program for deduplication (anonymized or with its names)."""
    tree = program_tree(program, anonymize=anonymize)
    return json.dumps([tree.labels, tree.parent], separators=(",", ":"))


class SymbolContexts:
    """Parent / child / left-sibling / right-sibling context sets of every training symbol."""

    def __init__(self, trees: Iterable[Tree] = (), *, siblings: bool = True) -> None:
        self.siblings = siblings
        self.ctx: defaultdict[str, tuple[set[str], set[str], set[str], set[str]]] = defaultdict(
            lambda: (set(), set(), set(), set())
        )
        self._cache: dict[tuple[str, str], float] = {}
        for tree in trees:
            self.add(tree)

    def add(self, tree: Tree) -> None:
        labels = tree.labels
        for p, kids in enumerate(tree.children):
            lp = labels[p]
            mine = self.ctx[lp]
            for i, c in enumerate(kids):
                lc = labels[c]
                mine[1].add(lc)
                theirs = self.ctx[lc]
                theirs[0].add(lp)
                if self.siblings:
                    if i > 0:
                        theirs[2].add(labels[kids[i - 1]])
                    if i + 1 < len(kids):
                        theirs[3].add(labels[kids[i + 1]])
        self._cache.clear()

    def similarity(self, a: str, b: str) -> float:
        """Mean Jaccard over the context types non-empty for either symbol (0 if none is)."""
        if a == b:
            return 1.0
        key = (a, b) if a < b else (b, a)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        empty: tuple[set[str], set[str], set[str], set[str]] = (set(), set(), set(), set())
        ca = self.ctx.get(a, empty)
        cb = self.ctx.get(b, empty)
        total = 0.0
        relevant = 0
        for x, y in zip(ca, cb, strict=True):
            if not x and not y:
                continue
            relevant += 1
            total += len(x & y) / len(x | y)
        value = total / relevant if relevant else 0.0
        self._cache[key] = value
        return value


def structure_similarity(s1: Structure, s2: Structure, contexts: SymbolContexts) -> float:
    """1.0 if equal; symbol similarity if same shape and one label differs; 0 otherwise."""
    if s1 == s2:
        return 1.0
    if len(s1) != len(s2) or s1[0] != s2[0]:
        return 0.0
    diff = [i for i in range(1, len(s1)) if s1[i] != s2[i]]
    if len(diff) != 1:
        return 0.0
    return contexts.similarity(s1[diff[0]], s2[diff[0]])


def _wildcards(s: Structure) -> Iterator[tuple[int, tuple[str, ...]]]:
    for i in range(1, len(s)):
        yield i, (*s[:i], "\x00", *s[i + 1 :])


class StructureIndex:
    """Observed structures, indexed so that the most similar one is found without a scan."""

    def __init__(self, contexts: SymbolContexts) -> None:
        self.contexts = contexts
        self.observed: set[Structure] = set()
        self._slots: defaultdict[tuple[str, ...], set[str]] = defaultdict(set)
        self._best: dict[Structure, float] = {}

    def add(self, structures: Iterable[Structure]) -> None:
        for s in structures:
            if s in self.observed:
                continue
            self.observed.add(s)
            for i, key in _wildcards(s):
                self._slots[key].add(s[i])
        self._best.clear()

    def best(self, s: Structure) -> float:
        """max over observed structures of the similarity to ``s``."""
        if s in self.observed:
            return 1.0
        cached = self._best.get(s)
        if cached is not None:
            return cached
        value = 0.0
        for i, key in _wildcards(s):
            for other in self._slots.get(key, ()):
                value = max(value, self.contexts.similarity(s[i], other))
                if value >= 1.0:
                    break
        self._best[s] = value
        return value

    def neighbours(self, s: Structure) -> Iterator[Structure]:
        """Observed structures of the same shape that differ from ``s`` in one label."""
        for i, key in _wildcards(s):
            for other in self._slots.get(key, ()):
                if other != s[i]:
                    yield (*s[:i], other, *s[i + 1 :])


@dataclass
class Easiness:
    """Instance easiness and the structure that decided it."""

    score: float
    hardest: Structure | None
    unobserved: int


class EasinessModel:
    """The decision rule of §4.3, fitted on training programs."""

    def __init__(
        self,
        train_programs: Iterable[Sequence[Step]],
        *,
        n: int = 2,
        anonymize: bool = False,
        siblings: bool = True,
    ) -> None:
        self.n = n
        self.anonymize = anonymize
        self.siblings = siblings
        self.contexts = SymbolContexts(siblings=siblings)
        self.index = StructureIndex(self.contexts)
        seen: set[str] = set()
        for program in train_programs:
            tree = program_tree(program, anonymize=anonymize)
            key = json.dumps([tree.labels, tree.parent], separators=(",", ":"))
            if key in seen:
                continue
            seen.add(key)
            self.contexts.add(tree)
            self.index.add(local_structures(tree, n, siblings=siblings))
        self._by_key: dict[str, Easiness] = {}

    def structures(self, program: Sequence[Step]) -> set[Structure]:
        return local_structures(
            program_tree(program, anonymize=self.anonymize), self.n, siblings=self.siblings
        )

    def easiness(self, program: Sequence[Step]) -> Easiness:
        tree = program_tree(program, anonymize=self.anonymize)
        key = json.dumps([tree.labels, tree.parent], separators=(",", ":"))
        cached = self._by_key.get(key)
        if cached is not None:
            return cached
        score = 1.0
        hardest: Structure | None = None
        unobserved = 0
        for s in sorted(local_structures(tree, self.n, siblings=self.siblings)):
            value = self.index.best(s)
            if value < 1.0:
                unobserved += 1
            if value < score:
                score, hardest = value, s
        result = Easiness(score, hardest, unobserved)
        self._by_key[key] = result
        return result


# --- compound divergence (TMCD, App. D) ---------------------------------------------------------


def atoms_and_compounds(tree: Tree) -> tuple[Counter[str], Counter[Structure]]:
    """Atoms = node labels; compounds = sub-trees of depth <= 2 (pairs, chains, forks)."""
    labels = tree.labels
    atoms: Counter[str] = Counter(labels[1:])
    compounds: Counter[Structure] = Counter()
    for p, kids in enumerate(tree.children):
        if p == 0:
            continue
        for i, c in enumerate(kids):
            compounds[("pc", labels[p], labels[c])] += 1
            for gc in tree.children[c]:
                compounds[("pc2", labels[p], labels[c], labels[gc])] += 1
            for c2 in kids[i + 1 :]:
                compounds[("fork", labels[p], labels[c], labels[c2])] += 1
    return atoms, compounds


def _chernoff_divergence(p: Mapping[Any, int], q: Mapping[Any, int], alpha: float) -> float:
    sp = sum(p.values())
    sq = sum(q.values())
    if not sp or not sq:
        return 1.0
    coefficient = sum(
        math.pow(p[k] / sp, alpha) * math.pow(q[k] / sq, 1 - alpha) for k in p.keys() & q.keys()
    )
    return max(0.0, 1.0 - coefficient)


def compound_divergence(
    train_programs: Iterable[Sequence[Step]],
    test_programs: Iterable[Sequence[Step]],
    *,
    alpha: float = 0.5,
    anonymize: bool = False,
) -> dict[str, float]:
    """Atom and compound divergence (1 - Chernoff coefficient; the paper uses alpha = 0.5)."""
    sides: list[tuple[Counter[str], Counter[Structure]]] = []
    for programs in (train_programs, test_programs):
        atoms: Counter[str] = Counter()
        compounds: Counter[Structure] = Counter()
        for program in programs:
            a, c = atoms_and_compounds(program_tree(program, anonymize=anonymize))
            atoms.update(a)
            compounds.update(c)
        sides.append((atoms, compounds))
    return {
        "atom_divergence": _chernoff_divergence(sides[0][0], sides[1][0], alpha),
        "compound_divergence": _chernoff_divergence(sides[0][1], sides[1][1], alpha),
    }
