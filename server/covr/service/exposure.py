"""Who can reach the service: loopback by default, anything else only with a token, or when the
operator says ``--insecure`` out loud (issue 21: ``COVR_SERVICE_HOST=0.0.0.0`` without a token
let an unauthenticated client on another host replace stored scene graphs).

Also the configuration errors of the server's doors (TLS files, exposure) as one exception type,
so ``covr serve`` exits with the configuration-error code (2) and one line naming the setting.
"""

from __future__ import annotations

import ipaddress
import logging
from pathlib import Path

from covr.errors import CovrError
from covr.settings import Settings

log = logging.getLogger("covr.service")


class ServiceConfigError(CovrError):
    """A setting of the service's doors is unusable; ``field`` names the variable."""


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def check_exposure(settings: Settings, *, insecure: bool = False) -> None:
    """Refuse a non-loopback bind without a token unless ``insecure``; warn when allowed.

    TLS alone does not authenticate a client, so it does not make an open bind safe; the
    bearer token does (with TLS, so it cannot be read off the wire).
    """
    host = settings.service_host
    if is_loopback(host):
        return
    token = settings.service_token is not None and bool(settings.service_token.get_secret_value())
    if not token and not (insecure or settings.service_insecure):
        raise ServiceConfigError(
            "COVR_SERVICE_HOST",
            f"{host} is reachable from other machines and COVR_SERVICE_TOKEN is not set: any "
            "client could import and replace scene graphs. Set a token (and TLS), bind "
            "127.0.0.1, or pass --insecure (COVR_SERVICE_INSECURE=true) if this network is "
            "trusted",
        )
    if not token:
        log.warning(
            "INSECURE: serving on %s without a token; every client that reaches this address "
            "may read and write the store",
            host,
        )
    elif settings.service_tls_cert is None:
        log.warning(
            "serving on %s with a token but without TLS: the token crosses the network in "
            "clear text",
            host,
        )


def tls_files(settings: Settings) -> tuple[bytes, bytes] | None:
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
