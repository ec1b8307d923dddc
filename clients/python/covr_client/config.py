"""Configuration of a client: TLS, retries, keepalive (frozen dataclasses)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KEEPALIVE_TIME_S = 60.0
"""Client keepalive ping interval. The server accepts pings no more often than
``COVR_SERVICE_MIN_PING_INTERVAL_S`` (30 s by default); faster pings would earn ``GOAWAY
too_many_pings``. A test keeps the two in step."""

KEEPALIVE_TIMEOUT_S = 20.0
"""How long the client waits for a keepalive ack before it drops the connection."""

MAX_MESSAGE_BYTES = 16 * 1024 * 1024
"""Largest message the client sends or accepts (the server's default limit)."""


@dataclass(frozen=True)
class TlsConfig:
    """TLS for the channel.

    Args:
        root_certificates: PEM of the CA (or self-signed certificate) that signed the server's
            certificate; ``None`` = the system's roots.
        private_key: client key (PEM) for mutual TLS; ``None`` = no client certificate.
        certificate_chain: client certificate chain (PEM) for mutual TLS.
        server_name: override of the name checked against the certificate (tests, IPs).
    """

    root_certificates: bytes | None = None
    private_key: bytes | None = None
    certificate_chain: bytes | None = None
    server_name: str | None = None


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of idempotent calls (every call except the import stream).

    Args:
        max_attempts: attempts in total, the first included (1 = no retries).
        initial_backoff: seconds before the first retry.
        max_backoff: cap of the delay between attempts.
        multiplier: growth of the delay per attempt (with full jitter).
        retry_codes: status code names that are retried; ``UNAVAILABLE`` by default (the server
            or its store is briefly away). Add ``RESOURCE_EXHAUSTED`` to wait out saturation.
    """

    max_attempts: int = 4
    initial_backoff: float = 0.1
    max_backoff: float = 2.0
    multiplier: float = 2.0
    retry_codes: frozenset[str] = frozenset({"UNAVAILABLE"})

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")
        if self.initial_backoff < 0 or self.max_backoff < 0 or self.multiplier < 1:
            raise ValueError("backoffs must be >= 0 and multiplier >= 1")

    def delay(self, attempt: int, random: float) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based); full jitter."""
        ceiling = min(self.max_backoff, self.initial_backoff * self.multiplier ** (attempt - 1))
        return ceiling * random

    def wait(self, attempt: int, random: float, hint: float | None = None) -> float:
        """The delay before the next attempt: :meth:`delay`, or at least the server's hint
        (``RetryInfo`` of a ``RESOURCE_EXHAUSTED`` answer, capped at ``max_backoff``) with half
        of it jittered, so refused clients do not all come back at the same moment."""
        own = self.delay(attempt, random)
        if hint is None:
            return own
        hinted = min(hint, self.max_backoff) * (0.5 + random / 2)
        return max(own, hinted)


NO_RETRY = RetryPolicy(max_attempts=1)


def channel_options() -> list[tuple[str, Any]]:
    """Channel arguments shared by the sync and async clients."""
    return [
        ("grpc.keepalive_time_ms", int(KEEPALIVE_TIME_S * 1000)),
        ("grpc.keepalive_timeout_ms", int(KEEPALIVE_TIMEOUT_S * 1000)),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ("grpc.enable_retries", 0),  # the SDK retries itself, only idempotent calls
    ]
