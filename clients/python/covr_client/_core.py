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
from covr_client.errors import CovrError

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
    """Configuration and channel of a client (see :class:`covr_client.Client` for the
    arguments); subclasses pass the channel factory of their gRPC flavour."""

    def __init__(
        self,
        target: str,
        *,
        token: str | None,
        tls: TlsConfig | bool | None,
        timeout: float,
        retry: RetryPolicy | None,
        options: Sequence[tuple[str, Any]],
        channel: ChannelFactory,
    ) -> None:
        if timeout <= 0:
            raise ValueError("timeout must be > 0")
        self.target = target
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        creds, extra = credentials(tls)
        self._channel = channel(target, creds, [*channel_options(), *extra, *options])
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

    def _deadline(self, timeout: float | None) -> float:
        """When a call started now must be finished (monotonic clock)."""
        return time.monotonic() + (self.timeout if timeout is None else timeout)

    def _retry_delay(
        self, error: CovrError, attempt: int, idempotent: bool, deadline: float
    ) -> float | None:
        """Seconds to wait before the next attempt, or ``None``: do not retry (not idempotent,
        a code the policy does not retry, attempts used up, or the wait would pass the
        deadline). A server's ``RetryInfo`` hint is honoured."""
        if not idempotent or error.code not in self.retry.retry_codes:
            return None
        if attempt >= self.retry.max_attempts:
            return None
        delay = self.retry.wait(attempt, random.random(), error.retry_after)
        if time.monotonic() + delay >= deadline:
            return None
        return delay


def remaining(deadline: float) -> float:
    """Seconds left until ``deadline`` (never negative): the timeout of the next attempt."""
    return max(0.0, deadline - time.monotonic())
