"""Which graph store a configuration selects: the graph room's names for its backends.

Settings hold plain values only (``COVR_GRAPH_URI``, ``COVR_GRAPH_BACKEND`` and the table of URI
schemes in their graph section); what they mean as a store is decided here, so that the rest of
the service never branches on a backend: it calls the store, whose backend does each thing its
own way (``GraphStore.read_round``, ``GraphStore.value_preparer``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from covr.graph.config import GRAPH_URI_ENGINES

if TYPE_CHECKING:
    from covr.graph.config import GraphSettings


class Backend(StrEnum):
    """Which graph store the settings select (``COVR_GRAPH_URI`` and ``COVR_GRAPH_BACKEND``)."""

    EMBEDDED = "embedded"  # FalkorDB started by the project
    FALKORDB = "falkordb"  # an external FalkorDB server
    NEO4J = "neo4j"  # an external Neo4j
    MANAGED_NEO4J = "managed-neo4j"  # Neo4j Community started by the project

    @property
    def dialect(self) -> str:
        """The engine behind it ("falkordb" or "neo4j"): what decides statement variants of the
        catalog (``// backend:``) inside the graph room."""
        return "neo4j" if self in (Backend.NEO4J, Backend.MANAGED_NEO4J) else "falkordb"

    @property
    def managed(self) -> bool:
        """Whether the project starts and stops this store itself (``covr db start``)."""
        return self in (Backend.EMBEDDED, Backend.MANAGED_NEO4J)


def backend_of(settings: GraphSettings) -> Backend:
    """The store this configuration selects: a URI's scheme names an external server, no URI
    the server the project starts itself (``COVR_GRAPH_BACKEND``)."""
    if not settings.graph_uri:
        return Backend.MANAGED_NEO4J if settings.graph_backend == "neo4j" else Backend.EMBEDDED
    engine = GRAPH_URI_ENGINES[urlsplit(settings.graph_uri).scheme.lower()]
    return Backend.FALKORDB if engine == "falkordb" else Backend.NEO4J
