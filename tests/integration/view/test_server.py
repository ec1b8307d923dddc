"""``covr view``'s HTTP server on real sockets (no store: the scene graphs come from memory):
the token (issue 40 item 4), a bounded number of handler threads with an idle timeout per
connection, and quiet client disconnects (issue 40 row 11)."""

from __future__ import annotations

import base64
import logging
import socket
import struct
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from covr.exposure import ExposureError
from covr.view.app import ViewApp, ViewConfig, ViewServer
from covr.view.dataset import Dataset
from covr.view.sources import SceneSource
from tests.support.view_data import sample_scenes, write_examples

pytestmark = pytest.mark.integration


@pytest.fixture
def app(tmp_path: Path) -> ViewApp:
    examples = write_examples(tmp_path / "examples.jsonl")
    return ViewApp(ViewConfig([Dataset(examples)], SceneSource.from_graphs(sample_scenes())))


@pytest.fixture
def serving(app: ViewApp) -> Iterator[list[ViewServer]]:
    servers: list[ViewServer] = []
    yield servers
    for server in servers:
        server.stop()


def _get(url: str, auth: str = "") -> int:
    request = urllib.request.Request(url, headers={"Authorization": auth} if auth else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        return refused.code


def test_a_token_is_asked_for_as_the_password(app: ViewApp, serving: list[ViewServer]) -> None:
    server = ViewServer(app, "127.0.0.1", 0, token="s3cret").start()
    serving.append(server)
    basic = base64.b64encode(b"anyone:s3cret").decode()
    wrong = base64.b64encode(b"anyone:nope").decode()
    assert _get(server.url) == 401
    assert _get(server.url, f"Basic {wrong}") == 401
    assert _get(server.url, "Bearer nope") == 401
    assert _get(server.url, f"Basic {basic}") == 200
    assert _get(server.url + "static/style.css", "Bearer s3cret") == 200
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(server.url, timeout=10)
    assert refused.value.headers["WWW-Authenticate"].startswith('Basic realm="covr view"')


def test_an_open_address_needs_a_token_or_insecure(
    app: ViewApp, serving: list[ViewServer], caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(ExposureError, match="COVR_VIEW_TOKEN is not set"):
        ViewServer(app, "0.0.0.0", 0)
    with caplog.at_level(logging.WARNING, logger="covr.view"):
        server = ViewServer(app, "0.0.0.0", 0, insecure=True).start()
    serving.append(server)
    assert any("INSECURE: covr view on 0.0.0.0" in r.getMessage() for r in caplog.records)
    port = server.httpd.server_address[1]
    assert _get(f"http://127.0.0.1:{port}/") == 200


def _view_threads() -> int:
    return sum(t.name.startswith("covr-view") for t in threading.enumerate())


def test_idle_connections_hold_a_bounded_number_of_threads(
    app: ViewApp, serving: list[ViewServer]
) -> None:
    """60 connections that never send a request made 63 threads, kept for ever; now 4 threads
    take them, each closed after the idle timeout, those beyond the waiting room get 503."""
    server = ViewServer(app, "127.0.0.1", 0, threads=4, idle_timeout=0.5).start()
    serving.append(server)
    port = server.httpd.server_address[1]
    before = _view_threads()
    idle = [socket.create_connection(("127.0.0.1", port), timeout=20) for _ in range(60)]
    try:
        time.sleep(0.5)
        assert _view_threads() <= before
        started = time.monotonic()
        answers = [s.recv(1024) for s in idle]  # b"" once the server closed it
        assert time.monotonic() - started < 15
    finally:
        for s in idle:
            s.close()
    busy = [a for a in answers if a.startswith(b"HTTP/1.0 503")]
    assert answers.count(b"") + len(busy) == 60
    assert 0 < len(busy) <= 60 - 16  # those in the waiting room (16) are closed, not refused
    assert _get(server.url) == 200


def test_a_client_that_leaves_is_no_traceback(
    app: ViewApp, serving: list[ViewServer], capfd: pytest.CaptureFixture[str]
) -> None:
    """Each client that closed before its answer was written printed a BrokenPipe (or reset)
    traceback on the viewer's terminal."""
    server = ViewServer(app, "127.0.0.1", 0).start()
    serving.append(server)
    port = server.httpd.server_address[1]
    for _ in range(10):
        client = socket.create_connection(("127.0.0.1", port), timeout=10)
        client.sendall(b"GET /?text=man HTTP/1.0\r\n\r\n")
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        client.close()  # a reset: the answer finds no reader
    time.sleep(1.0)
    assert _get(server.url) == 200
    err = capfd.readouterr().err
    assert "Traceback" not in err
    assert "Error" not in err
