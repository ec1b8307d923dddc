"""The modules a warm FindRelatedImages and a warm GenerateQuestions request pass through,
measured (issues 19 and 38).

A real in-process gRPC server over the embedded FalkorDB with the bundled samples serves each
request after a first one of the same kind warmed the lookup (vocabularies, name postings,
exclusivity decisions: the steady state of a running service). The warm request uses another
seed, so it misses the result cache and runs the whole search: rounds of Cypher, decoding, the
presence filter (on, as by default). Every Python function call on every thread is traced
(``threading.setprofile`` before the server starts, so its worker threads carry the hook); the
``covr.*`` modules whose functions ran form the request's path. Each test asserts that this path
equals the numbered list of its section of docs/architecture.md ("FindRelatedImages, module by
module", "GenerateQuestions, module by module"), so the page describes the code as it is and
cannot go stale. The number of stops is not limited (issue 38): a longer path is a question for
review, which the page's list makes visible.

What is not counted as a stop, and why (each entry is a decision, not a convenience):

- :data:`SHARED`: the settings object, the one error type and the one LRU helper. Every room
  uses them; a request "passing through" them says nothing about its path.
- :data:`DOMAIN`: the scene room (``covr.scene.*``: ``Subgraph``, ``Position``, keys and their
  canonical trees). It is the data the request carries, called from every stop; counting it
  would count the value types, not the path.
- :data:`GENERATED`: ``covr.v1``, protoc's output.
- :data:`RPC_FRAME`: the interceptors, the deadline scope and the admission slots. They run the
  same way around every RPC (docs/architecture.md: "not part of any request's own path").
- :data:`STORE_STOP`: the graph store counts as one stop: ``covr/graph/store.py`` (the interface
  every room calls) together with the backend module behind it (``falkor.py`` here,
  ``neo4j_backend.py`` on Neo4j) and the backends' private helpers (FalkorDB's ``params.py``:
  parameters as text, ``compact.py``: compact replies; Neo4j's ``neo4j_batch.py``: a round's
  statements of one text as one), which only the backend calls. The statement catalog
  (``graph/catalog.py``) and the name statistics (``graph/name_stats.py``) are counted.

Background threads of the server (:data:`BACKGROUND_THREADS`: the health watcher, the model
warm-up, the metrics endpoint) are not the request's; every other thread is traced, the gRPC
server's own included.
"""

from __future__ import annotations

import re
import sys
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

import pytest

from tests.support.service_server import running_server

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "architecture.md"
RELATED_SECTION = "## FindRelatedImages, module by module"
QUESTIONS_SECTION = "## GenerateQuestions, module by module"

SHARED = {"covr.settings", "covr.errors", "covr.cache"}
DOMAIN = "covr.scene"
GENERATED = "covr.v1"
RPC_FRAME = {"covr.service.interceptors", "covr.service.deadline", "covr.service.admission"}
STORE_STOP = {
    "covr.graph.falkor": "covr.graph.store",
    "covr.graph.neo4j_backend": "covr.graph.store",
    "covr.graph.neo4j_batch": "covr.graph.store",
    "covr.graph.params": "covr.graph.store",
    "covr.graph.compact": "covr.graph.store",
}
BACKGROUND_THREADS = {"covr-health", "covr-models", "covr-metrics"}
SOURCE_IMAGE = "gqa:2370799"
QUESTIONS = 20
"""Examples the GenerateQuestions request asks for (enough for every template family to run)."""
T = TypeVar("T")


class _Tracer:
    """Records, per thread name, the ``covr.*`` modules whose Python functions are called while
    :attr:`recording` is set (a profile hook on every thread started after :meth:`install`)."""

    def __init__(self) -> None:
        self.recording = False
        self.seen: dict[str, set[str]] = defaultdict(set)

    def hook(self, frame: FrameType, event: str, arg: Any) -> None:
        if not self.recording or event != "call":
            if threading.current_thread().name in BACKGROUND_THREADS:
                sys.setprofile(None)  # the model warm-up makes millions of calls: unhook it
            return
        module = frame.f_globals.get("__name__", "")
        if module == "covr" or module.startswith("covr."):
            self.seen[threading.current_thread().name].add(module)

    def install(self) -> None:
        threading.setprofile(self.hook)

    def uninstall(self) -> None:
        threading.setprofile(None)
        sys.setprofile(None)


def stop_of(module: str) -> str | None:
    """The stop a module counts as (None: not counted, see the module docstring)."""
    if module in SHARED or module in RPC_FRAME:
        return None
    if any(module == top or module.startswith(top + ".") for top in (DOMAIN, GENERATED)):
        return None
    return STORE_STOP.get(module, module)


def documented_stops(heading: str) -> list[str]:
    """The modules of the numbered list under ``heading``, in order (``covr/a/b.py`` ->
    ``covr.a.b``, a package's ``covr/a/__init__.py`` -> ``covr.a``)."""
    text = DOC.read_text(encoding="utf-8")
    assert heading in text, f"{DOC}: no section {heading!r}"
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    found = re.findall(r"^\d+\. `(covr/[\w/]+)\.py`", section, flags=re.MULTILINE)
    assert found, f"{DOC}: no numbered `covr/...py` items under {heading!r}"
    return [path.replace("/", ".").removesuffix(".__init__") for path in found]


@pytest.fixture(scope="module")
def traced() -> Iterator[tuple[_Tracer, Any]]:
    """One server for both requests, started with the tracer installed (its threads carry it)."""
    tracer = _Tracer()
    tracer.install()
    try:
        with running_server() as server, server.client() as client:
            yield tracer, client
    finally:
        tracer.uninstall()


def _record(tracer: _Tracer, call: Callable[[], T]) -> T:
    """Run ``call`` with the tracer recording (on this thread too: the SDK is not covr.*)."""
    tracer.seen.clear()
    sys.setprofile(tracer.hook)
    tracer.recording = True
    try:
        return call()
    finally:
        tracer.recording = False
        sys.setprofile(None)


def _check_path(tracer: _Tracer, heading: str) -> None:
    request_threads = {n: m for n, m in tracer.seen.items() if n not in BACKGROUND_THREADS}
    modules = set().union(*request_threads.values())
    assert "covr.service.servicer" in modules, f"the handler was not traced: {tracer.seen}"
    stops = {s for s in map(stop_of, modules) if s is not None}
    documented = documented_stops(heading)
    assert len(documented) == len(set(documented)), f"{DOC}: a module is listed twice"
    assert stops == set(documented), (
        f"the request's path and {DOC.name} ({heading!r}) differ: ran but not listed "
        f"{sorted(stops - set(documented))}, listed but not run "
        f"{sorted(set(documented) - stops)} (all covr modules seen: {sorted(modules)})"
    )


@pytest.mark.timeout(600)  # the server's model warm-up takes minutes at a high load
def test_find_related_images_passes_through_the_documented_modules(
    traced: tuple[_Tracer, Any],
) -> None:
    tracer, client = traced
    keys = [g.key for g in client.list_subgraphs(SOURCE_IMAGE, max_subgraphs=30)]
    key = next(k for k in keys if "->" in k)  # a relation: every kind of rule runs
    list(client.find_related_images(key, seed=1, timeout=120))  # warms the lookup
    pages = _record(tracer, lambda: list(client.find_related_images(key, seed=2, timeout=120)))
    assert pages, f"{key!r}: the warm request returned no page"
    assert pages[0].images, f"{key!r}: the warm request found no image"
    _check_path(tracer, RELATED_SECTION)


@pytest.mark.timeout(600)
def test_generate_questions_passes_through_the_documented_modules(
    traced: tuple[_Tracer, Any],
) -> None:
    tracer, client = traced

    def generate(seed: int) -> list[Any]:
        stream = client.generate_questions(
            image_id=SOURCE_IMAGE, count=QUESTIONS, seed=seed, timeout=300
        )
        return list(stream)

    generate(1)  # warms the lookup and the question engine's tables
    examples = _record(tracer, lambda: generate(2))
    assert examples, f"{SOURCE_IMAGE}: the warm request generated no example"
    _check_path(tracer, QUESTIONS_SECTION)
