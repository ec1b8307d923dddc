"""The related room's settings section: subgraph enumeration, related-image lookups, their
filters and caches (``COVR_SUBGRAPH_*``, ``COVR_RELATED_*``, ``COVR_TABLE_TIMEOUT_S``;
docs/related.md).

Read by the one settings reader (:class:`covr.settings.Settings`, whose ``related`` property
builds this section); the lookup and everything it holds take it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PRESENCE_NODE_TYPES = ("object", "attribute", "relation")


def parse_thresholds(text: str) -> dict[str, float]:
    """``"object=0.05,relation=0.1"`` -> ``{"object": 0.05, "relation": 0.1}`` (validated)."""
    out: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, number = part.partition("=")
        name = name.strip()
        try:
            value = float(number) if sep else float("nan")
        except ValueError:
            value = float("nan")
        if name not in PRESENCE_NODE_TYPES or not 0.0 <= value <= 1.0:
            raise ValueError(
                "COVR_RELATED_PRESENCE_THRESHOLDS must be comma-separated 'type=value' with type "
                f"in {', '.join(PRESENCE_NODE_TYPES)} and 0 <= value <= 1, got {part!r}"
            )
        out[name] = value
    return out


@dataclass(frozen=True, kw_only=True)
class RelatedSettings:
    """Each field is the :class:`covr.settings.Settings` field of the same name, described
    there. ``table_timeout_s`` bounds the whole-table read a lookup caches per store generation
    (:mod:`covr.related.names`): it is the lookup's, not the store's."""

    table_timeout_s: float
    subgraph_ignored_nouns: str
    subgraph_ignored_relations: str
    subgraph_ignored_pairs: str
    subgraph_min_object_area: float
    subgraph_max_per_image: int
    related_exclusivity: Literal["model", "resource"]
    related_presence: bool
    related_presence_thresholds: str
    related_answer_presence: float
    related_per_signature: int
    related_positives: int
    related_batch_min: int
    related_batch_max: int
    related_list_max: int
    related_direct_min_pool: int
    related_direct_max_nodes: int
    related_postings_max_images: int
    related_scan_budget: int
    related_combined_min_signatures: int
    related_scene_batch: int
    related_cache_results: int
    related_cache_decisions: int
    related_cache_concretes: int
    related_cache_names: int
    related_cache_postings: int
    related_cache_scenes: int
