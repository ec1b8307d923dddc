"""``covr view``: the local dataset browser (a small threaded HTTP server) and its static copy.

Served on ``COVR_VIEW_HOST:COVR_VIEW_PORT`` (127.0.0.1:8765 by default; another address needs
``COVR_VIEW_TOKEN`` or ``--insecure``) with the standard library's ``HTTPServer`` and a bounded
pool of handler threads (:class:`BoundedHTTPServer`): the pages are rendered on the server
(:mod:`covr.view.pages`), so nothing is fetched from anywhere else and the browser runs no
script. Routes:

``/``            the examples list (filters and paging in the query string; ``ds`` picks a file)
``/example``     one example drawn (``qid``), with previous/next within the filters
``/example.svg`` the same example as one SVG document (what ``covr render --example`` writes)
``/image``       one scene graph (``id``; ``subgraph`` = a key to highlight)
``/plots``       the ``covr stats --plots`` charts of the file, and ``covr evaluate --plots``
                 charts when predictions were given (or any PNGs of ``--plots`` folders)
``/plot``        one of those PNGs (by number: no paths in URLs)
``/photo``       a photo from ``COVR_IMAGES_DIR``
``/static/style.css``
"""

from __future__ import annotations

import base64
import contextlib
import hmac
import json
import logging
import queue
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any, overload
from urllib.parse import parse_qs, urlsplit

from covr.exposure import Door, check_door
from covr.jsonlines import json_lines
from covr.questions.example import ExampleRecord
from covr.view.dataset import Dataset, DatasetError, Filters, UnknownExample
from covr.view.pages import (
    STYLE,
    Links,
    ServerLinks,
    error_page,
    example_page,
    image_page,
    list_page,
    plots_page,
)
from covr.view.sources import SceneSource, find_photo

log = logging.getLogger("covr.view")

PlotMaker = Callable[[], list[tuple[str, Path]]]


@dataclass
class Evaluation:
    """Predictions to evaluate against a dataset for the plots page (``covr evaluate``)."""

    predictions: Path
    split: Path | None = None


@dataclass
class ViewConfig:
    """Everything the browser shows: datasets, scene source, photos and plot inputs."""

    datasets: list[Dataset]
    scenes: SceneSource
    images_dir: Path | None = None
    page_size: int = 25
    plot_dirs: list[Path] = field(default_factory=list)
    evaluation: Evaluation | None = None


class Plots:
    """The plots of one dataset, made once and kept beside its index."""

    def __init__(self, config: ViewConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._made: dict[int, list[tuple[str, list[tuple[str, Path]]]]] = {}

    def sections(self, ds: int) -> list[tuple[str, list[tuple[str, Path]]]]:
        with self._lock:
            if ds not in self._made:
                self._made[ds] = self._make(self.config.datasets[ds])
            return self._made[ds]

    def _make(self, dataset: Dataset) -> list[tuple[str, list[tuple[str, Path]]]]:
        from covr.questions.stats import plots as stats_plots

        out_dir = dataset.index_path.with_name(dataset.path.name + ".covr-plots")
        stamp = out_dir / "stamp.json"
        fingerprint = json.dumps([dataset.path.stat().st_size, dataset.path.stat().st_mtime_ns])
        stats_dir = out_dir / "stats"
        if stamp.is_file() and stamp.read_text() == fingerprint and stats_dir.is_dir():
            stats = sorted(stats_dir.glob("*.png"))
        else:
            stats = stats_plots(StreamedExamples(dataset), stats_dir)
            stamp.write_text(fingerprint)
        sections = [("covr stats --plots", [(p.stem, p) for p in stats])]
        evaluation = self.config.evaluation
        if evaluation is not None:
            sections.append(("covr evaluate --plots", self._evaluate(dataset, evaluation, out_dir)))
        for folder in self.config.plot_dirs:
            sections.append((str(folder), [(p.stem, p) for p in sorted(folder.glob("*.png"))]))
        return sections

    @staticmethod
    def _evaluate(
        dataset: Dataset, evaluation: Evaluation, out_dir: Path
    ) -> list[tuple[str, Path]]:
        from covr.splits.builders import read_manifest
        from covr.splits.evaluate import evaluate, read_predictions, split_sets, write_plots

        gold = list(iter_examples(dataset))
        lists = read_manifest(evaluation.split)[1] if evaluation.split else None
        evaluated, train, iid = split_sets(gold, lists)
        report = evaluate(evaluated, read_predictions(evaluation.predictions), train=train, iid=iid)
        name = evaluation.split.name if evaluation.split else "all"
        return [(p.stem, p) for p in write_plots(report, out_dir / "evaluate", name=name)]


class StreamedExamples(Sequence[ExampleRecord]):
    """A dataset's examples as a sequence that streams the file on every pass.

    ``covr.questions.stats.plots`` takes a sequence and walks it a few times; a list of a 1 GB
    file's examples would need several GB of memory, a pass over the file needs none.
    """

    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset

    def __len__(self) -> int:
        return self.dataset.count

    def __iter__(self) -> Iterator[ExampleRecord]:
        return iter_examples(self.dataset)

    @overload
    def __getitem__(self, index: int) -> ExampleRecord: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[ExampleRecord]: ...
    def __getitem__(self, index: int | slice) -> ExampleRecord | Sequence[ExampleRecord]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        row = self.dataset.page(Filters(), index % len(self) if index < 0 else index, 1).rows
        if not row:
            raise IndexError(index)
        return self.dataset.example(row[0].qid)


def iter_examples(dataset: Dataset) -> Iterator[ExampleRecord]:
    """Every example of a dataset, streamed from its file."""
    if dataset.kind == "parquet":
        import pyarrow.parquet as pq

        from covr.view.dataset import from_parquet

        for batch in pq.ParquetFile(dataset.path).iter_batches(batch_size=5000):
            for record in batch.to_pylist():
                yield from_parquet(record)
        return
    for line in json_lines(dataset.path, DatasetError):
        yield line.value


class ViewApp:
    """Request handling independent of the HTTP plumbing (``handle(path, query)``)."""

    def __init__(self, config: ViewConfig) -> None:
        self.config = config
        self.plots = Plots(config)
        self._plot_files: list[Path] = []
        self._plot_lock = threading.Lock()

    def links(self, ds: int) -> ServerLinks:
        return ServerLinks(ds=ds, has_photos=self.config.images_dir is not None)

    def handle(self, path: str, query: Mapping[str, str]) -> tuple[int, str, bytes]:
        """``(status, content type, body)`` for one GET request."""
        html = "text/html; charset=utf-8"
        try:
            ds = int(query.get("ds", "0") or 0)
        except ValueError:
            ds = -1
        links = self.links(max(ds, 0))
        if not 0 <= ds < len(self.config.datasets):
            return 404, html, error_page(f"no dataset number {query.get('ds')}", links).encode()
        dataset = self.config.datasets[ds]
        try:
            if path == "/":
                return 200, html, self._list(dataset, ds, query, links).encode()
            if path == "/example":
                return self._example(dataset, query, links)
            if path == "/example.svg":
                from covr.view.example_svg import example_svg

                example = dataset.example(query.get("qid", ""))
                scenes = self.config.scenes.get_many(example.get("scenes") or [])
                return 200, "image/svg+xml", example_svg(example, scenes).encode()
            if path == "/image":
                return self._image(query, links)
            if path == "/plots":
                return 200, html, self._plots(ds, links).encode()
            if path == "/plot":
                return self._plot_file(query)
            if path == "/photo":
                return self._photo(query)
            if path == "/static/style.css":
                return 200, "text/css; charset=utf-8", STYLE.encode()
        except UnknownExample as exc:
            return 404, html, error_page(str(exc), links).encode()
        except DatasetError as exc:
            return 400, html, error_page(str(exc), links, 400).encode()
        return 404, html, error_page(f"no page {path}", links).encode()

    def _list(self, dataset: Dataset, ds: int, query: Mapping[str, str], links: Links) -> str:
        filters = Filters.from_query(query)
        try:
            offset = max(0, int(query.get("offset", "0") or 0))
        except ValueError:
            offset = 0
        error = ""
        try:
            page = dataset.page(filters, offset, self.config.page_size)
        except DatasetError as exc:  # e.g. an unknown split list
            error = str(exc)
            page = dataset.page(Filters(), offset, self.config.page_size)
        names = [str(d.path) for d in self.config.datasets]
        return list_page(dataset, page, filters, links, ds=ds, datasets=names, error=error)

    def _example(
        self, dataset: Dataset, query: Mapping[str, str], links: Links
    ) -> tuple[int, str, bytes]:
        qid = query.get("qid", "")
        filters = Filters.from_query(query)
        example = dataset.example(qid)
        scenes = self.config.scenes.get_many(example.get("scenes") or [])
        neighbours = dataset.neighbours(qid, filters)
        page = example_page(
            example,
            scenes,
            links,
            filters=filters,
            neighbours=neighbours,
            subtitle=str(dataset.path),
        )
        return 200, "text/html; charset=utf-8", page.encode()

    def _image(self, query: Mapping[str, str], links: Links) -> tuple[int, str, bytes]:
        from covr.view.roles import scene_marks
        from covr.view.scene_svg import scene_svg

        html = "text/html; charset=utf-8"
        image_id = query.get("id", "")
        scene = self.config.scenes.get(image_id)
        if scene is None:
            return 404, html, error_page(f"no image {image_id!r} in the store", links).encode()
        marks = None
        key = query.get("subgraph", "")
        if key:
            try:
                marks = scene_marks(scene, key)
            except (LookupError, ValueError) as exc:
                return 400, html, error_page(str(exc), links, 400).encode()
        photo = links.photo(image_id)
        svg = scene_svg(scene, marks=marks, photo_href=photo)
        return 200, html, image_page(scene, svg, links).encode()

    def _plots(self, ds: int, links: Links) -> str:
        sections = self.plots.sections(ds)
        shown: list[tuple[str, list[tuple[str, str]]]] = []
        with self._plot_lock:
            for heading, items in sections:
                urls = []
                for caption, path in items:
                    if path not in self._plot_files:
                        self._plot_files.append(path)
                    urls.append((caption, f"/plot?n={self._plot_files.index(path)}"))
                shown.append((heading, urls))
        return plots_page(shown, links)

    def _plot_file(self, query: Mapping[str, str]) -> tuple[int, str, bytes]:
        try:
            path = self._plot_files[int(query.get("n", ""))]
        except (ValueError, IndexError):
            return 404, "text/plain", b"no such plot"
        return 200, "image/png", path.read_bytes()

    def _photo(self, query: Mapping[str, str]) -> tuple[int, str, bytes]:
        import mimetypes

        path = find_photo(self.config.images_dir, query.get("id", ""))
        if path is None:
            return 404, "text/plain", b"no photo"
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return 200, kind, path.read_bytes()


def check_exposure(host: str, token: str, *, insecure: bool, warn: bool = True) -> None:
    """The project's rule for every port (:func:`covr.exposure.check_door`): an address other
    machines can reach needs ``COVR_VIEW_TOKEN``, or ``insecure`` (then warned)."""
    door = Door(
        what="covr view",
        host=host,
        host_variable="COVR_VIEW_HOST",
        authenticated=bool(token),
        missing="COVR_VIEW_TOKEN is not set",
        risk="anyone could browse the examples, scene graphs and photos it serves",
        remedy="Set COVR_VIEW_TOKEN (the browser asks for it as the password)",
        insecure_variable="COVR_VIEW_INSECURE=true",
        open_risk="may browse the examples, scene graphs and photos",
    )
    check_door(door, insecure=insecure, log=log if warn else None)


def _authorized(header: str, token: str) -> bool:
    """``Authorization: Bearer TOKEN``, or Basic with TOKEN as the password (any user name)."""
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "basic":
        try:
            value = base64.b64decode(value.strip(), validate=True).decode().partition(":")[2]
        except (ValueError, UnicodeDecodeError):
            return False
    elif scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(value.strip().encode(), token.encode())


def _handler(app: ViewApp, token: str, idle_timeout: float) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "covr-view"
        timeout = idle_timeout  # per socket operation: a silent or non-reading client is closed

        def do_GET(self) -> None:
            if token and not _authorized(self.headers.get("Authorization", ""), token):
                body = b"covr view needs COVR_VIEW_TOKEN as the password\n"
                self._reply(401, "text/plain; charset=utf-8", body, basic=True)
                return
            parts = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
            try:
                status, kind, body = app.handle(parts.path, query)
            except Exception as exc:  # one bad request must not stop the server
                status, kind = 500, "text/plain; charset=utf-8"
                body = f"internal error: {type(exc).__name__}: {exc}".encode()
            self._reply(status, kind, body)

        def _reply(self, status: int, kind: str, body: bytes, *, basic: bool = False) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            if basic:
                self.send_header("WWW-Authenticate", 'Basic realm="covr view", charset="UTF-8"')
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return  # quiet: the CLI prints the URL; errors come back as pages

    return Handler


_BUSY = (
    b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n"
    b"Retry-After: 1\r\nConnection: close\r\n\r\nbusy\n"
)


class BoundedHTTPServer(HTTPServer):
    """An HTTP server with ``threads`` handler threads (issue 40 row 11: one thread per
    connection, so 60 half-open connections made 63 threads); up to ``4 * threads`` accepted
    connections wait for one, a connection beyond that gets 503 at once. A client that leaves
    (broken pipe, reset, idle timeout) is one debug line, not a traceback on stderr."""

    request_queue_size = 64  # the listen backlog: a browser's burst is not dropped by the kernel

    def __init__(
        self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], *, threads: int
    ) -> None:
        super().__init__(address, handler)
        self._waiting: queue.Queue[tuple[Any, Any] | None] = queue.Queue(maxsize=4 * threads)
        self.workers = [
            threading.Thread(target=self._work, name=f"covr-view-{i}", daemon=True)
            for i in range(threads)
        ]
        for worker in self.workers:
            worker.start()

    def process_request(self, request: Any, client_address: Any) -> None:
        try:
            self._waiting.put_nowait((request, client_address))
        except queue.Full:
            with contextlib.suppress(OSError):
                request.settimeout(0.5)
                request.sendall(_BUSY)
            self.shutdown_request(request)

    def _work(self) -> None:
        while (item := self._waiting.get()) is not None:
            request, client_address = item
            try:
                self.finish_request(request, client_address)
            except Exception:
                self.handle_error(request, client_address)
            finally:
                self.shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError | TimeoutError):
            log.debug("covr view: client %s left (%s)", client_address, type(error).__name__)
        else:
            log.error("covr view: error serving %s", client_address, exc_info=True)

    def server_close(self) -> None:
        super().server_close()
        while True:  # connections still waiting are closed; the workers stop
            try:
                item = self._waiting.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                self.shutdown_request(item[0])
        for _ in self.workers:
            with contextlib.suppress(queue.Full):
                self._waiting.put_nowait(None)


class ViewServer:
    """The HTTP server around a :class:`ViewApp`; ``port=0`` picks a free port.

    An address other machines can reach needs ``token`` (asked for as the password) unless
    ``insecure`` (:func:`check_exposure`); ``threads`` handle connections, each closed after
    ``idle_timeout`` seconds without progress."""

    def __init__(
        self,
        app: ViewApp,
        host: str,
        port: int,
        *,
        token: str = "",
        insecure: bool = False,
        threads: int = 16,
        idle_timeout: float = 20.0,
    ) -> None:
        check_exposure(host, token, insecure=insecure)
        self.app = app
        handler = _handler(app, token, idle_timeout)
        self.httpd = BoundedHTTPServer((host, port), handler, threads=threads)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/"

    def serve_forever(self) -> None:
        self.httpd.serve_forever(poll_interval=0.2)

    def start(self) -> ViewServer:
        """Serve in a background thread (tests, benchmarks)."""
        self._thread = threading.Thread(target=self.serve_forever, name="covr-view", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)


# -- static copy -------------------------------------------------------------------------------


@dataclass(frozen=True)
class StaticLinks:
    """Relative links between the files of ``covr view --static`` (``depth``: folder level)."""

    qids: frozenset[str]
    depth: int = 0
    with_plots: bool = False

    def _up(self) -> str:
        return "../" * self.depth

    def home(self, filters: Filters | None = None, offset: int = 0) -> str:
        return self._up() + "index.html"

    def example(self, qid: str, filters: Filters | None = None) -> str:
        return self._up() + f"examples/{_file_name(qid)}.html"

    def image(self, image_id: str) -> str | None:
        return None

    def plots(self) -> str | None:
        return self._up() + "plots.html" if self.with_plots else None

    def style(self) -> str:
        return self._up() + "style.css"

    def photo(self, image_id: str) -> str | None:
        return None


def _file_name(qid: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in qid)


def write_static(
    dataset: Dataset,
    scenes: SceneSource,
    out: Path,
    *,
    filters: Filters,
    limit: int,
    plots: bool = True,
    config: ViewConfig | None = None,
) -> list[Path]:
    """The first ``limit`` examples matching ``filters`` as plain HTML files under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "examples").mkdir(exist_ok=True)
    page = dataset.page(filters, 0, limit)
    qids = [r.qid for r in page.rows]
    top = StaticLinks(frozenset(qids), 0, plots)
    inner = StaticLinks(frozenset(qids), 1, plots)
    written: list[Path] = []
    (out / "style.css").write_text(STYLE, encoding="utf-8")
    written.append(out / "style.css")
    shown = type(page)(page.rows, len(page.rows), 0, len(page.rows))
    index_html = _static_list(dataset, shown, filters, top)
    (out / "index.html").write_text(index_html, encoding="utf-8")
    written.append(out / "index.html")
    for i, qid in enumerate(qids):
        example = dataset.example(qid)
        drawn = scenes.get_many(example.get("scenes") or [])
        before = qids[i - 1] if i > 0 else None
        after = qids[i + 1] if i + 1 < len(qids) else None
        html = example_page(example, drawn, inner, neighbours=(before, after))
        target = out / "examples" / f"{_file_name(qid)}.html"
        target.write_text(html, encoding="utf-8")
        written.append(target)
    if plots:
        sections = Plots(config or ViewConfig([dataset], scenes)).sections(0)
        (out / "plots").mkdir(exist_ok=True)
        shown_sections: list[tuple[str, Sequence[tuple[str, str]]]] = []
        for heading, items in sections:
            urls = []
            for caption, path in items:
                target = out / "plots" / path.name
                target.write_bytes(path.read_bytes())
                written.append(target)
                urls.append((caption, f"plots/{path.name}"))
            shown_sections.append((heading, urls))
        (out / "plots.html").write_text(plots_page(shown_sections, top), encoding="utf-8")
        written.append(out / "plots.html")
    return written


def _static_list(dataset: Dataset, page: Any, filters: Filters, links: StaticLinks) -> str:
    """The list page without the filter form (a static copy cannot query)."""
    from covr.view.pages import layout
    from covr.view.svg import esc

    described = ", ".join(f"{k} = {v}" for k, v in filters.as_query().items()) or "no filter"
    rows = [
        f"<p class='muted'>{len(page.rows)} examples of {esc(dataset.path.name)} ({esc(described)})"
        "</p><table class='examples'><thead><tr><th>#</th><th>question</th><th>answer</th>"
        "<th>template</th><th>paper template</th><th>images</th></tr></thead><tbody>"
    ]
    for r in page.rows:
        rows.append(
            f'<tr class="example-row" data-qid="{esc(r.qid)}"><td class="muted">{r.row + 1}</td>'
            f'<td><a class="open" href="{esc(links.example(r.qid))}">{esc(r.utterance)}</a></td>'
            f"<td>{esc(r.answer)}</td><td>{esc(r.template)}</td><td>{esc(r.paper_template)}</td>"
            f"<td>{r.images}</td></tr>"
        )
    rows.append("</tbody></table>")
    return layout("examples", "".join(rows), links, subtitle=dataset.path.name)
