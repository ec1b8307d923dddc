"""``covr db ...``: the embedded server's life cycle and what the store holds."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from covr.cli.common import fail, load_settings, print_json, store_session
from covr.graph import GraphError
from covr.graph.embedded import EmbeddedServer
from covr.graph.report import COUNT_FIELDS, store_stats
from covr.settings import Backend

app = typer.Typer(help="Start, stop, inspect and reset the graph store.", no_args_is_help=True)

JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def _embedded_only(action: str) -> EmbeddedServer:
    settings = load_settings()
    if settings.backend is not Backend.EMBEDDED:
        fail(
            f"`covr db {action}` manages the embedded server only; COVR_GRAPH_URI points at "
            f"{settings.graph_uri}, which is managed outside this project",
            2,
        )
    return EmbeddedServer(settings)


@app.command()
def start() -> None:
    """Start the embedded server in the background so several commands share it.

    Without it, every command starts a private server for its own lifetime. The server keeps
    running until `covr db stop`; it listens on a Unix socket in COVR_DATA_DIR only.
    """
    server = _embedded_only("start")
    try:
        state = server.start_detached()
    except GraphError as exc:
        fail(str(exc))
    typer.echo(f"embedded FalkorDB running (pid {state.pid}) on {state.socket}")


@app.command()
def stop() -> None:
    """Stop the embedded server after writing a snapshot."""
    server = _embedded_only("stop")
    try:
        was_running = server.stop()
    except GraphError as exc:
        fail(str(exc))
    typer.echo("stopped (snapshot written)" if was_running else "not running")


@app.command()
def status(as_json: JsonOption = False) -> None:
    """Whether the embedded server runs, where, and who owns it."""
    server = _embedded_only("status")
    info = server.status()
    if as_json:
        print_json(info)
        return
    for key, value in info.items():
        typer.echo(f"{key:16} {value}")


@app.command()
def reset(
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
) -> None:
    """Delete every node of the service's graph and apply the schema again."""
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
