"""``covr db ...``: the life cycle of the server the project manages, and what the store holds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from covr.cli.common import (
    BACKEND_HELP,
    BACKEND_METAVAR,
    choose_backend,
    fail,
    load_settings,
    print_json,
    store_session,
)

if TYPE_CHECKING:  # the graph room (drivers) is imported by the commands that run
    from covr.graph.managed import ManagedServer

app = typer.Typer(help="Start, stop, inspect and reset the graph store.", no_args_is_help=True)

JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
BackendOption = Annotated[
    str | None, typer.Option("--backend", metavar=BACKEND_METAVAR, help=BACKEND_HELP)
]


def _managed_server(action: str, backend: str | None) -> ManagedServer:
    """The server the project manages for these settings (embedded FalkorDB or Neo4j)."""
    from covr.graph import managed_server

    choose_backend(backend)
    settings = load_settings()
    server = managed_server(settings.graph)
    if server is not None:
        return server
    fail(
        f"`covr db {action}` manages the project's own servers (embedded FalkorDB, managed "
        f"Neo4j) only; COVR_GRAPH_URI points at {settings.graph_uri}, which is managed outside "
        "this project",
        2,
    )
    raise AssertionError("unreachable")  # fail() exits


@app.command()
def start(backend: BackendOption = None) -> None:
    """Start the store's server in the background so several commands share it.

    Without it, every command starts a private server for its own lifetime. The server keeps
    running until `covr db stop`. The embedded FalkorDB listens on a Unix socket in
    COVR_DATA_DIR only; the managed Neo4j on 127.0.0.1 (Bolt, password in COVR_DATA_DIR/neo4j).
    The schema (constraints and indexes, online) is applied before this returns.
    """
    from covr.graph import GraphError, open_store

    server = _managed_server("start", backend)
    try:
        state = server.start_detached()
        with open_store(load_settings().graph) as store:
            store.apply_schema()
    except GraphError as exc:
        fail(str(exc))
    typer.echo(f"{server.label} running (pid {state.pid}) on {state.socket}; schema applied")


@app.command()
def stop(backend: BackendOption = None) -> None:
    """Stop the store's server (the embedded FalkorDB writes a snapshot first).

    An embedded FalkorDB that cannot write its snapshot (a full disk) is asked again for
    COVR_SHUTDOWN_SAVE_WAIT_S seconds, then stopped without one, which is said on stderr; its
    acknowledged writes are in its append-only file. One that does not stop within
    COVR_SHUTDOWN_TIMEOUT_S gets SIGTERM, then SIGKILL after COVR_SHUTDOWN_SAVE_WAIT_S.
    """
    from covr.graph import GraphError

    server = _managed_server("stop", backend)
    try:
        was_running = server.stop()
    except GraphError as exc:
        fail(str(exc))
    if not was_running:
        typer.echo("not running")
    elif getattr(server, "stopped_without_save", False):
        typer.echo("stopped without a snapshot (see the warning above)")
    else:
        typer.echo("stopped (data persisted)")


@app.command()
def status(as_json: JsonOption = False, backend: BackendOption = None) -> None:
    """Whether the store's server runs, where, and who owns it."""
    server = _managed_server("status", backend)
    from covr.graph import backend_of

    info = {"backend": str(backend_of(load_settings().graph)), **server.status()}
    if as_json:
        print_json(info)
        return
    for key, value in info.items():
        typer.echo(f"{key:16} {value}")


@app.command()
def reset(
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    backend: BackendOption = None,
) -> None:
    """Delete every node of the service's graph and apply the schema again."""
    choose_backend(backend)
    if not yes:
        typer.confirm("Delete every scene graph in the store?", abort=True)
    with store_session() as store:
        store.clear()
        store.apply_schema()
        store.snapshot()
    typer.echo("store emptied; schema applied")


@app.command()
def stats(as_json: JsonOption = False) -> None:
    """Node and relationship counts per label, and scene-graph counts per source and split."""
    from rich.console import Console
    from rich.table import Table

    from covr.graph.report import COUNT_FIELDS, store_stats

    with store_session() as store:
        data = store_stats(store)
    if as_json:
        print_json(data)
        return
    console = Console()
    table = Table(title="scene graphs per source and split")
    for column in ("source", "split", *COUNT_FIELDS):
        table.add_column(column, justify="left" if column in ("source", "split") else "right")
    for row in data["datasets"]:
        table.add_row(*(str(row[c]) for c in ("source", "split", *COUNT_FIELDS)))
    table.add_row("total", "", *(str(data["totals"][c]) for c in COUNT_FIELDS))
    console.print(table)
    nodes = ", ".join(f"{k} {v}" for k, v in data["nodes"].items()) or "none"
    rels = ", ".join(f"{k} {v}" for k, v in data["relationships"].items()) or "none"
    console.print(f"nodes: {nodes}\nrelationships: {rels}")
