"""The graph room's settings section: which store, how to reach it, how long to wait for it.

Read from the ``COVR_*`` variables by the one settings reader (:class:`covr.settings.Settings`,
whose ``graph`` property builds this section); the graph room takes only this. What adding a
backend touches in the settings is here too: the URI schemes and each engine's load defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import SecretStr

BackendName = Literal["falkordb", "neo4j"]
"""The servers the project starts itself (``COVR_GRAPH_BACKEND``)."""

GRAPH_URI_ENGINES: dict[str, str] = {
    **{f"{base}{tls}": "neo4j" for base in ("bolt", "neo4j") for tls in ("", "+s", "+ssc")},
    "falkor": "falkordb",
    "falkors": "falkordb",
}
"""``COVR_GRAPH_URI`` scheme -> the engine serving it (``COVR_GRAPH_BACKEND``'s names)."""

# Images per load statement on Neo4j when COVR_LOAD_BATCH_IMAGES is not set: measured on
# 8,500 synthetic GQA images (643k elements), server CPU 67.8 s with 5,000 per statement, 31.8 s
# with 1,000, 27.5 s with 250 (benchmarks/bench_backends.py; docs/graph-store.md).
NEO4J_LOAD_BATCH_IMAGES = 500
# Load statements in flight on Neo4j when COVR_LOAD_WRITERS is not set (see load_writers).
NEO4J_LOAD_WRITERS = 2
ENGINE_LOAD_DEFAULTS: dict[str, dict[str, int]] = {
    "neo4j": {"load_batch_images": NEO4J_LOAD_BATCH_IMAGES, "load_writers": NEO4J_LOAD_WRITERS},
}
"""Per engine, the load settings it gets when they are not set (the embedded default's are the
fields' own defaults)."""


@dataclass(frozen=True, kw_only=True)
class GraphSettings:
    """``COVR_GRAPH_*``, ``COVR_NEO4J_*``, the embedded server's and the store's timeouts (each
    field is the :class:`covr.settings.Settings` field of the same name, described there)."""

    graph_uri: str
    graph_backend: BackendName
    graph_user: str
    graph_password: SecretStr | None
    graph_database: str
    graph_name: str
    data_dir: Path
    query_timeout_s: float
    connect_timeout_s: float
    startup_timeout_s: float
    shutdown_timeout_s: float
    shutdown_save_wait_s: float
    server_registry: Path | None
    write_batch_size: int
    embedded_durability: Literal["always", "everysec", "snapshot"]
    snapshot_schedule: str
    embedded_query_cache: int
    index_wait_s: float
    neo4j_bolt_port: int
    neo4j_heap: str
    neo4j_pagecache: str
    neo4j_replan_interval_s: int
    neo4j_startup_timeout_s: float
    neo4j_java: str
    neo4j_launcher_dir: Path | None
