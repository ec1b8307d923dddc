"""The graph room: the only code that holds a database connection (DESIGN.md §1–2)."""

from __future__ import annotations

from covr.graph.errors import (
    DataDirLocked,
    GraphError,
    ParameterError,
    QueryError,
    QueryTimeout,
    SchemaError,
    StoreUnavailable,
)
from covr.graph.store import (
    SCHEMA_VERSION,
    GraphStore,
    Health,
    IndexState,
    Row,
    WriteSummary,
)
from covr.settings import Backend, Settings

__all__ = [
    "SCHEMA_VERSION",
    "DataDirLocked",
    "GraphError",
    "GraphStore",
    "Health",
    "IndexState",
    "ParameterError",
    "QueryError",
    "QueryTimeout",
    "Row",
    "SchemaError",
    "StoreUnavailable",
    "WriteSummary",
    "open_store",
]


def open_store(settings: Settings) -> GraphStore:
    """The store the settings select; a managed server (embedded FalkorDB or Neo4j) is started
    when needed."""
    if settings.backend is Backend.NEO4J:
        from covr.graph.neo4j_backend import Neo4jStore

        return Neo4jStore(settings)
    if settings.backend is Backend.MANAGED_NEO4J:
        from covr.graph.neo4j_backend import Neo4jStore
        from covr.graph.neo4j_server import ManagedNeo4j

        return Neo4jStore(settings, server=ManagedNeo4j(settings))
    from covr.graph.falkor import FalkorStore

    if settings.backend is Backend.FALKORDB:
        return FalkorStore(settings)
    from covr.graph.embedded import EmbeddedServer

    return FalkorStore(settings, server=EmbeddedServer(settings))
