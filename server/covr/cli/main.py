"""The ``covr`` command: one sub-command group per area of the service."""

from __future__ import annotations

from pathlib import Path

import typer

from covr.cli import build as build_cli
from covr.cli import data, db, serve, splits
from covr.cli import models as models_cli
from covr.cli import questions as questions_cli
from covr.cli import related as related_cli
from covr.cli import scale as scale_cli
from covr.cli import view as view_cli
from covr.cli.common import (
    BACKEND_HELP,
    BACKEND_METAVAR,
    EXIT_BAD_INPUT,
    choose_backend,
    fail,
    load_settings,
    print_json,
    store_session,
)
from covr.cli.helpfmt import CovrGroup

app = typer.Typer(
    help="COVR graph service: scene graphs in a graph database, distractors, questions, splits.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Plain help and usage errors: rendering them with rich costs ~0.4 s of imports on every
    # `--help`, more than the rest of the start-up (issue 20 targets 0.3 s); the root's mode
    # applies to every sub-command.
    rich_markup_mode=None,
    cls=CovrGroup,
)
app.add_typer(db.app, name="db")
app.add_typer(data.load_app, name="load")
app.command()(data.show)
app.command()(data.synth)
app.command()(related_cli.subgraphs)
app.command()(related_cli.related)
app.command()(serve.serve)
app.add_typer(splits.app, name="split")
app.add_typer(models_cli.app, name="models")
app.command()(splits.properties)
app.command()(splits.easiness)
app.command()(splits.evaluate)
app.command()(splits.baselines)
questions_cli.register(app)
scale_cli.register(app)
view_cli.register(app)
app.command()(build_cli.build)


@app.callback()
def main(
    backend: str | None = typer.Option(
        None, "--backend", metavar=BACKEND_METAVAR, help=BACKEND_HELP
    ),
) -> None:
    """COVR graph service: scene graphs in a graph database, distractors, questions, splits."""
    choose_backend(backend)


@app.command()
def doctor(
    as_json: bool = typer.Option(False, "--json", help="Print machine-readable JSON."),
) -> None:
    """Check the store: backend, location, versions, schema version, indexes and counts.

    Exits with 1 when a problem is found (store down, schema missing, indexes not ready).
    """
    from covr.graph.report import doctor_report

    settings = load_settings()
    with store_session() as store:
        report = doctor_report(store, settings.graph)
    if as_json:
        print_json(report)
    else:
        typer.echo(f"backend         {report['backend']}")
        typer.echo(f"location        {report['location']}")
        typer.echo(f"server          {report['server_version']}")
        typer.echo(
            f"schema version  {report['schema_version']} (expected "
            f"{report['expected_schema_version']})"
        )
        for index in report["indexes"]:
            typer.echo(f"index           {index['label']}.{index['property']}: {index['state']}")
        for label, count in report["counts"].items():
            typer.echo(f"nodes           {label}: {count}")
        for problem in report["problems"]:
            typer.echo(f"problem         {problem}")
        typer.echo("ok" if report["ok"] else "NOT OK")
    if not report["ok"]:
        raise typer.Exit(1)


@app.command()
def quickstart(
    out: Path | None = typer.Option(
        None,
        "--out",
        help="Where the generated questions go (JSONL); default COVR_DATA_DIR/quickstart.jsonl.",
    ),
) -> None:
    """The main job on the configured store (the embedded FalkorDB by default, the managed Neo4j
    with --backend neo4j): start the store, apply the schema, load the bundled samples (unless
    it holds them), generate questions for the samples' val images only (whatever else the
    store holds) through the graph lookup and the classifiers, and print what is stored and what
    was generated. Stdout is that JSON and nothing else; messages go to stderr."""
    from covr.graph.report import store_stats

    settings = load_settings()
    target = out or settings.data_dir / "quickstart.jsonl"
    if out is not None and not out.parent.is_dir():
        fail(f"--out: folder {out.parent} does not exist", EXIT_BAD_INPUT)
    with store_session() as store:
        typer.echo(f"store: {store.backend} at {getattr(store, 'location', '?')}", err=True)
        store.apply_schema()
        typer.echo("schema applied; indexes online", err=True)
        samples = data.load_samples_unless_present(store)
        stats = store_stats(store)
        typer.echo("generating questions for the val images of the samples ...", err=True)
        questions = questions_cli.sample_questions(store, "val", target, images=samples)
    print_json({"store": stats, "questions": questions})


if __name__ == "__main__":
    app()
