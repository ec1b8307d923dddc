"""One rule for every port the project opens (issue 40 item 4): loopback by default, an address
other machines can reach only behind a token, or when the operator says ``--insecure`` out loud
(then warned at start). ``covr serve``'s gRPC port, its ``/metrics`` and ``covr view`` apply it
alike (:mod:`covr.service.exposure`, :mod:`covr.view.app`).
"""

from __future__ import annotations

import ipaddress
import logging
from dataclasses import dataclass

from covr.errors import CovrError


class ExposureError(CovrError):
    """A door would be open to other machines without a token; ``field`` names the setting."""


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


@dataclass(frozen=True)
class Door:
    """One listening port and the words its refusal and warnings use."""

    what: str  # "serving", "/metrics", "covr view": the subject of the warnings
    host: str
    host_variable: str  # the setting that moves it: COVR_SERVICE_HOST
    authenticated: bool  # a client must show the token to get in
    missing: str  # why not: "COVR_SERVICE_TOKEN is not set"
    risk: str  # "any client could import and replace scene graphs"
    remedy: str  # "Set a token (and TLS)"
    insecure_variable: str  # "COVR_SERVICE_INSECURE=true"
    open_risk: str  # the INSECURE warning's end: "may read and write the store"
    tls: bool = False


def check_door(
    door: Door,
    *,
    insecure: bool,
    log: logging.Logger | None,
    error: type[CovrError] = ExposureError,
) -> None:
    """Refuse ``door`` on a non-loopback address without a token unless ``insecure``; warn when
    it opens anyway (no token; or a token that crosses the network in clear text) on ``log``
    (``None``: refuse only, as a check before the door is opened)."""
    if is_loopback(door.host):
        return
    if not door.authenticated and not insecure:
        raise error(
            door.host_variable,
            f"{door.host} is reachable from other machines and {door.missing}: {door.risk}. "
            f"{door.remedy}, bind 127.0.0.1, or pass --insecure ({door.insecure_variable}) if "
            "this network is trusted",
        )
    if log is None:
        return
    if not door.authenticated:
        log.warning(
            "INSECURE: %s on %s without a token; every client that reaches this address %s",
            door.what,
            door.host,
            door.open_risk,
        )
    elif not door.tls:
        log.warning(
            "%s on %s with a token but without TLS: the token crosses the network in clear text",
            door.what,
            door.host,
        )
