"""The graph room: the only code that holds a database connection (DESIGN.md §1–2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from covr.graph.backends import Backend, backend_of
from covr.graph.config import GraphSettings
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

if TYPE_CHECKING:
    from covr.graph.managed import ManagedServer

__all__ = [
    "SCHEMA_VERSION",
    "Backend",
    "DataDirLocked",
    "GraphError",
    "GraphSettings",
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
    "backend_of",
    "managed_server",
    "open_store",
]


def open_store(settings: GraphSettings) -> GraphStore:
    """The store the settings select; a managed server (embedded FalkorDB or Neo4j) is started
    when needed."""
    backend = backend_of(settings)
    if backend is Backend.NEO4J:
        from covr.graph.neo4j_backend import Neo4jStore

        return Neo4jStore(settings)
    if backend is Backend.MANAGED_NEO4J:
        from covr.graph.neo4j_backend import Neo4jStore
        from covr.graph.neo4j_server import ManagedNeo4j

        return Neo4jStore(settings, server=ManagedNeo4j(settings))
    from covr.graph.falkor import FalkorStore

    if backend is Backend.FALKORDB:
        return FalkorStore(settings)
    from covr.graph.embedded import EmbeddedServer

    return FalkorStore(settings, server=EmbeddedServer(settings))


def managed_server(settings: GraphSettings) -> ManagedServer | None:
    """The server the project starts itself for these settings (``covr db start``: the
    embedded FalkorDB or the managed Neo4j), not started yet; ``None`` for a server named by
    ``COVR_GRAPH_URI``, which is managed outside the project."""
    backend = backend_of(settings)
    if backend is Backend.MANAGED_NEO4J:
        from covr.graph.neo4j_server import ManagedNeo4j

        return ManagedNeo4j(settings)
    if backend is Backend.EMBEDDED:
        from covr.graph.embedded import EmbeddedServer

        return EmbeddedServer(settings)
    return None
