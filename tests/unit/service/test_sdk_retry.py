"""The SDK's retry decision (``covr_client._core.Attempts``) without a server: what is retried
by default, how long it waits, and where it stops (issue 20, item 6)."""

from __future__ import annotations

import time
from typing import Any

import grpc
import pytest

from covr_client import NO_RETRY, ResourceExhaustedError, RetryPolicy, UnavailableError
from covr_client._core import Attempts
from covr_client._proto import wire_pb2


class FakeError(grpc.RpcError):
    """A failed call as grpc raises it: a code, a message and trailing metadata."""

    def __init__(self, code: grpc.StatusCode, hint: float | None = None) -> None:
        self._code = code
        self._trailers: tuple[tuple[str, bytes], ...] = ()
        if hint is not None:
            info = wire_pb2.RetryInfoDetail()
            info.retry_delay.FromNanoseconds(int(hint * 1e9))
            status = wire_pb2.RpcStatus(code=code.value[0], message="busy")
            detail = status.details.add()
            detail.type_url = "type.googleapis.com/google.rpc.RetryInfo"
            detail.value = info.SerializeToString()
            self._trailers = (("grpc-status-details-bin", status.SerializeToString()),)

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return "busy"

    def trailing_metadata(self) -> Any:
        return self._trailers


BUSY = grpc.StatusCode.RESOURCE_EXHAUSTED


def attempts(policy: RetryPolicy | None = None, *, seconds: float = 60.0) -> Attempts:
    return Attempts(policy or RetryPolicy(), time.monotonic() + seconds, True, ())


def test_resource_exhausted_is_retried_by_default_after_the_server_hint() -> None:
    assert "RESOURCE_EXHAUSTED" in RetryPolicy().retry_codes
    run = attempts()
    run.next()
    wait = run.delay(FakeError(BUSY, hint=1.5))
    assert 0.75 <= wait <= 1.5  # at least half the hint, jittered up to all of it


def test_a_hint_is_capped_and_a_tiny_hint_still_backs_off() -> None:
    policy = RetryPolicy(max_hint=3.0)
    assert policy.wait(1, 1.0, hint=60.0) == pytest.approx(3.0)
    # a server that has not finished a call yet hints 0.05 s: the own backoff still grows
    assert policy.wait(6, 0.0, hint=0.05) == pytest.approx(0.5 * policy.max_backoff)


def test_busy_refusals_have_their_own_attempt_budget() -> None:
    run = attempts(RetryPolicy(max_attempts=2, max_busy_attempts=3, max_hint=0.01))
    run.delay(FakeError(BUSY, hint=0.01))
    run.delay(FakeError(BUSY, hint=0.01))
    run.delay(FakeError(grpc.StatusCode.UNAVAILABLE))  # the other budget is untouched
    with pytest.raises(ResourceExhaustedError) as refused:
        run.delay(FakeError(BUSY, hint=0.01))
    assert refused.value.retry_after == pytest.approx(0.01)
    with pytest.raises(UnavailableError):
        run.delay(FakeError(grpc.StatusCode.UNAVAILABLE))


def test_busy_waits_stop_at_their_total_and_at_the_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("covr_client._core.random.random", lambda: 1.0)  # waits = the hint
    run = attempts(RetryPolicy(max_busy_wait=2.5))
    assert run.delay(FakeError(BUSY, hint=1.0)) == pytest.approx(1.0)
    assert run.delay(FakeError(BUSY, hint=1.0)) == pytest.approx(1.0)
    with pytest.raises(ResourceExhaustedError):  # a third second would pass 2.5 s in all
        run.delay(FakeError(BUSY, hint=1.0))
    assert run.busy_waited == pytest.approx(2.0)
    short = attempts(seconds=0.2)  # a hint beyond the deadline is not waited for
    with pytest.raises(ResourceExhaustedError):
        short.delay(FakeError(BUSY, hint=5.0))


def test_no_retry_also_refuses_to_wait_out_a_busy_server() -> None:
    with pytest.raises(ResourceExhaustedError):
        attempts(NO_RETRY).delay(FakeError(BUSY, hint=0.01))


def test_a_stream_that_received_or_a_non_idempotent_call_is_not_retried() -> None:
    with pytest.raises(ResourceExhaustedError):
        attempts().delay(FakeError(BUSY, hint=0.01), received=True)
    imports = Attempts(RetryPolicy(), time.monotonic() + 60, False, ())
    with pytest.raises(ResourceExhaustedError):
        imports.delay(FakeError(BUSY, hint=0.01))


def test_bad_policies_are_refused() -> None:
    with pytest.raises(ValueError, match="max_busy_attempts"):
        RetryPolicy(max_busy_attempts=0)
    with pytest.raises(ValueError, match="max_hint"):
        RetryPolicy(max_hint=-1)
