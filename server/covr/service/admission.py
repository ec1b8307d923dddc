"""Per-method admission limits: refuse what cannot be served in time instead of queueing it.

``maximum_concurrent_rpcs`` bounds all calls together, but a question generation costs seconds of
CPU while a scene-graph lookup costs a millisecond. With only the global bound, eight generations
admitted at once on a 2-core machine each took eight times longer and some ran past their
callers' 30 s deadline (measured in ``benchmarks/bench_service.py`` at 16 clients): the callers
got ``DEADLINE_EXCEEDED`` after waiting, the worst answer a saturated service can give. Each
expensive method therefore gets its own small number of slots (by default one per CPU core for
generation: it is CPU-bound Python plus store work), and a call that finds them taken is refused
at once with ``RESOURCE_EXHAUSTED`` and a ``google.rpc.RetryInfo`` hint: the recent duration of
the method divided by its slots, i.e. roughly when a slot frees up.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from covr.service.config import ServiceSettings
from covr.service.errors import ResourceExhausted

MIN_RETRY_S = 0.05
MAX_RETRY_S = 10.0
SMOOTHING = 0.2
"""Weight of the newest call in the running duration estimate (exponential average)."""


def default_slots(configured: int, per_core: int) -> int:
    """``configured`` slots, or ``per_core`` per CPU core the process may use when it is 0."""
    if configured > 0:
        return configured
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # platforms without affinity
        cores = os.cpu_count() or 1
    return max(1, cores) * per_core


def for_settings(settings: ServiceSettings) -> Admission:
    """The limits of ``COVR_SERVICE_MAX_GENERATIONS``, ``COVR_SERVICE_MAX_LOOKUPS`` and
    ``COVR_SERVICE_MAX_BATCHES``."""
    return Admission(
        {
            "GenerateQuestions": default_slots(settings.service_max_generations, 1),
            "FindRelatedImages": default_slots(settings.service_max_lookups, 2),
            "FindRelatedImagesBatch": default_slots(settings.service_max_batches, 1),
        }
    )


class _Method:
    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.free = threading.BoundedSemaphore(slots)
        self.lock = threading.Lock()
        self.mean_s = 0.0
        self.refused = 0

    def finished(self, seconds: float) -> None:
        with self.lock:
            if self.mean_s == 0.0:
                self.mean_s = seconds
            else:
                self.mean_s += SMOOTHING * (seconds - self.mean_s)

    def retry_hint(self) -> float:
        with self.lock:
            self.refused += 1
            hint = self.mean_s / self.slots
        return min(MAX_RETRY_S, max(MIN_RETRY_S, hint))


class Admission:
    """Slots per RPC method name (``"GenerateQuestions"``); methods not listed are unlimited
    (the server's global ``maximum_concurrent_rpcs`` still applies to them)."""

    def __init__(self, limits: Mapping[str, int]) -> None:
        self._methods = {name: _Method(slots) for name, slots in limits.items() if slots > 0}

    def limits(self) -> dict[str, int]:
        return {name: m.slots for name, m in self._methods.items()}

    def refused(self, method: str) -> int:
        """Calls of ``method`` refused so far (tests, logs)."""
        entry = self._methods.get(method)
        return 0 if entry is None else entry.refused

    @contextmanager
    def slot(self, method: str) -> Iterator[None]:
        """Hold one of ``method``'s slots for the block; raise :class:`ResourceExhausted` at once
        when all are taken. A streaming handler holds it until its generator is closed, so a
        slow reader keeps its slot (its server work is what the slot stands for)."""
        entry = self._methods.get(method)
        if entry is None:
            yield
            return
        if not entry.free.acquire(blocking=False):
            raise ResourceExhausted(
                f"{method} is at its limit of {entry.slots} concurrent calls; retry later",
                retry_after_s=entry.retry_hint(),
            )
        began = time.monotonic()
        try:
            yield
        finally:
            entry.finished(time.monotonic() - began)
            entry.free.release()
