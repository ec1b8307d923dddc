"""The same store tests as tests/integration/graph, against the store in COVR_GRAPH_URI.

Backend-neutral tests are imported from the integration suite so both backends answer the very
same assertions; only what is FalkorDB-specific (server process, socket, reply precision) stays
behind.
"""

from __future__ import annotations

import pytest

from covr.graph import GraphStore, QueryError, QueryTimeout, catalog
from tests.integration.graph.test_params_roundtrip import (
    test_exact_values,
    test_injection_in_map_values_and_lists,
    test_map_keys_that_are_not_identifiers,
    test_strings_roundtrip_and_inject_nothing,
    test_ten_thousand_row_batches_roundtrip,
)
from tests.integration.graph.test_store import (
    test_a_failing_batch_leaves_nothing_behind,
    test_batches_before_a_failure_stay,
    test_rows_are_plain_values,
    test_schema_is_idempotent_and_versioned,
    test_stats_per_source_and_split,
    test_write_rows_batches_and_progress,
    test_write_rows_needs_unwind,
    test_write_summary_counts,
)

__all__ = [
    "test_a_failing_batch_leaves_nothing_behind",
    "test_batches_before_a_failure_stay",
    "test_exact_values",
    "test_injection_in_map_values_and_lists",
    "test_map_keys_that_are_not_identifiers",
    "test_rows_are_plain_values",
    "test_schema_is_idempotent_and_versioned",
    "test_stats_per_source_and_split",
    "test_strings_roundtrip_and_inject_nothing",
    "test_ten_thousand_row_batches_roundtrip",
    "test_write_rows_batches_and_progress",
    "test_write_rows_needs_unwind",
    "test_write_summary_counts",
]


@pytest.mark.parametrize("statement", catalog.all_statements(), ids=lambda s: s.name)
def test_catalog_runs_on_the_external_store(
    store: GraphStore, statement: catalog.Statement
) -> None:
    backend = store.backend.dialect
    if not statement.runs_on(backend):
        pytest.skip(f"{statement.name} is for the other backend")
    if statement.name.startswith("schema/"):
        store.clear()
    for part in statement.parts():
        store.write(part, statement.example_params)


def test_unique_keys_are_enforced(store: GraphStore) -> None:
    store.write("CREATE (:Image {id: $id})", {"id": "gqa:1"})
    with pytest.raises(QueryError):
        store.write("CREATE (:Image {id: $id})", {"id": "gqa:1"})


def test_timeout_is_enforced_by_the_server(store: GraphStore) -> None:
    with pytest.raises(QueryTimeout):
        store.read(
            "UNWIND range(1, 4000) AS a UNWIND range(1, 4000) AS b "
            "WITH a, b WHERE a * b = -1 RETURN count(*) AS c",
            timeout=0.2,
        )


def test_bad_cypher_carries_the_server_message(store: GraphStore) -> None:
    with pytest.raises(QueryError, match="Invalid input"):
        store.read("MATCH (n RETURN n")


def test_health(store: GraphStore) -> None:
    assert store.health().ok
