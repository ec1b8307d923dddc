"""Several Neo4j reads of one statement text as one statement: a related lookup's round.

Why: on Neo4j a lookup round runs one cached statement per branch (``GraphStore.read_many``;
a ``UNION ALL`` of the branches would be a new text, planned anew, for every combination), and
the branches of a round mostly share their text: the text depends on the subgraph's shape only
(``covr.related.cypher_path``) and every branch is built with the same prefix. Each statement is
a round trip and a statement for the server to set up; a round of five branches was five.
Consecutive statements of one text become one::

    UNWIND range(0, size($covr_batch) - 1) AS covr_n
    CALL (covr_n) { WITH $covr_batch[covr_n] AS covr_p <the text, $x read as covr_p.x> }
    RETURN *

The subquery runs once per parameter map, in order, so the rows are those of the statements one
after another (plus ``covr_n``, dropped). Every value is still a parameter (``$covr_batch``, a
list of the statements' parameter maps), and the wrapped text is cached like any other: one plan
per branch text, whatever the number of branches. ``CALL (covr_n) {...}``, the scoped form of
Neo4j 5.23 and later (the pinned 5.26 included): the importing ``WITH`` form is deprecated there,
and each run of it came back with a deprecation notification that the driver logs as a warning.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from covr.graph.catalog import Statement

BATCH = "covr_batch"
INDEX = "covr_n"
ROW = "covr_p"
_PARAMETER = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_WITH = re.compile(r"\bWITH\b", re.IGNORECASE)
_WITH_CLAUSE = re.compile(r"^WITH (DISTINCT )?(?!\*)", re.MULTILINE | re.IGNORECASE)
_UNSAFE = ("'", '"', "`", "UNION", "CALL", "USE ", INDEX, ROW, BATCH)
"""What keeps a text out of a batch: a literal or a quoted name could hold a ``$`` that is no
parameter, a ``UNION`` inside ``CALL`` would need an import per branch, nested subqueries and
our own names are left alone."""

Pending = tuple[Statement, dict[str, Any]]


def batchable(text: str) -> bool:
    """Whether :func:`batched` can rewrite ``text``: none of :data:`_UNSAFE`, and every ``WITH``
    a clause at a line's start (the batched text carries ``covr_p`` through each of them)."""
    upper = text.upper()
    if any(mark in (upper if mark.isupper() else text) for mark in _UNSAFE):
        return False
    if re.search(r"^WITH (DISTINCT )?\*", text, re.MULTILINE | re.IGNORECASE):
        return False
    return len(_WITH.findall(text)) == len(_WITH_CLAUSE.findall(text))


def _per_map(text: str) -> str:
    """``text`` reading its parameters from the map ``covr_p``: each ``$x`` read as
    ``covr_p.x`` and ``covr_p`` carried through every ``WITH`` (one value per call, so adding it
    to a projection, a grouping or a ``DISTINCT`` changes no row)."""
    inner = _PARAMETER.sub(lambda m: f"{ROW}.{m.group(1)}", text)
    return _WITH_CLAUSE.sub(lambda m: f"WITH {m.group(1) or ''}{ROW}, ", inner)


def batched(statement: Statement) -> Statement:
    """The statement run once per map of ``$covr_batch`` (:func:`_per_map`)."""
    inner = _per_map(statement.text)
    text = (
        f"UNWIND range(0, size(${BATCH}) - 1) AS {INDEX}\n"
        f"CALL ({INDEX}) {{\nWITH ${BATCH}[{INDEX}] AS {ROW}\n{inner}\n}}\nRETURN *"
    )
    return Statement(name=f"{statement.name} (batched)", text=text)


def coalesce(batch: Sequence[Pending]) -> list[Pending]:
    """Consecutive statements of one batchable text as one batched statement each."""
    out: list[Pending] = []
    n = 0
    while n < len(batch):
        statement = batch[n][0]
        end = n + 1
        while end < len(batch) and batch[end][0].text == statement.text:
            end += 1
        if end - n > 1 and batchable(statement.text):
            out.append((batched(statement), {BATCH: [p for _, p in batch[n:end]]}))
        else:
            out.extend(batch[n:end])
        n = end
    return out


def unbatched(row: dict[str, Any]) -> dict[str, Any]:
    """A row of a batched statement as the plain statement returns it."""
    row.pop(INDEX, None)
    return row


CHECK = "covr_check"
AMONG = "covr_among"
_RETURN = re.compile(r"^RETURN (?!\*)(.+)$", re.MULTILINE)
_ALIAS = re.compile(r"\bAS ([A-Za-z_][A-Za-z0-9_]*)")


def returned(text: str) -> list[str]:
    """The column names of a statement's last ``RETURN`` (every item aliased with ``AS``)."""
    found = _RETURN.findall(text)
    columns = _ALIAS.findall(found[-1]) if found else []
    if not columns:
        raise ValueError("the statement must end with a RETURN of aliased columns")
    return columns


def then_check(
    first: Sequence[Pending], check: Pending, *, ids: str, among: Sequence[str]
) -> Pending:
    """``first`` (one statement, or several of one text) and then ``check`` over the images its
    rows name, as one statement: the rows of ``first``, then those of ``check`` run once with its
    list ``$<ids>`` set to the distinct ``image_id`` of ``first``'s rows that are ``among``.

    Why: a related lookup's round verified its candidates and then, in a second statement,
    checked the images with a hit for a relaxed copy of the subgraph; on Neo4j each statement
    is a round trip and ~1 ms of fixed server work (docs/graph-store.md, "Neo4j's read path").
    The check here reads only the images the first part returned rows for (the hits are among
    them; ``among``: the round's distractor candidates whose exclusion is not known yet), so no
    image is checked that the two statements would not have checked, save those whose rows the
    lookup then decodes to no hit. Every value is still a parameter (``$covr_check``: the check's
    map, ``$covr_among``), and the text depends on the two texts only: one plan per shape. Both
    parts must return the same columns, ``image_id`` and ``tag`` among them; ``check`` must be
    :func:`batchable`.
    """
    merged = coalesce(list(first))
    if len(merged) != 1:
        raise ValueError("then_check: the first part must be one statement text")
    head, head_params = merged[0]
    statement, params = check
    columns = returned(first[0][0].text)
    if returned(statement.text) != columns or not {"image_id", "tag"} <= set(columns):
        raise ValueError("then_check: both parts must return the same columns, image_id and tag")
    if not batchable(statement.text) or ids not in params:
        raise ValueError(f"then_check: {statement.name} cannot take ${ids} from the rows")
    as_map = ", ".join(f"{c}: {c}" for c in columns)
    out = ", ".join(f"covr_r.{c} AS {c}" for c in columns)
    text = "\n".join(
        [
            f"CALL () {{\n{head.text}\n}}",
            f"WITH collect({{{as_map}}}) AS covr_rows",
            "CALL (covr_rows) {",
            "UNWIND covr_rows AS covr_r",
            f"WITH covr_r WHERE covr_r.image_id IN ${AMONG}",
            "RETURN collect(DISTINCT covr_r.image_id) AS covr_ids",
            "}",
            "CALL (covr_ids) {",
            "CALL (covr_ids) {",
            f"WITH ${CHECK} AS covr_c, covr_ids",
            f"WITH covr_c {{.*, {ids}: covr_ids}} AS {ROW}",
            _per_map(statement.text),
            "}",
            f"RETURN collect({{{as_map}}}) AS covr_checked",
            "}",
            "UNWIND covr_rows + covr_checked AS covr_r",
            f"RETURN {out}",
        ]
    )
    merged_params = {**head_params, CHECK: params, AMONG: list(among)}
    return Statement(name=f"{first[0][0].name} (then checked)", text=text), merged_params
