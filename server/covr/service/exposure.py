"""Who can reach the service: loopback by default, anything else only with a token, or when the
operator says ``--insecure`` out loud (issue 21: ``COVR_SERVICE_HOST=0.0.0.0`` without a token
let an unauthenticated client on another host replace stored scene graphs). ``/metrics`` follows
the same rule with its own settings (issue 40 item 4: ``COVR_SERVICE_METRICS_HOST=0.0.0.0``
served every scrape, and ``COVR_SERVICE_METRICS_AUTH=true`` without a token checked nothing).

Also the configuration errors of the server's doors (TLS files, exposure) as one exception type,
so ``covr serve`` exits with the configuration-error code (2) and one line naming the setting.
"""

from __future__ import annotations

import logging
from pathlib import Path

from covr.exposure import Door, ExposureError, check_door, is_loopback
from covr.service.config import ServiceSettings

__all__ = ["ServiceConfigError", "check_exposure", "is_loopback", "tls_files"]

log = logging.getLogger("covr.service")


class ServiceConfigError(ExposureError):
    """A setting of the service's doors is unusable; ``field`` names the variable."""


def check_exposure(settings: ServiceSettings, *, insecure: bool = False) -> None:
    """Refuse a non-loopback bind without a token unless ``insecure``; warn when allowed; the
    same for ``/metrics`` when it is on.

    TLS alone does not authenticate a client, so it does not make an open bind safe; the
    bearer token does (with TLS, so it cannot be read off the wire).
    """
    token = settings.service_token is not None and bool(settings.service_token.get_secret_value())
    insecure = insecure or settings.service_insecure
    grpc_door = Door(
        what="serving",
        host=settings.service_host,
        host_variable="COVR_SERVICE_HOST",
        authenticated=token,
        missing="COVR_SERVICE_TOKEN is not set",
        risk="any client could import and replace scene graphs",
        remedy="Set a token (and TLS)",
        insecure_variable="COVR_SERVICE_INSECURE=true",
        open_risk="may read and write the store",
        tls=settings.service_tls_cert is not None,
    )
    check_door(grpc_door, insecure=insecure, log=log, error=ServiceConfigError)
    if not settings.service_metrics_port:
        return
    if settings.service_metrics_auth and not token:
        raise ServiceConfigError(
            "COVR_SERVICE_METRICS_AUTH",
            "is true but COVR_SERVICE_TOKEN is not set, so /metrics could check no scrape: set "
            "COVR_SERVICE_TOKEN, or COVR_SERVICE_METRICS_AUTH=false with /metrics on loopback",
        )
    metrics_door = Door(
        what="/metrics",
        host=settings.service_metrics_host,
        host_variable="COVR_SERVICE_METRICS_HOST",
        authenticated=settings.service_metrics_auth,
        missing="COVR_SERVICE_METRICS_AUTH is not true",
        risk="anyone could read every method's request counts, latencies and error rates",
        remedy="Set COVR_SERVICE_METRICS_AUTH=true (with COVR_SERVICE_TOKEN)",
        insecure_variable="COVR_SERVICE_INSECURE=true",
        open_risk="may read the metrics",
    )
    check_door(metrics_door, insecure=insecure, log=log, error=ServiceConfigError)


def tls_files(settings: ServiceSettings) -> tuple[bytes, bytes] | None:
    """``(key, certificate chain)`` PEM bytes, or ``None`` without TLS; errors name the file."""
    cert, key = settings.service_tls_cert, settings.service_tls_key
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        missing = "COVR_SERVICE_TLS_KEY" if key is None else "COVR_SERVICE_TLS_CERT"
        raise ServiceConfigError(
            missing, "TLS needs both COVR_SERVICE_TLS_CERT and COVR_SERVICE_TLS_KEY"
        )
    return _read(key, "COVR_SERVICE_TLS_KEY"), _read(cert, "COVR_SERVICE_TLS_CERT")


def _read(path: Path, variable: str) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ServiceConfigError(variable, f"{path}: {exc.strerror or exc}") from exc
    if b"-----BEGIN" not in data:
        raise ServiceConfigError(variable, f"{path}: not a PEM file")
    return data
