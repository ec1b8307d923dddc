"""How batch jobs run Python's cyclic garbage collector.

Why: a batch job (``covr generate``, a Ray shard, a distractor run) builds many short-lived
objects while it holds large, long-lived ones: scene graphs read from the store, name postings,
remembered pair scores, memoized name forms. CPython runs a *full* collection, which walks every
tracked object, each time ten young collections have passed and the survivors since the last one
exceed a quarter of the old generation; with a heap of a few hundred MB each one walks millions
of objects. Measured on a 100-image ``covr generate`` (default path, one worker): 18 full
collections took 3.9 of 30.5 CPU-s, and the output and peak memory were the same without them
(373 MB): what the job frees, the young collections free. So while a batch job runs, a full
collection is allowed a hundred times less often; the young generations are left as they are
(raising their threshold as well changed nothing measurable).

The setting is process state: it is put back when the job ends, so a library caller's collector
is what it was. For the same reason it belongs to jobs that own their process (a CLI run, a pool
or Ray worker), not to threads that overlap: the service's question RPCs use the per-image
generators, which do not change it (its heap and request pattern differ; not measured).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

FULL_COLLECTION_THRESHOLD = 1000
"""Young (generation 1) collections between two full ones during a batch job; CPython's default
is 10."""


@contextmanager
def batch_collection() -> Iterator[None]:
    """Rare full collections for the duration of the block (nested blocks keep the rarest)."""
    young, middle, full = gc.get_threshold()
    gc.set_threshold(young, middle, max(full, FULL_COLLECTION_THRESHOLD))
    try:
        yield
    finally:
        gc.set_threshold(young, middle, full)
