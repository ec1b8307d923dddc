"""The cache sizes of the one settings object: what a long-running process keeps in memory.

Kept in a base class of :class:`covr.settings.Settings` (as ``settings_scale`` is) so that
module stays under the size limit, and so the memory budget of a service is read in one place
(docs/service.md, "Memory"): every cache is bounded by entries, each field says roughly how
large an entry is.
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings


class MemorySettings(BaseSettings):
    """Entries kept by the model and related-lookup caches (``COVR_MODEL_CACHE_*``,
    ``COVR_RELATED_CACHE_*``)."""

    model_cache_pairs: int = Field(
        default=16_000_000,
        ge=1000,
        description="Exclusivity scores kept per process (4 bytes each, in one row per queried "
        "name: a 4,000-name vocabulary fits whole); the oldest rows are dropped beyond this, so a "
        "long-running service's memory stays bounded.",
    )
    model_cache_terms: int = Field(
        default=200_000,
        ge=1,
        le=10_000_000,
        description="Checked normal forms of terms kept per process (LRU): serving sees the same "
        "dataset names over and over.",
    )
    related_cache_results: int = Field(
        default=4096, ge=0, description="Related-image results kept in the lookup's LRU cache."
    )
    related_cache_decisions: int = Field(
        default=1_000_000,
        ge=1,
        description="Exclusivity decisions (node pair -> exclusive?) a lookup keeps; past it the "
        "table starts over (each entry is a few hundred bytes).",
    )
    related_cache_concretes: int = Field(
        default=200_000,
        ge=1,
        description="Substituted subgraphs (a query with one edit applied) a lookup keeps; past "
        "it the table starts over.",
    )
    related_cache_names: int = Field(
        default=200_000,
        ge=1,
        le=10_000_000,
        description="Names (and name-form sets) whose synonyms and ancestors the word-list "
        "exclusivity keeps; beyond it, it recomputes them.",
    )
    related_cache_postings: int = Field(
        default=4096, ge=0, description="Per-name candidate image lists kept in the LRU cache."
    )
    related_cache_scenes: int = Field(
        default=4096,
        ge=0,
        description="Scene graphs kept in the lookup's LRU cache (presence filter, questions); "
        "dropped when the store's statistics generation changes.",
    )
