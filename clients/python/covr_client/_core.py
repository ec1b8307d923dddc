"""What the sync and async clients share: channel set-up, call metadata, deadlines and the
retry decision. Only waiting differs between the two (``time.sleep`` or ``asyncio.sleep``), so
each client keeps its own loop and asks :meth:`ClientCore._retry_delay` what to do."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import grpc

from covr_client._proto import service_pb2_grpc, wire_pb2
from covr_client._rpcs import HEALTH_CHECK, Unary
from covr_client.config import RetryPolicy, TlsConfig, channel_options
from covr_client.errors import from_rpc_error

ChannelFactory = Callable[[str, grpc.ChannelCredentials | None, list[tuple[str, Any]]], Any]


def credentials(tls: TlsConfig | bool | None) -> tuple[grpc.ChannelCredentials | None, list[Any]]:
    """Channel credentials and extra options for a TLS setting (``None``/``False`` = plain)."""
    if tls is None or tls is False:
        return None, []
    config = TlsConfig() if tls is True else tls
    creds = grpc.ssl_channel_credentials(
        root_certificates=config.root_certificates,
        private_key=config.private_key,
        certificate_chain=config.certificate_chain,
    )
    extra = [("grpc.ssl_target_name_override", config.server_name)] if config.server_name else []
    return creds, extra


class ClientCore:
    """Client of the COVR graph service: configuration and channel (the RPCs are on
    :class:`covr_client.Client` and :class:`covr_client.AsyncClient`).

    Args:
        target: ``host:port`` of the server (``127.0.0.1:50051``).
        token: bearer token sent with every call (``COVR_SERVICE_TOKEN`` of the server);
            ``None`` = no authentication.
        tls: ``None``/``False`` = plaintext; ``True`` = TLS with the system's roots; a
            :class:`TlsConfig` for a private CA, a self-signed certificate or mutual TLS.
        timeout: default deadline of each call in seconds (a stream: of the whole stream).
        retry: retry policy of idempotent calls (default: 4 attempts on ``UNAVAILABLE``;
            a busy server's ``RESOURCE_EXHAUSTED`` waited out as its retry hint says).
        options: extra gRPC channel arguments.
    """

    _open_channel: ChannelFactory
    """How a subclass opens its channel (``grpc`` or ``grpc.aio``)."""

    def __init__(
        self,
        target: str,
        *,
        token: str | None = None,
        tls: TlsConfig | bool | None = None,
        timeout: float = 10.0,
        retry: RetryPolicy | None = None,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be > 0")
        self.target = target
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        creds, extra = credentials(tls)
        opts = [*channel_options(), *extra, *options]
        self._channel = type(self)._open_channel(target, creds, opts)
        self._stub = service_pb2_grpc.CovrServiceStub(self._channel)
        self._metadata: tuple[tuple[str, str], ...] = (
            (("authorization", f"Bearer {token}"),) if token else ()
        )
        self._health = self._channel.unary_unary(
            HEALTH_CHECK,
            request_serializer=wire_pb2.HealthRequest.SerializeToString,
            response_deserializer=wire_pb2.HealthResponse.FromString,
        )

    def _method(self, rpc: Unary[Any] | Any) -> Callable[..., Any]:
        """The channel callable of a description (the health check is not on the stub)."""
        method: Callable[..., Any] = (
            self._health if rpc.method == "Health" else getattr(self._stub, rpc.method)
        )
        return method

    def _attempts(self, timeout: float | None, idempotent: bool) -> Attempts:
        """The attempts of one call: its deadline and the client's retry policy."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        return Attempts(self.retry, deadline, idempotent, self._metadata)


BUSY = "RESOURCE_EXHAUSTED"
"""The code of a refusal by a saturated server: retried on its own budget (``max_busy_*``)."""


class Attempts:
    """The attempts of one call: what each attempt sends (time left, metadata) and, after a
    failure, whether and when to try again. Both clients loop over it; only their waiting
    differs (``time.sleep`` or ``asyncio.sleep``).

    Refusals of a busy server (``RESOURCE_EXHAUSTED``) and other failures are counted apart:
    a refusal did no work and says when to come back, so waiting it out must not use up the
    few quick attempts meant for a server that is briefly away (and the other way round)."""

    def __init__(
        self,
        policy: RetryPolicy,
        deadline: float,
        idempotent: bool,
        metadata: tuple[tuple[str, str], ...],
    ) -> None:
        self.policy = policy
        self.deadline = deadline
        self.idempotent = idempotent
        self.metadata = metadata
        self.number = 0
        self.failed = 0
        """Failed attempts other than busy refusals."""
        self.refused = 0
        """Attempts refused with ``RESOURCE_EXHAUSTED``."""
        self.busy_waited = 0.0
        """Seconds waited so far because of refusals."""

    def next(self) -> dict[str, Any]:
        """Keyword arguments of the next attempt's call (its timeout is the time left)."""
        self.number += 1
        return {"timeout": max(0.0, self.deadline - time.monotonic()), "metadata": self.metadata}

    def delay(self, exc: grpc.RpcError, *, received: bool = False) -> float:
        """Seconds to wait before the next attempt; raises the SDK error instead when the call
        must not be retried (not idempotent, a stream that already yielded, a code the policy
        does not retry, its attempts or busy wait used up, or the wait would pass the
        deadline). A server's ``RetryInfo`` hint is honoured (up to ``max_hint``)."""
        error = from_rpc_error(exc)
        if not self.idempotent or received or error.code not in self.policy.retry_codes:
            raise error from None
        if error.code == BUSY:
            self.refused += 1
            if self.refused >= self.policy.max_busy_attempts:
                raise error from None
            wait = self.policy.wait(self.refused, random.random(), error.retry_after)
            if self.busy_waited + wait > self.policy.max_busy_wait:
                raise error from None
        else:
            self.failed += 1
            if self.failed >= self.policy.max_attempts:
                raise error from None
            wait = self.policy.wait(self.failed, random.random(), error.retry_after)
        if time.monotonic() + wait >= self.deadline:
            raise error from None
        if error.code == BUSY:
            self.busy_waited += wait
        return wait
