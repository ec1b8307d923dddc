"""Nested (tree) form of a subgraph and its text key: writing, escaping and parsing.

Why a second form beside :class:`covr.scene.subgraph.Subgraph`: the flat, index-based form is what
Cypher builders and edit signatures need, but canonical ordering, keys, text and programs are all
naturally recursive. Both forms convert into each other; this module knows nothing about the
structure rules (they live in ``subgraph.py``), so a parsed tree may still be invalid.

Key grammar (whitespace is part of names, never ignored)::

    node  := NAME ( "[" NAME "]" )? ( edge | "{" edge ( "," edge )* "}" )?
    edge  := "-(" NAME ( "|" NAME ":" node )* ")->" node

``man[tall]-(wearing)->hat[red]`` is a hop, ``man{-(holding)->bat,-(wearing)->hat}`` a V-shape,
``man-(stapling|onto:wall|using:stapler)->paper`` an imSitu frame whose relation carries two
rel-mods. Inside a NAME the characters ``\\ [ ] ( ) { } | : ,`` are escaped with a backslash, as is
whitespace at either end of a name (so a shell's trimming cannot change a key). An unescaped ``-``
is part of a name unless an unescaped ``(`` follows it, so ``t-shirt`` needs no escaping.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

SPECIAL = frozenset("\\[](){}|:,")


class KeySyntaxError(ValueError):
    """A key does not follow the grammar; ``position`` is the 0-based offset of the problem."""

    def __init__(self, key: str, position: int, message: str) -> None:
        super().__init__(f"{message} at position {position} of key {key!r}")
        self.key = key
        self.position = position


@dataclass(frozen=True, slots=True)
class TreeMod:
    """A rel-mod ``name`` pointing to ``target`` (imSitu: ``onto`` -> wall)."""

    name: str
    target: TreeNode


@dataclass(frozen=True, slots=True)
class TreeEdge:
    """A relation ``name`` to ``target`` with its rel-mods."""

    name: str
    target: TreeNode
    mods: tuple[TreeMod, ...] = ()


@dataclass(frozen=True, slots=True)
class TreeNode:
    """An object with its optional attribute and outgoing relations."""

    name: str
    attribute: str | None = None
    edges: tuple[TreeEdge, ...] = ()


@lru_cache(maxsize=1 << 14)
def escape(name: str) -> str:
    """``name`` with the key's special characters (and edge whitespace) backslash-escaped."""
    out = [f"\\{c}" if c in SPECIAL else c for c in name]
    if out and name[0].isspace():
        out[0] = "\\" + name[0]
    if len(out) > 1 and name[-1].isspace():
        out[-1] = "\\" + name[-1]
    return "".join(out)


# -- writing -----------------------------------------------------------------------------------


def canonical_tree(node: TreeNode) -> TreeNode:
    """The same tree with rel-mods and edges sorted by their key text.

    Sorting by the *named* text makes two trees with the same content identical whatever order
    they were built in; since no noun repeats in a valid subgraph, no two siblings tie.
    """
    edges = []
    for edge in node.edges:
        mods = sorted(
            (TreeMod(m.name, canonical_tree(m.target)) for m in edge.mods), key=format_mod
        )
        edges.append(TreeEdge(edge.name, canonical_tree(edge.target), tuple(mods)))
    edges.sort(key=format_edge)
    return TreeNode(node.name, node.attribute, tuple(edges))


def format_mod(mod: TreeMod) -> str:
    return f"|{escape(mod.name)}:{format_node(mod.target)}"


def format_edge(edge: TreeEdge) -> str:
    mods = "".join(format_mod(m) for m in edge.mods)
    return f"-({escape(edge.name)}{mods})->{format_node(edge.target)}"


def format_node(node: TreeNode) -> str:
    """The key text of ``node`` in the order its edges are stored (canonicalize first)."""
    text = escape(node.name)
    if node.attribute is not None:
        text += f"[{escape(node.attribute)}]"
    if len(node.edges) == 1:
        text += format_edge(node.edges[0])
    elif node.edges:
        text += "{" + ",".join(format_edge(e) for e in node.edges) + "}"
    return text


def format_shape(node: TreeNode) -> str:
    """The anonymized key: names become ``O``/``A``/``R``/``M``, siblings sorted by that text."""
    text = "O" + ("[A]" if node.attribute is not None else "")
    edges = []
    for edge in node.edges:
        mods = sorted(f"|M:{format_shape(m.target)}" for m in edge.mods)
        edges.append(f"-(R{''.join(mods)})->{format_shape(edge.target)}")
    edges.sort()
    if len(edges) == 1:
        text += edges[0]
    elif edges:
        text += "{" + ",".join(edges) + "}"
    return text


# -- parsing -----------------------------------------------------------------------------------


class _Parser:
    def __init__(self, key: str) -> None:
        self.key = key
        self.pos = 0

    def fail(self, message: str) -> KeySyntaxError:
        return KeySyntaxError(self.key, self.pos, message)

    def peek(self, text: str) -> bool:
        return self.key.startswith(text, self.pos)

    def expect(self, text: str) -> None:
        if not self.peek(text):
            raise self.fail(f"expected {text!r}")
        self.pos += len(text)

    def name(self, *, object_name: bool) -> str:
        """Read a NAME; for object names an unescaped ``-(`` also ends it."""
        key, out, start = self.key, [], self.pos
        while self.pos < len(key):
            c = key[self.pos]
            if c == "\\":
                if self.pos + 1 >= len(key):
                    raise self.fail("dangling backslash")
                out.append(key[self.pos + 1])
                self.pos += 2
                continue
            if c in SPECIAL or (object_name and c == "-" and key.startswith("(", self.pos + 1)):
                break
            out.append(c)
            self.pos += 1
        if self.pos == start:
            raise self.fail("expected a name")
        return "".join(out)

    def node(self) -> TreeNode:
        name = self.name(object_name=True)
        attribute = None
        if self.peek("["):
            self.pos += 1
            attribute = self.name(object_name=False)
            self.expect("]")
        edges: list[TreeEdge] = []
        if self.peek("-("):
            edges.append(self.edge())
        elif self.peek("{"):
            self.pos += 1
            edges.append(self.edge())
            while self.peek(","):
                self.pos += 1
                edges.append(self.edge())
            self.expect("}")
        return TreeNode(name, attribute, tuple(edges))

    def edge(self) -> TreeEdge:
        self.expect("-(")
        name = self.name(object_name=False)
        mods: list[TreeMod] = []
        while self.peek("|"):
            self.pos += 1
            mod_name = self.name(object_name=False)
            self.expect(":")
            mods.append(TreeMod(mod_name, self.node()))
        self.expect(")->")
        return TreeEdge(name, self.node(), tuple(mods))


def parse_key(key: str) -> TreeNode:
    """Parse a key (or a shape key) into a tree; raise :class:`KeySyntaxError` if malformed."""
    parser = _Parser(key)
    node = parser.node()
    if parser.pos != len(key):
        raise parser.fail("unexpected text after the subgraph")
    return node
