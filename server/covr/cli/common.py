"""Helpers every CLI command shares: opening the store, printing JSON, turning errors into exits."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, get_args

import typer

if TYPE_CHECKING:  # imported where used: `covr --help` must not load pydantic or the drivers
    from covr.graph import GraphStore
    from covr.settings import Settings

EXIT_FAILURE = 1
EXIT_BAD_INPUT = 2


def fail(message: str, code: int = EXIT_FAILURE) -> NoReturn:
    """Print ``error: message`` to stderr and exit."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def check_output_file(path: Path, option: str) -> None:
    """Refuse, before any work, an output path that cannot become a file: a directory (the
    atomic rename at the end failed after all the work, leaving ``<dir>.tmp``; issue 40 row 9)
    or one in a folder that does not exist. Exits 2 naming the option."""
    if path.is_dir():
        fail(f"{option} {path}: is a directory; give the path of a file", EXIT_BAD_INPUT)
    if not path.parent.is_dir():
        fail(f"{option} {path}: folder {path.parent} does not exist", EXIT_BAD_INPUT)


def say_unless(quiet: bool) -> Callable[[str], None]:
    """A progress printer for stderr that says nothing when ``quiet`` (the Ray runs' lines)."""

    def say(message: str) -> None:
        if not quiet:
            typer.echo(message, err=True)

    return say


BACKEND_HELP = (
    "Which server the project starts itself, one of COVR_GRAPH_BACKEND's values: falkordb "
    "(embedded, the default) or neo4j (managed Neo4j Community)."
)
BACKEND_METAVAR = "NAME"


def choose_backend(backend: str | None) -> None:
    """Start a command: read the settings afresh, with ``--backend`` winning over
    ``COVR_GRAPH_BACKEND``.

    A process may run several commands (tests through ``CliRunner``, notebooks, scripts that
    call the app): each must see the environment as it is when it starts. Keeping the first
    command's settings sent a later command's writes to the first one's data directory.
    """
    if backend is not None:
        names = managed_backends()
        if backend not in names:
            fail(f"--backend: expected {' or '.join(names)}, got {backend!r}", EXIT_BAD_INPUT)
        os.environ["COVR_GRAPH_BACKEND"] = backend
    if "covr.settings" in sys.modules:  # nothing to forget when settings were never read
        sys.modules["covr.settings"].get_settings.cache_clear()


def managed_backends() -> tuple[str, ...]:
    """The servers the project can start itself: the values ``COVR_GRAPH_BACKEND`` accepts
    (read from the settings' field, so a new backend is added there and in the graph room, not
    here). Imported only when ``--backend`` is given: `covr --help` loads no pydantic."""
    from covr.settings import Settings

    return tuple(get_args(Settings.model_fields["graph_backend"].annotation))


def load_settings() -> Settings:
    """The settings, with a readable message naming the bad variable instead of a traceback."""
    from pydantic import ValidationError

    from covr.settings import get_settings

    try:
        return get_settings()
    except ValidationError as exc:
        problems = "; ".join(
            f"COVR_{'_'.join(str(p) for p in e['loc']).upper()}: {e['msg']}" for e in exc.errors()
        )
        fail(f"invalid configuration: {problems}", EXIT_BAD_INPUT)


@contextmanager
def store_session() -> Iterator[GraphStore]:
    """Open the configured store for one command; graph errors become one-line messages."""
    from covr.graph import GraphError, open_store

    settings = load_settings()
    try:
        with open_store(settings.graph) as store:
            yield store
    except GraphError as exc:
        fail(str(exc))


def print_json(data: Any) -> None:
    """Stable JSON on stdout (sorted keys, two-space indent)."""
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")


@contextmanager
def stop_signals() -> Iterator[Callable[[], int]]:
    """Within the block SIGINT and SIGTERM only set a flag; yields a function that blocks until
    one has come and returns its number. The old handlers come back after the block.

    Why both, and explicitly: a service manager stops a server with SIGTERM, whose default
    action ends the process without closing the store it started; and a process started in the
    background by a script inherits SIGINT ignored, so Ctrl-C must be installed, not assumed
    (``covr view`` under pytest-xdist sat out a 60 s timeout waiting for it to stop). Installed
    before the server starts, so a signal sent as soon as it says it listens is not lost."""
    import signal
    import threading

    stop = threading.Event()
    received: list[int] = []

    def on_signal(signum: int, frame: object) -> None:
        del frame
        received.append(signum)
        stop.set()

    def wait() -> int:
        while not stop.wait(0.5):
            pass
        return received[0]

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield wait
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
