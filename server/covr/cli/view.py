"""``covr render`` and ``covr view``: drawings of scene graphs and examples, and the browser.

Everything heavy (the view room, numpy, the store) is imported inside the commands so that
``covr --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from covr.cli.common import (
    EXIT_BAD_INPUT,
    fail,
    load_settings,
    stop_signals,
    store_session,
)

if TYPE_CHECKING:
    from covr.scene.model import SceneGraph
    from covr.view.app import ViewApp
    from covr.view.config import ViewSettings
    from covr.view.dataset import Dataset
    from covr.view.sources import SceneSource


@contextlib.contextmanager
def _scene_source() -> Iterator[SceneSource]:
    """Scene graphs read from the configured store, opened (and the embedded server started) on
    the first read, so ``covr view`` serves its list pages at once; closed on exit."""
    from covr.view.sources import SceneSource
    from covr_loaders.readback import get_scene_graphs

    with contextlib.ExitStack() as stack:
        opened: list[Any] = []

        def read(ids: list[str]) -> Mapping[str, SceneGraph]:
            # SceneSource calls this under its lock: one opening, one reader at a time
            if not opened:
                opened.append(stack.enter_context(store_session()))
            return get_scene_graphs(opened[0], ids)

        yield SceneSource(read)


def _resolve_image(source: SceneSource, image_id: str) -> str:
    """A stored id, also for a bare original id (as ``covr show`` accepts)."""
    if ":" in image_id:
        return image_id
    candidates = [f"{s}:{image_id}" for s in ("gqa", "vg", "imsitu")]
    found = [i for i, g in source.get_many(candidates).items() if g is not None]
    if len(found) > 1:
        fail(f"{image_id!r} exists in several sources: {', '.join(found)}", EXIT_BAD_INPUT)
    return found[0] if found else image_id


def _check_out(out: Path) -> None:
    """Reject a bad ``--out`` before any store is started."""
    if out.suffix.lower() not in (".svg", ".png"):
        fail(f"--out must end in .svg or .png, got {out.name!r}", EXIT_BAD_INPUT)
    if not out.parent.is_dir():
        fail(f"--out: folder {out.parent} does not exist", EXIT_BAD_INPUT)


def _write(svg: str, out: Path, scale: float) -> None:
    """Write ``svg`` as ``.svg`` or rasterize it to ``.png`` (cairosvg)."""
    if out.suffix.lower() == ".svg":
        out.write_text(svg, encoding="utf-8")
    else:
        from covr.view.raster import svg_to_png

        out.write_bytes(svg_to_png(svg, scale=scale))
    typer.echo(str(out), err=True)


def _open_dataset(path: Path, rebuild: bool = False) -> Dataset:
    from covr.view.dataset import Dataset, DatasetError

    settings = load_settings()
    try:
        dataset = Dataset(
            path,
            index_dir=settings.data_dir / "view-index",
            rebuild=rebuild,
            on_build=lambda p: typer.echo(f"indexing {p} (once; kept beside it) ...", err=True),
        )
    except DatasetError as exc:
        fail(str(exc), EXIT_BAD_INPUT)
    if dataset.built:
        typer.echo(f"indexed {dataset.count:,} examples -> {dataset.index_path}", err=True)
    return dataset


def render(
    image_id: str | None = typer.Argument(
        None, help="Image id to draw (gqa:2370799, vg:1, imsitu:stapling_1.jpg or a bare id)."
    ),
    out: Path = typer.Option(..., "--out", help="Output file: .svg, or .png (rasterized)."),
    subgraph: str | None = typer.Option(
        None, "--subgraph", help="Subgraph key to highlight, e.g. 'man-(holding)->bat[brown]'."
    ),
    example: str | None = typer.Option(
        None,
        "--example",
        help="Draw this generated example instead of one image: its qid, or @N for the N-th "
        "example of the file (@1: the first).",
    ),
    examples_file: Path | None = typer.Option(
        None, "--in", help="Examples file (JSONL or Parquet) holding --example."
    ),
    scale: float = typer.Option(2.0, "--scale", min=0.25, max=8.0, help="PNG pixels per unit."),
) -> None:
    """Draw one scene graph (boxes on the image canvas and the graph) or one generated example
    (question, answer, program tree, each image with its role and the substituted node)."""
    from covr.view.sources import data_uri, find_photo

    settings = load_settings().view
    _check_out(out)
    if example is not None:
        if examples_file is None:
            fail("--example needs --in FILE (the examples file)", EXIT_BAD_INPUT)
        if image_id is not None:
            fail("give an IMAGE_ID or --example, not both", EXIT_BAD_INPUT)
        from covr.view.dataset import UnknownExample
        from covr.view.example_svg import example_svg

        dataset = _open_dataset(examples_file)
        try:
            chosen = dataset.example(_qid_of(dataset, example, examples_file))
        except UnknownExample as exc:
            fail(f"{examples_file}: {exc}", EXIT_BAD_INPUT)

        def photo(i: str) -> str | None:
            found = find_photo(settings.images_dir, i)
            return data_uri(found) if found else None

        with _scene_source() as source:
            scenes = source.get_many(chosen.get("scenes") or [])
        _write(example_svg(chosen, scenes, photo), out, scale)
        return
    if image_id is None:
        fail("give an IMAGE_ID, or --example QID --in FILE", EXIT_BAD_INPUT)
    from covr.view.roles import scene_marks
    from covr.view.scene_svg import scene_svg

    with _scene_source() as source:
        resolved = _resolve_image(source, image_id)
        scene = source.get(resolved)
    if scene is None:
        fail(f"no image {image_id!r} in the store", EXIT_BAD_INPUT)
    marks = None
    if subgraph is not None:
        try:
            marks = scene_marks(scene, subgraph)
        except (LookupError, ValueError) as exc:
            fail(f"--subgraph: {exc}", EXIT_BAD_INPUT)
    found = find_photo(settings.images_dir, scene.image_id)
    svg = scene_svg(scene, marks=marks, photo_href=data_uri(found) if found else None)
    _write(svg, out, scale)


def view(
    target: Path = typer.Argument(
        ..., help="Examples file (JSONL or Parquet) or a folder of them (split manifests too)."
    ),
    static: Path | None = typer.Option(
        None, "--static", help="Write a static HTML copy here instead of serving."
    ),
    limit: int = typer.Option(
        200, "--limit", min=1, max=100_000, help="--static: examples written (the first ones)."
    ),
    template: str = typer.Option("", "--template", help="--static: only this template."),
    text: str = typer.Option("", "--text", help="--static: only questions with these words."),
    port: int | None = typer.Option(
        None, "--port", min=0, max=65535, help="Port (default COVR_VIEW_PORT, 8765)."
    ),
    split: list[Path] = typer.Option(
        [], "--split", help="Split manifest (covr split output) to filter by; repeatable."
    ),
    plots: list[Path] = typer.Option(
        [], "--plots", help="Folder of PNGs (covr stats/evaluate --plots) to show; repeatable."
    ),
    predictions: Path | None = typer.Option(
        None, "--predictions", help="Predictions to evaluate: the plots page shows their charts."
    ),
    no_browser: bool = typer.Option(False, "--no-browser", help="Do not open a web browser."),
    insecure: bool = typer.Option(
        False,
        "--insecure",
        help="Listen on an address other machines can reach (COVR_VIEW_HOST) without "
        "COVR_VIEW_TOKEN (refused otherwise; warned at start). Same as COVR_VIEW_INSECURE=true.",
    ),
    reindex: bool = typer.Option(False, "--reindex", help="Rebuild the index of each file."),
) -> None:
    """Browse generated examples in a local web app (127.0.0.1:COVR_VIEW_PORT): paging over
    large files through an index kept beside each file, filters, full-text search, each example
    drawn; or write a static copy with --static. An address other than loopback needs
    COVR_VIEW_TOKEN (the browser asks for it as the password), or --insecure."""
    from covr.exposure import ExposureError
    from covr.view.app import Evaluation, ViewApp, ViewConfig, check_exposure, write_static
    from covr.view.dataset import DatasetError, Filters, SplitLists

    settings = load_settings().view
    insecure = insecure or settings.view_insecure
    if static is None:  # before anything is indexed: a refused configuration costs nothing
        try:
            check_exposure(settings.view_host, _view_token(settings), insecure=insecure, warn=False)
        except ExposureError as exc:
            fail(str(exc), EXIT_BAD_INPUT)
    files, manifests = _inputs(target, split, plots)
    lists = SplitLists(manifests)
    try:
        lists.names()
    except Exception as exc:  # a bad manifest: covr.splits raises SplitError with file and field
        fail(f"split manifest: {exc}", EXIT_BAD_INPUT)
    datasets = [_open_dataset(f, reindex) for f in files]
    for d in datasets:
        d.splits = lists
    evaluation = Evaluation(predictions, split[0] if split else None) if predictions else None
    with _scene_source() as scenes:
        config = ViewConfig(
            datasets,
            scenes,
            images_dir=settings.images_dir,
            page_size=settings.view_page_size,
            plot_dirs=list(plots),
            evaluation=evaluation,
        )
        if static is not None:
            try:
                written = write_static(
                    datasets[0],
                    scenes,
                    static,
                    filters=Filters(template=template, text=text),
                    limit=limit,
                    config=config,
                )
            except DatasetError as exc:
                fail(str(exc), EXIT_BAD_INPUT)
            typer.echo(f"{len(written)} files -> {static / 'index.html'}", err=True)
            return
        _serve(ViewApp(config), settings, port, open_browser=not no_browser, insecure=insecure)


def _inputs(
    target: Path, split: list[Path], plots: list[Path]
) -> tuple[list[Path], dict[str, Path]]:
    """The examples files and split manifests named on the command line (exit 2 on a bad one)."""
    from covr.view.dataset import find_datasets, find_split_manifests

    if target.is_dir():
        files = find_datasets(target)
        manifests = find_split_manifests(target)
        if not files:
            fail(f"{target}: no .jsonl or .parquet examples file in this folder", EXIT_BAD_INPUT)
    elif target.is_file():
        files, manifests = [target], {}
    else:
        fail(f"{target}: no such file or folder", EXIT_BAD_INPUT)
    for path in split:
        manifests[path.name if path.is_dir() else path.parent.name] = path
    for folder in plots:
        if not folder.is_dir():
            fail(f"--plots {folder}: not a folder", EXIT_BAD_INPUT)
    return files, manifests


def _view_token(settings: ViewSettings) -> str:
    return settings.view_token.get_secret_value() if settings.view_token else ""


def _serve(
    app: ViewApp, settings: ViewSettings, port: int | None, *, open_browser: bool, insecure: bool
) -> None:
    """Serve ``app`` until Ctrl-C; a port in use names the setting that moves it."""
    from covr.view.app import ViewServer

    try:
        server = ViewServer(
            app,
            settings.view_host,
            settings.view_port if port is None else port,
            token=_view_token(settings),
            insecure=insecure,
            threads=settings.view_threads,
            idle_timeout=settings.view_idle_timeout_s,
        )
    except OSError as exc:
        fail(
            f"cannot listen on {settings.view_host}:{port or settings.view_port}: "
            f"{exc.strerror or exc} (set COVR_VIEW_PORT or --port)",
        )
    with stop_signals() as wait_for_stop:
        typer.echo(f"covr view: {server.url} (Ctrl-C to stop)", err=True)
        sys.stderr.flush()
        if open_browser:
            import webbrowser

            webbrowser.open(server.url)
        server.start()
        try:
            wait_for_stop()  # Ctrl-C, or SIGTERM from whatever started it
        finally:
            server.stop()


def register(app: typer.Typer) -> None:
    app.command()(render)
    app.command()(view)


def _qid_of(dataset: Dataset, example: str, path: Path) -> str:
    """``--example``'s qid: itself, or for ``@N`` the N-th example's (qids hash the program, so
    documentation and scripts that want "an example" need not name one that a new engine
    version no longer writes)."""
    if not example.startswith("@"):
        return example
    from covr.view.dataset import Filters

    number = example[1:]
    if not number.isdigit() or int(number) < 1:
        fail(f"--example {example!r}: expected a qid or @N with N >= 1", EXIT_BAD_INPUT)
    qids = dataset.qids(Filters(), int(number))
    if len(qids) < int(number):
        fail(f"{path}: --example {example}: the file holds {len(qids)} examples", EXIT_BAD_INPUT)
    return qids[-1]
