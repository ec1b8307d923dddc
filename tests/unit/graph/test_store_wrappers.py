"""Store wrappers pass every store method on (issue 38).

The service's deadline wrapper had no ``read_many`` and no ``forget_plans``: it inherited
:class:`GraphStore`'s generic defaults, so behind the service a Neo4j lookup round became one
read per statement instead of one transaction, and the plan reset after a large import did
nothing. Nothing failed; the batching was just gone. These tests make that impossible to repeat
silently: the store methods are listed by introspection (a method added to :class:`GraphStore`
is checked without anyone adding it here), each wrapper must define each of them, each call made
through a wrapper must reach the inner store, and every store wrapper in the repository must
derive from :class:`ForwardingStore` (the base that forwards them all).
"""

from __future__ import annotations

import ast
import inspect
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, get_type_hints

import pytest

from covr.graph.backends import Backend
from covr.graph.errors import QueryTimeout
from covr.graph.forwarding import ForwardingStore
from covr.graph.store import GraphStore, RoundCheck, WriteSummary
from covr.service.deadline import DeadlineStore
from tests.support.recording_store import RecordingStore

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[3]
SCANNED = ("server", "loaders", "clients", "tests", "benchmarks")
SKIPPED_DIRS = {"build", "node_modules", "__pycache__", ".venv", "target"}

STORE_METHODS = sorted(
    name
    for name, value in inspect.getmembers(GraphStore, inspect.isfunction)
    if not name.startswith("_")
)
"""Every public method of the store interface, read from the class itself."""

WRAPPERS: dict[type[GraphStore], Callable[[GraphStore], GraphStore]] = {
    ForwardingStore: ForwardingStore,
    DeadlineStore: lambda inner: DeadlineStore(inner, lambda: None, cap=30.0),
    RecordingStore: RecordingStore,
}
"""How to build each wrapper the unit tests call through (the test-only ones of other modules
are held to :class:`ForwardingStore` by :func:`test_every_store_wrapper_derives_from_forwarding`)."""

BUILT_ON: dict[tuple[type[GraphStore], str], str] = {
    # write_rows takes no timeout: batch by batch through the view's bounded write instead
    (DeadlineStore, "write_rows"): "write",
}
"""Calls a wrapper deliberately makes of another inner method (wrapper, method) -> inner method."""

REFUSED: dict[tuple[type[GraphStore], str], type[Exception]] = {
    (DeadlineStore, "clear"): PermissionError,  # the service never clears the store
}
KEPT: set[tuple[type[GraphStore], str]] = {
    (DeadlineStore, "close"),  # the shared store outlives the service's view of it
}

SAMPLE_ARGUMENTS: dict[str, Any] = {
    "query": "UNWIND $rows AS row RETURN row",
    "params": {"p": 1},
    "timeout": 2.0,
    "statements": [("RETURN 1 AS x", {}), ("RETURN $y AS x", {"y": 2})],
    "rows": [{"a": 1}, {"a": 2}],
    "batch_size": 1,
    "on_batch": None,
    "present": ["gqa:1"],
    "create": {"ids": ["gqa:1"]},
    "check": RoundCheck(lambda: ("RETURN $ids AS x", {"ids": []}), ids="ids", among=["1"]),
}
"""An argument for each parameter name of the store methods."""


class Answer:
    """What the inner store returns from one call, to see it come back through the wrapper."""

    def __init__(self, method: str) -> None:
        self.method = method


def _answer(method: str) -> Any:
    # a write's summary is added up by the default write_rows, so it must be a real one
    returns = get_type_hints(getattr(GraphStore, method)).get("return")
    if returns is type(None):
        return None
    return WriteSummary() if returns is WriteSummary else Answer(method)


def _inner_store() -> Any:
    """A store whose every public method records its call and returns a fresh answer (built
    from :data:`STORE_METHODS`, so it implements a new method as soon as the interface has it)."""

    def recorder(method: str) -> Callable[..., Any]:
        def call(self: Any, *args: Any, **kwargs: Any) -> Any:
            answer = _answer(method)
            self.calls.append((method, args, kwargs, answer))
            return answer

        return call

    def body(namespace: dict[str, Any]) -> None:
        namespace.update({name: recorder(name) for name in STORE_METHODS})
        namespace["backend"] = Backend.EMBEDDED
        namespace["location"] = "inner"

    cls = types.new_class("Inner", (GraphStore,), exec_body=body)
    inner = cls()
    inner.calls = []
    return inner


def _arguments(method: str) -> tuple[list[Any], dict[str, Any]]:
    """Positional and keyword arguments for ``method``, one sample per parameter."""
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for parameter in list(inspect.signature(getattr(GraphStore, method)).parameters.values())[1:]:
        if parameter.name not in SAMPLE_ARGUMENTS:
            pytest.fail(f"add a sample for parameter {parameter.name!r} of GraphStore.{method}")
        value = SAMPLE_ARGUMENTS[parameter.name]
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
            kwargs[parameter.name] = value
        else:
            args.append(value)
    return args, kwargs


def _bound(method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The arguments of one call by parameter name, however they were passed."""
    signature = inspect.signature(getattr(GraphStore, method))
    bound = signature.bind(None, *args, **kwargs)
    bound.apply_defaults()
    return {name: value for name, value in bound.arguments.items() if name != "self"}


def _subclasses(cls: type[GraphStore]) -> Iterator[type[GraphStore]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def test_the_store_methods_are_found() -> None:
    """The introspection sees the methods issue 38 lost (a guard on the listing itself)."""
    found = set(STORE_METHODS)
    assert {"read", "read_many", "read_round", "write", "forget_plans", "replace_images"} <= found


def test_forwarding_store_defines_every_store_method_itself() -> None:
    missing = [name for name in STORE_METHODS if name not in vars(ForwardingStore)]
    assert not missing, f"ForwardingStore does not pass on {missing}"


@pytest.mark.parametrize(
    "wrapper", [ForwardingStore, *_subclasses(ForwardingStore)], ids=lambda cls: cls.__name__
)
def test_no_wrapper_falls_back_to_a_generic_default(wrapper: type[GraphStore]) -> None:
    """Each wrapper class loaded here resolves every store method to a method of its own line,
    never to :class:`GraphStore`'s default (``read_many`` as reads, ``forget_plans`` as
    nothing), unless it calls that default explicitly (:data:`BUILT_ON`)."""
    defaults = [
        name for name in STORE_METHODS if getattr(wrapper, name) is getattr(GraphStore, name)
    ]
    assert not defaults, f"{wrapper.__name__} inherits GraphStore's {defaults}"


@pytest.mark.parametrize("method", STORE_METHODS)
@pytest.mark.parametrize("wrapper", list(WRAPPERS), ids=lambda cls: cls.__name__)
def test_each_call_reaches_the_inner_store(wrapper: type[GraphStore], method: str) -> None:
    """Called through the wrapper, a method runs the inner store's same method once, with the
    same arguments, and its answer comes back (a deliberate exception is in a table above)."""
    inner = _inner_store()
    view = WRAPPERS[wrapper](inner)
    args, kwargs = _arguments(method)
    key = (wrapper, method)
    if key in REFUSED:
        with pytest.raises(REFUSED[key]):
            getattr(view, method)(*args, **kwargs)
        assert inner.calls == []
        return
    result = getattr(view, method)(*args, **kwargs)
    called = [call[0] for call in inner.calls]
    if key in KEPT:
        assert called == []
    elif key in BUILT_ON:
        assert called, f"{wrapper.__name__}.{method} reached nothing"
        assert set(called) == {BUILT_ON[key]}, called
    else:
        assert called == [method], f"{wrapper.__name__}.{method} reached the inner {called}"
        _, inner_args, inner_kwargs, answer = inner.calls[0]
        assert result is answer
        assert _bound(method, inner_args, inner_kwargs) == _bound(method, tuple(args), kwargs)


def test_the_deadline_store_shares_the_time_left_over_a_batch() -> None:
    """``read_many``'s timeout is each statement's (Neo4j gives the transaction that much per
    statement): the deadline view shares what the RPC has left, so the batch cannot outlive it,
    and checks the client and runs the read hook once, as a read does."""
    inner = _inner_store()
    hooks: list[str] = []
    left: list[float] = [1.0]
    gone = [False]
    view = DeadlineStore(
        inner,
        lambda: left[0],
        cap=30.0,
        cancelled=lambda: gone[0],
        before_read=lambda: hooks.append("hook"),
    )
    statements: list[tuple[str, dict[str, Any]]] = [
        ("RETURN 1 AS x", {}),
        ("RETURN 2 AS x", {}),
        ("RETURN 3 AS x", {}),
    ]
    view.read_many(iter(statements))  # a generator, as the lookup passes
    (_, args, kwargs, _), *more = inner.calls
    assert not more
    assert args[0] == statements
    assert kwargs["timeout"] == pytest.approx(1.0 / 3)
    assert hooks == ["hook"]
    view.read_many(statements, timeout=0.1)  # asked for less than the share
    assert inner.calls[-1][2]["timeout"] == pytest.approx(0.1)

    left[0] = 0.0
    with pytest.raises(QueryTimeout):
        view.read_many(statements)
    left[0], gone[0] = 10.0, True
    with pytest.raises(QueryTimeout):
        view.read_many(statements)
    assert len(inner.calls) == 2  # neither reached the store


def _wraps_a_store_directly(node: ast.ClassDef) -> bool:
    """Whether a class derives from ``GraphStore`` itself and takes another store to wrap."""
    if not any(ast.unparse(base).split(".")[-1] == "GraphStore" for base in node.bases):
        return False
    for item in node.body:
        if isinstance(item, ast.FunctionDef) and item.name == "__init__":
            params = [*item.args.posonlyargs, *item.args.args, *item.args.kwonlyargs]
            return any(
                p.annotation is not None and "GraphStore" in ast.unparse(p.annotation)
                for p in params
            )
    return False


def _sources() -> Iterator[Path]:
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            if not SKIPPED_DIRS & set(path.relative_to(ROOT).parts):
                yield path


def test_the_wrapper_scan_recognises_a_wrapper() -> None:
    wrapper = ast.parse("class W(GraphStore):\n    def __init__(self, inner: GraphStore): ...")
    fake = ast.parse("class F(GraphStore):\n    def __init__(self) -> None: ...")
    backend = ast.parse("class B(store.GraphStore):\n    def __init__(self, s: Settings): ...")
    found = [
        _wraps_a_store_directly(tree.body[0])  # type: ignore[arg-type]
        for tree in (wrapper, fake, backend)
    ]
    assert found == [True, False, False]


def test_every_store_wrapper_derives_from_forwarding() -> None:
    """A class of the repository that wraps another store is built on :class:`ForwardingStore`
    (fakes that hold no store, and the backends, derive from :class:`GraphStore`)."""
    texts = {path: path.read_text(encoding="utf-8") for path in _sources()}
    offenders = [
        f"{path.relative_to(ROOT)}::{node.name}"
        for path, text in texts.items()
        if "GraphStore" in text  # only these can hold a wrapper (and parsing all takes seconds)
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.ClassDef) and _wraps_a_store_directly(node)
    ]
    offenders.remove("server/covr/graph/forwarding.py::ForwardingStore")  # the base itself
    assert not offenders, (
        f"{offenders} wrap a store on GraphStore: derive them from ForwardingStore, or a store "
        "method they do not write falls back to GraphStore's default instead of the inner store's"
    )
