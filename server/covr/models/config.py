"""The models room's settings section: where the classifiers and WordNet are, how they run.

Read from the ``COVR_MODEL*`` and ``COVR_WORDNET_DIR`` variables by the one settings reader
(:class:`covr.settings.Settings`, whose ``models`` property builds this section); the model
loaders take it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, kw_only=True)
class ModelSettings:
    """Each field is the :class:`covr.settings.Settings` field of the same name (described
    there); ``data_dir`` holds what a process learned for the next (``nltk_data``, ``models``)."""

    models_dir: Path | None
    wordnet_dir: Path
    model_threads: int
    model_cache_pairs: int
    model_cache_terms: int
    data_dir: Path
