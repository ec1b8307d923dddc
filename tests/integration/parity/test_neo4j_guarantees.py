"""What Neo4j promises and the graph room relies on: transactions roll back, timeouts are enforced
by the server.

- A loader batch is one ``load/create_images`` statement, so one managed transaction: when it fails
  part-way (here: a value no store can hold, in the batch's last image, after the others were
  created in the transaction), the store is exactly as before, compared as node and relationship
  counts, per-image checksums and every property of every node and relationship.
- ``store.read(..., timeout=...)`` travels with the transaction (``Query(timeout=...)``), so the
  server stops a slow read and the call raises :class:`covr.graph.QueryTimeout` at once; the
  server has no trace of it afterwards and answers as before. A write stopped by its timeout is
  rolled back.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from neo4j.exceptions import ClientError

from covr.graph import GraphStore, QueryError, QueryTimeout
from covr_loaders import synthetic
from covr_loaders.writer import Batch, write_batch
from tests.integration.parity.helpers import (
    counts,
    expected_checksums,
    graph_dump,
    image_checksums,
)
from tests.integration.related.helpers import put

pytestmark = pytest.mark.timeout(300)

# 10^10 rows: minutes of work for the server, unless it is stopped
SLOW_READ = "UNWIND range(1, 100000) AS a UNWIND range(1, 100000) AS b RETURN count(*) AS n"
SLOW_WRITE = "UNWIND range(1, 100000000) AS a CREATE (:Probe {a: a})"
RUNNING = "SHOW TRANSACTIONS YIELD transactionId, currentQuery RETURN transactionId, currentQuery"
# how long a call stopped after 0.5 s may take on a busy machine (it would take minutes otherwise)
PROMPTLY_S = 15.0


def state(store: GraphStore) -> tuple[Any, ...]:
    return counts(store), image_checksums(store), graph_dump(store)


def poisoned(batch: Batch) -> Batch:
    """The batch with its last image's last object named by a map, which no store can hold as a
    property: the statement fails there, after creating everything before it."""
    assert isinstance(batch.objects, list)
    last = batch.objects[-1]
    last[-1] = [last[-1][0], {"not": "a property value"}, *last[-1][2:]]
    return batch


def test_a_batch_that_fails_midway_leaves_the_store_unchanged(neo4j_store: GraphStore) -> None:
    graphs = list(synthetic.generate(40, seed=21, split="val"))
    stored, more = graphs[:25], graphs[25:]
    put(neo4j_store, stored)
    before = state(neo4j_store)
    assert before[1] == expected_checksums(stored)
    batch = poisoned(Batch.of(1, more))
    assert isinstance(batch.objects, list)
    assert all(batch.objects)  # something to create in each image
    with pytest.raises(QueryError, match="Property values can only be"):
        write_batch(neo4j_store, batch)
    assert state(neo4j_store) == before
    # the same batch without the bad value goes in whole
    write_batch(neo4j_store, Batch.of(1, more))
    assert image_checksums(neo4j_store) == expected_checksums(graphs)


def stopped_by_the_server(error: QueryTimeout) -> bool:
    """The server's verdict, not a timeout of the driver or of this test: TransactionTimedOut, or
    for a write stopped while it holds locks, LockClientStopped (the graph room maps both)."""
    cause = error.__cause__
    if not isinstance(cause, ClientError):
        return False
    code = cause.code or ""
    return "TransactionTimedOut" in code or "LockClientStopped" in code


def running_queries(store: GraphStore, text: str) -> list[str]:
    rows = store.read(RUNNING)
    return [str(r["currentQuery"]) for r in rows if text in str(r["currentQuery"] or "")]


def call_in_thread(fn: Callable[[], object], wait: float) -> BaseException | None:
    """Run ``fn``; the exception it raised, or fail the test when it is still running after
    ``wait`` seconds (a timeout that the server does not enforce never ends)."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            fn()
            outcome.append(None)
        except BaseException as exc:  # handed to the test thread
            outcome.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(wait)
    if worker.is_alive():
        pytest.fail(f"still running after {wait:.0f}s: the timeout was not enforced")
    return outcome[0]


def terminate(store: GraphStore, text: str) -> None:
    """Stop leftover transactions running ``text`` (only after a failed check)."""
    for row in store.read(RUNNING):
        if text in str(row["currentQuery"] or "") and "SHOW TRANSACTIONS" not in str(
            row["currentQuery"]
        ):
            store.write("TERMINATE TRANSACTION $id", {"id": row["transactionId"]})


def wait_until_gone(store: GraphStore, text: str, within: float = 10.0) -> list[str]:
    deadline = time.monotonic() + within
    left = [q for q in running_queries(store, text) if "SHOW TRANSACTIONS" not in q]
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = [q for q in running_queries(store, text) if "SHOW TRANSACTIONS" not in q]
    return left


def timed_out_call(
    store: GraphStore, call: Callable[[], object], marker: str
) -> tuple[BaseException | None, list[str]]:
    """Run ``call`` (expected to time out) in a thread; then the server's transactions whose
    query holds ``marker`` that are still running (each terminated, so no test leaves one)."""
    try:
        error = call_in_thread(call, PROMPTLY_S)
    finally:
        left = wait_until_gone(store, marker)
        if left:
            terminate(store, marker)
    return error, left


def test_a_read_timeout_is_enforced_by_the_server(neo4j_store: GraphStore) -> None:
    put(neo4j_store, list(synthetic.generate(10, seed=2, split="val")))
    before = state(neo4j_store)
    started = time.monotonic()
    error, left = timed_out_call(
        neo4j_store, lambda: neo4j_store.read(SLOW_READ, timeout=0.5), "range(1, 100000)"
    )
    elapsed = time.monotonic() - started
    assert isinstance(error, QueryTimeout), error
    assert stopped_by_the_server(error)
    assert elapsed < PROMPTLY_S
    assert left == [], f"the server still runs the stopped read: {left}"
    # the server is fine: it answers, reads what it held, and takes writes
    assert neo4j_store.health().ok
    assert state(neo4j_store) == before
    assert neo4j_store.read("UNWIND range(1, 1000) AS a RETURN count(*) AS n", timeout=5) == [
        {"n": 1000}
    ]
    neo4j_store.write("CREATE (:Probe {a: 1})")
    assert neo4j_store.read("MATCH (p:Probe) RETURN count(p) AS n") == [{"n": 1}]


def test_a_write_stopped_by_its_timeout_is_rolled_back(neo4j_store: GraphStore) -> None:
    put(neo4j_store, list(synthetic.generate(10, seed=3, split="val")))
    before = state(neo4j_store)
    error, left = timed_out_call(
        neo4j_store, lambda: neo4j_store.write(SLOW_WRITE, timeout=0.5), "range(1, 100000000)"
    )
    assert isinstance(error, QueryTimeout), error
    assert stopped_by_the_server(error)
    assert left == []
    assert neo4j_store.read("MATCH (p:Probe) RETURN count(p) AS n") == [{"n": 0}]
    assert state(neo4j_store) == before
