"""The import graph of the server (``server/covr``) and the loaders (``loaders/covr_loaders``),
computed from the source text (``ast``), and what issue 38 measures on it: circles (strongly
connected components of more than one module) and private names imported across files.

An edge ``a -> b`` means module ``a`` imports module ``b`` (``from b import x`` names ``b``, or
``b.x`` when ``x`` is itself a module). Each edge has a kind: ``module`` (at the top level of the
file, run at import), ``function`` (inside a function body: run when the function is called, the
usual way to hide a circle from the interpreter) or ``typing`` (under ``if TYPE_CHECKING:``, read
only by mypy). A circle counts every kind: a function-level import that closes a loop is still a
loop in the design, it is only not one Python trips over.

A private-name import is ``from a import _name`` (or ``from . import _name``) where ``_name``
is not a module: the importer reads another file's private helper. (``__name__``-style dunders
are not private.)

    .venv/bin/python tools/import_graph.py [ROOT]     # ROOT: a checkout (default: this one)

prints the numbers, the circles and the private imports; docs/architecture.md records them.
tests/unit/test_architecture.py calls :func:`build` on the tree to keep the goals (no circle
outside the benchmarks, no private-name import across files).
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

PACKAGES = {"covr": "server/covr", "covr_loaders": "loaders/covr_loaders"}
"""Package name -> its folder (pyproject's package-dir): the part of the house measured."""
GENERATED = ("covr.v1",)
"""protoc's output: not ours to shape."""


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    kind: str  # "module", "function" or "typing"
    line: int


@dataclass
class Graph:
    modules: dict[str, Path]
    edges: list[Edge] = field(default_factory=list)
    private: list[tuple[str, str, str, int]] = field(default_factory=list)
    """(importer, imported module, name, line) for each ``from m import _name`` across files."""

    def successors(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = defaultdict(set)
        for edge in self.edges:
            if edge.source != edge.target:
                out[edge.source].add(edge.target)
        return out

    def circles(self) -> list[list[str]]:
        """The strongly connected components of more than one module, each sorted."""
        return [sorted(c) for c in _components(sorted(self.modules), self.successors())]

    def edge_kinds(self, circle: list[str]) -> list[Edge]:
        inside = set(circle)
        return [e for e in self.edges if e.source in inside and e.target in inside]


def _module_name(root: Path, path: Path) -> str | None:
    for package, folder in PACKAGES.items():
        base = root / folder
        if path.is_relative_to(base):
            parts = [package, *path.relative_to(base).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            return ".".join(parts)
    return None


def _modules(root: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for folder in PACKAGES.values():
        for path in sorted((root / folder).rglob("*.py")):
            name = _module_name(root, path)
            if name and not any(name == g or name.startswith(g + ".") for g in GENERATED):
                found[name] = path
    return found


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute module a (possibly relative) ``from`` import names."""
    if level == 0:
        return target or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, target] if target else base)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import statement with its kind (module, function or typing)."""

    def walk(node: ast.AST, kind: str) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, kind
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                yield from walk(child, "function" if kind == "module" else kind)
            elif isinstance(child, ast.If) and _is_type_checking(child):
                for part in child.body:
                    yield from walk(ast.Module(body=[part], type_ignores=[]), "typing")
                for part in child.orelse:
                    yield from walk(ast.Module(body=[part], type_ignores=[]), kind)
            else:
                yield from walk(child, kind)

    yield from walk(tree, "module")


def _inside(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in PACKAGES)


def build(root: Path) -> Graph:
    """The import graph of the checkout at ``root``."""
    graph = Graph(_modules(root))
    for module, path in graph.modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node, kind in _imports(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if _inside(alias.name):
                        graph.edges.append(Edge(module, alias.name, kind, node.lineno))
                continue
            target = _resolve(module, is_package, node.level, node.module)
            if not _inside(target):
                continue
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                if submodule in graph.modules:
                    graph.edges.append(Edge(module, submodule, kind, node.lineno))
                    continue
                graph.edges.append(Edge(module, target, kind, node.lineno))
                if _private(alias.name):
                    graph.private.append((module, target, alias.name, node.lineno))
        graph.private.extend(_private_attributes(module, is_package, tree, graph.modules))
    graph.edges = sorted(set(graph.edges), key=lambda e: (e.source, e.line, e.target, e.kind))
    return graph


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_attributes(
    module: str, is_package: bool, tree: ast.Module, modules: dict[str, Path]
) -> Iterator[tuple[str, str, str, int]]:
    """``m._name`` where ``m`` is another of our modules bound by an import in this file."""
    aliases: dict[str, str] = {}
    for node, _kind in _imports(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in modules:
                    aliases[alias.asname] = alias.name
            continue
        target = _resolve(module, is_package, node.level, node.module)
        for alias in node.names:
            if f"{target}.{alias.name}" in modules:
                aliases[alias.asname or alias.name] = f"{target}.{alias.name}"
    for seen in ast.walk(tree):
        if (
            isinstance(seen, ast.Attribute)
            and isinstance(seen.value, ast.Name)
            and seen.value.id in aliases
            and _private(seen.attr)
            and aliases[seen.value.id] != module
        ):
            yield module, aliases[seen.value.id], seen.attr, seen.lineno


def _components(nodes: list[str], successors: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), those of two modules or more."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(successors.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(successors.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return sorted(found)


def report(graph: Graph) -> str:
    kinds: dict[str, int] = defaultdict(int)
    for edge in graph.edges:
        kinds[edge.kind] += 1
    circles = graph.circles()
    lines = [
        f"modules: {len(graph.modules)}",
        f"import edges: {len(graph.edges)} ("
        + ", ".join(f"{k} {kinds[k]}" for k in sorted(kinds))
        + ")",
        f"circles: {len(circles)}",
    ]
    for circle in circles:
        lines.append("  " + " <-> ".join(circle))
        for edge in graph.edge_kinds(circle):
            lines.append(f"    {edge.source}:{edge.line} -> {edge.target} ({edge.kind})")
    private = sorted(set(graph.private))
    lines.append(f"private names imported across files: {len(private)}")
    for importer, target, name, line in private:
        lines.append(f"  {importer}:{line} imports {target}.{name}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[1]
    print(report(build(root)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
