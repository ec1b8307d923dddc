"""Who may reach the service (issue 21): loopback is always fine; any other bind address needs a
token, or an explicit --insecure that is then warned about; TLS files are checked up front and a
bad one is a configuration error naming its variable (exit code 2 in covr serve)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from covr.service.exposure import ServiceConfigError, check_exposure, is_loopback, tls_files
from covr.settings import Settings

pytestmark = pytest.mark.unit


def settings(**values: Any) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("localhost", True),
        ("::1", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("covr.example", False),
    ],
)
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_an_open_bind_without_a_token_is_refused() -> None:
    with pytest.raises(ServiceConfigError) as refused:
        check_exposure(settings(service_host="0.0.0.0").service)
    assert refused.value.field == "COVR_SERVICE_HOST"
    assert "COVR_SERVICE_TOKEN is not set" in refused.value.message
    check_exposure(settings(service_host="127.0.0.1").service)  # loopback needs nothing


def test_insecure_or_a_token_allows_it_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="covr.service"):
        check_exposure(settings(service_host="0.0.0.0").service, insecure=True)
        check_exposure(settings(service_host="0.0.0.0", service_insecure=True).service)
        check_exposure(settings(service_host="0.0.0.0", service_token="t").service)
    messages = [r.getMessage() for r in caplog.records]
    assert sum("INSECURE" in m for m in messages) == 2
    assert any("without TLS" in m for m in messages)


def test_tls_files_are_checked_and_named(tmp_path: Path) -> None:
    assert tls_files(settings().service) is None
    cert = tmp_path / "server.crt"
    cert.write_text("-----BEGIN CERTIFICATE-----\n")
    cases = [
        ({"service_tls_cert": cert}, "COVR_SERVICE_TLS_KEY", "needs both"),
        ({"service_tls_key": cert}, "COVR_SERVICE_TLS_CERT", "needs both"),
        (
            {"service_tls_cert": cert, "service_tls_key": tmp_path / "none.key"},
            "COVR_SERVICE_TLS_KEY",
            "No such file",
        ),
        (
            {"service_tls_cert": cert, "service_tls_key": tmp_path},
            "COVR_SERVICE_TLS_KEY",
            "",
        ),
    ]
    plain = tmp_path / "plain.key"
    plain.write_text("not a key")
    cases.append(
        ({"service_tls_cert": cert, "service_tls_key": plain}, "COVR_SERVICE_TLS_KEY", "not a PEM")
    )
    for values, variable, message in cases:
        with pytest.raises(ServiceConfigError) as bad:
            tls_files(settings(**values).service)
        assert bad.value.field == variable
        assert message in bad.value.message


def test_metrics_follow_the_same_rule_naming_their_settings(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Issue 40 rows 4-5: ``COVR_SERVICE_METRICS_HOST=0.0.0.0`` served every scrape without a
    word, and ``COVR_SERVICE_METRICS_AUTH=true`` without a token checked nothing."""
    on = {"service_metrics_port": 9100}
    cases: list[tuple[dict[str, Any], str, str]] = [
        ({"service_metrics_host": "0.0.0.0"}, "COVR_SERVICE_METRICS_HOST", "METRICS_AUTH"),
        (
            {"service_metrics_host": "0.0.0.0", "service_metrics_auth": True},
            "COVR_SERVICE_METRICS_AUTH",
            "COVR_SERVICE_TOKEN is not set",
        ),
        ({"service_metrics_auth": True}, "COVR_SERVICE_METRICS_AUTH", "COVR_SERVICE_TOKEN"),
        (
            {"service_metrics_host": "0.0.0.0", "service_token": "t"},
            "COVR_SERVICE_METRICS_HOST",
            "COVR_SERVICE_METRICS_AUTH is not true",
        ),
    ]
    for values, variable, words in cases:
        with pytest.raises(ServiceConfigError) as refused:
            check_exposure(settings(**on, **values).service)
        assert refused.value.field == variable
        assert words in refused.value.message
    # off, loopback, authenticated or --insecure: served (the last two warned)
    check_exposure(settings(service_metrics_host="0.0.0.0").service)
    check_exposure(settings(**on).service)
    with caplog.at_level(logging.WARNING, logger="covr.service"):
        check_exposure(
            settings(
                **on, service_metrics_host="0.0.0.0", service_metrics_auth=True, service_token="t"
            ).service
        )
        check_exposure(settings(**on, service_metrics_host="0.0.0.0").service, insecure=True)
    messages = [r.getMessage() for r in caplog.records]
    assert any("/metrics on 0.0.0.0 with a token but without TLS" in m for m in messages)
    assert any(m.startswith("INSECURE: /metrics on 0.0.0.0") for m in messages)
