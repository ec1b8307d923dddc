"""The reference program of a subgraph (paper Table 10/11): rows of find / filter / with_relation.

A program is a list of rows ``{"operation", "arguments", "dependencies"}`` as in the released COVR
files: ``arguments`` holds literal values (names), ``dependencies`` the 0-based indices of earlier
rows whose outputs are the operator's inputs. The subgraph's targets are built before their
subject, so "books that are on a wood table" is::

    0 find          ["table"]          []
    1 filter        ["wood"]           [0]
    2 find          ["book"]           []
    3 with_relation ["on"]             [2, 1]

A relation with rel-mods is one ``with_relation`` row whose arguments are the relation followed by
the rel-mod names and whose dependencies are the subject, the object and then each rel-mod's
object, in the same order: the modifiers must hang off the *same* relation instance, which
separate rows could not express. Question templates wrap this program (count, exists, ...).
"""

from __future__ import annotations

from typing import TypedDict

from covr.scene.subgraph import Subgraph
from covr.scene.tree import TreeNode


class ProgramStep(TypedDict):
    operation: str
    arguments: list[str]
    dependencies: list[int]


def _emit(node: TreeNode, rows: list[ProgramStep]) -> int:
    """Append the rows that compute ``node``'s objects; return the row of the result."""
    targets = [
        (edge, _emit(edge.target, rows), [_emit(m.target, rows) for m in edge.mods])
        for edge in node.edges
    ]
    rows.append({"operation": "find", "arguments": [node.name], "dependencies": []})
    current = len(rows) - 1
    if node.attribute is not None:
        rows.append(
            {"operation": "filter", "arguments": [node.attribute], "dependencies": [current]}
        )
        current = len(rows) - 1
    for edge, target, mod_rows in targets:
        rows.append(
            {
                "operation": "with_relation",
                "arguments": [edge.name, *(m.name for m in edge.mods)],
                "dependencies": [current, target, *mod_rows],
            }
        )
        current = len(rows) - 1
    return current


def program(g: Subgraph) -> list[ProgramStep]:
    """The rows selecting the objects of all images that match ``g``'s root (last row)."""
    rows: list[ProgramStep] = []
    _emit(g.tree(), rows)
    return rows
