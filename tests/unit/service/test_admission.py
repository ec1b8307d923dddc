"""Per-method admission slots: a full method refuses at once with a retry hint."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from covr.service.admission import MAX_RETRY_S, MIN_RETRY_S, Admission, default_slots, for_settings
from covr.service.errors import ResourceExhausted, status_for
from covr.settings import Settings


def _refused(admission: Admission, method: str) -> ResourceExhausted:
    """The error of one more call of ``method`` (whose slots the caller holds)."""
    try:
        with admission.slot(method):
            pass
    except ResourceExhausted as exc:
        return exc
    raise AssertionError(f"{method} was admitted")


def test_a_full_method_refuses_and_other_methods_are_not_affected() -> None:
    admission = Admission({"GenerateQuestions": 2})
    with admission.slot("GenerateQuestions"), admission.slot("GenerateQuestions"):
        assert "limit of 2" in _refused(admission, "GenerateQuestions").message
        with admission.slot("GetSceneGraph"):  # not limited here
            pass
    assert admission.refused("GenerateQuestions") == 1
    with admission.slot("GenerateQuestions"):  # both slots are free again
        pass


def test_a_slot_is_released_when_the_call_fails() -> None:
    admission = Admission({"FindRelatedImages": 1})
    with pytest.raises(KeyError), admission.slot("FindRelatedImages"):
        raise KeyError("boom")
    with admission.slot("FindRelatedImages"):
        pass


def test_the_retry_hint_follows_recent_durations_within_bounds() -> None:
    admission = Admission({"GenerateQuestions": 1})
    with admission.slot("GenerateQuestions"):
        first = _refused(admission, "GenerateQuestions")
    # nothing finished yet when refused: the lower bound
    assert first.retry_after_s == MIN_RETRY_S
    entry = admission._methods["GenerateQuestions"]
    entry.finished(3.0)
    entry.finished(3.0)
    with admission.slot("GenerateQuestions"):
        later = _refused(admission, "GenerateQuestions")
    assert MIN_RETRY_S < later.retry_after_s <= MAX_RETRY_S
    assert later.retry_after_s == pytest.approx(entry.mean_s, rel=0.5)


def test_resource_exhausted_carries_retry_info() -> None:
    status = status_for(ResourceExhausted("full", retry_after_s=1.25))
    assert status.code is grpc.StatusCode.RESOURCE_EXHAUSTED
    proto = status_pb2.Status.FromString(dict(status.trailing_metadata)["grpc-status-details-bin"])
    info = error_details_pb2.RetryInfo()
    assert proto.details[0].Unpack(info)
    assert info.retry_delay.ToNanoseconds() == 1_250_000_000


def test_default_slots_per_core_and_explicit_values() -> None:
    assert default_slots(3, 1) == 3
    assert default_slots(0, 2) >= 2
    assert default_slots(0, 2) % 2 == 0
    limits = for_settings(Settings(_env_file=None, service_max_generations=1).service)  # type: ignore[call-arg]
    assert limits.limits()["GenerateQuestions"] == 1
    assert limits.limits()["FindRelatedImages"] >= 2


def test_limits_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="service_max_generations"):
        Settings(_env_file=None, service_max_generations=-1)  # type: ignore[call-arg]


def test_the_sdk_retry_delay_honours_the_server_hint_within_its_cap() -> None:
    from covr_client import RetryPolicy

    policy = RetryPolicy(initial_backoff=0.1, max_backoff=2.0)
    assert policy.wait(1, 0.5) == policy.delay(1, 0.5)  # no hint: own backoff
    assert policy.wait(1, 0.0, hint=1.0) == pytest.approx(0.5)  # at least half the hint
    assert policy.wait(1, 1.0, hint=1.0) == pytest.approx(1.0)
    assert policy.wait(1, 1.0, hint=60.0) == pytest.approx(10.0)  # capped by max_hint
    assert policy.wait(5, 1.0, hint=0.01) == pytest.approx(policy.delay(5, 1.0))
