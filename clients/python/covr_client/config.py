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

    Two kinds of failure are retried by default, each with its own budget, because they mean
    different things: ``UNAVAILABLE`` (the server or its store is briefly away: a few quick
    attempts, then the caller should know) and ``RESOURCE_EXHAUSTED`` (the server is alive but
    its slots for the method are taken and it refused the call at once, with a hint of when one
    frees up: waiting it out is what the caller wants, so there are more attempts, each waiting
    at least the hint). Every wait ends before the call's deadline, or the error is raised.

    Args:
        max_attempts: attempts in total, the first included, for the codes other than
            ``RESOURCE_EXHAUSTED`` (1 = no retries).
        initial_backoff: seconds before the first retry.
        max_backoff: cap of the delay between attempts (own backoff; a server hint may be
            longer, up to ``max_hint``).
        multiplier: growth of the delay per attempt (with full jitter).
        retry_codes: status code names that are retried: ``UNAVAILABLE`` and
            ``RESOURCE_EXHAUSTED`` by default.
        max_hint: cap of one wait taken from a server's ``RetryInfo`` hint (seconds).
        max_busy_attempts: attempts in total, the first included, while the server answers
            ``RESOURCE_EXHAUSTED`` (1 = do not wait out a busy server).
        max_busy_wait: seconds one call may spend waiting out ``RESOURCE_EXHAUSTED`` refusals,
            all waits together (the call's deadline bounds it too).
    """

    max_attempts: int = 4
    initial_backoff: float = 0.1
    max_backoff: float = 2.0
    multiplier: float = 2.0
    retry_codes: frozenset[str] = frozenset({"UNAVAILABLE", "RESOURCE_EXHAUSTED"})
    max_hint: float = 10.0
    max_busy_attempts: int = 20
    max_busy_wait: float = 60.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")
        if self.max_busy_attempts < 1:
            raise ValueError("max_busy_attempts must be >= 1")
        if self.initial_backoff < 0 or self.max_backoff < 0 or self.multiplier < 1:
            raise ValueError("backoffs must be >= 0 and multiplier >= 1")
        if self.max_hint < 0 or self.max_busy_wait < 0:
            raise ValueError("max_hint and max_busy_wait must be >= 0")

    def delay(self, attempt: int, random: float) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based); full jitter."""
        ceiling = min(self.max_backoff, self.initial_backoff * self.multiplier ** (attempt - 1))
        return ceiling * random

    def wait(self, attempt: int, random: float, hint: float | None = None) -> float:
        """The delay before the next attempt: :meth:`delay` without a hint. With the server's
        hint (``RetryInfo`` of a ``RESOURCE_EXHAUSTED`` answer, capped at ``max_hint``) at
        least half of it, the rest jittered so refused clients do not all come back at the
        same moment, and at least half of the own backoff's ceiling: a server whose estimate is
        still tiny (it has not finished a call yet) is not polled ever faster."""
        if hint is None:
            return self.delay(attempt, random)
        ceiling = min(self.max_backoff, self.initial_backoff * self.multiplier ** (attempt - 1))
        return (0.5 + random / 2) * max(ceiling, min(hint, self.max_hint))


NO_RETRY = RetryPolicy(max_attempts=1, max_busy_attempts=1)
"""No retries at all, not even of a busy server's refusals."""


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
