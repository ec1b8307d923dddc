"""Who may reach ``covr view`` (issue 40 item 4): the gRPC port's rule. Loopback needs nothing;
any other address needs COVR_VIEW_TOKEN, or --insecure, which is then warned about; the refusal
names COVR_VIEW_HOST and comes before any file is indexed (exit code 2)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from covr.cli.main import app
from covr.exposure import ExposureError
from covr.settings import get_settings
from covr.view.app import check_exposure
from tests.support.view_data import write_examples

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def fresh_settings() -> Iterator[None]:
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_an_open_view_without_a_token_is_refused() -> None:
    with pytest.raises(ExposureError) as refused:
        check_exposure("0.0.0.0", "", insecure=False)
    assert refused.value.field == "COVR_VIEW_HOST"
    assert "COVR_VIEW_TOKEN is not set" in refused.value.message
    assert "--insecure (COVR_VIEW_INSECURE=true)" in refused.value.message
    for host in ("127.0.0.1", "localhost", "::1"):
        check_exposure(host, "", insecure=False)


def test_a_token_or_insecure_opens_it_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="covr.view"):
        check_exposure("0.0.0.0", "", insecure=True)
        check_exposure("0.0.0.0", "secret", insecure=False)
        check_exposure("0.0.0.0", "", insecure=True, warn=False)  # the CLI's early check
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2
    assert messages[0].startswith("INSECURE: covr view on 0.0.0.0 without a token")
    assert "without TLS" in messages[1]


def test_covr_view_refuses_an_open_address_before_indexing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def served(*args: object, **kwargs: object) -> None:
        raise AssertionError("covr view listened on an open address without a token")

    monkeypatch.setattr("covr.view.app.ViewServer", served)  # no socket, whatever happens
    examples = write_examples(tmp_path / "examples.jsonl")
    env = {"COVR_DATA_DIR": str(tmp_path / "data"), "COVR_VIEW_HOST": "0.0.0.0"}
    done = CliRunner().invoke(app, ["view", str(examples), "--no-browser"], env=env)
    assert done.exit_code == 2, done.output
    assert "COVR_VIEW_HOST: 0.0.0.0 is reachable from other machines" in done.output
    assert not list(tmp_path.glob("*.covr-index.sqlite"))
