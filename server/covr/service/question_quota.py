"""GenerateQuestions' quota fields: ``per_template`` and ``max_image_share`` checked and turned
into the question room's arguments, and the room's summary turned into the stream's last
``GenerationSummary`` (issue 36 item 2: ``covr generate --per-template N --max-image-share S``
over the RPC).

The fields follow the CLI's flags: ``per_template`` 0 is no quota (``--per-template`` omitted),
``max_image_share`` 0 or 1 is no cap (``--max-image-share 1``; 0 is the proto default, so a
client that sets nothing gets the service's default, no cap). A value the CLI would refuse is a
bad field (``INVALID_ARGUMENT`` naming it): a share that is negative, not a number or above 1,
and a ``per_template`` above the most examples one call may return
(``COVR_SERVICE_MAX_PAGE_SIZE``, the limit of ``count`` too: a larger quota could never be
reached by one stream).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from covr.service.errors import FieldViolation
from covr.v1 import questions_pb2


@dataclass(frozen=True)
class QuotaFields:
    """The checked quota of one request (``None`` = off) and the violations found."""

    per_template: int | None
    max_image_share: float | None
    violations: tuple[FieldViolation, ...] = ()


def quota_fields(
    request: questions_pb2.GenerateQuestionsRequest, max_per_template: int
) -> QuotaFields:
    """``per_template`` and ``max_image_share`` of ``request`` as the room takes them, with a
    violation per bad field (the values of a bad field are ``None``)."""
    violations: list[FieldViolation] = []
    per_template: int | None = request.per_template or None
    if per_template is not None and per_template > max_per_template:
        violations.append(
            FieldViolation(
                "per_template",
                f"{per_template} is larger than {max_per_template} (the most examples one call "
                "returns; 0 = no quota)",
            )
        )
        per_template = None
    value = request.max_image_share
    share: float | None = None
    if math.isnan(value):
        violations.append(FieldViolation("max_image_share", "must be a number, got NaN"))
    elif value < 0:
        violations.append(
            FieldViolation("max_image_share", f"must be >= 0 (0 = no cap), got {value!r}")
        )
    elif value > 1:
        violations.append(
            FieldViolation("max_image_share", f"must be at most 1 (1 = no cap), got {value!r}")
        )
    elif 0 < value < 1:
        share = value
    return QuotaFields(per_template, share, tuple(violations))


def summary_proto(summary: Mapping[str, Any]) -> questions_pb2.GenerationSummary:
    """The room's summary (:meth:`covr.questions.sources.QuotaRun.summary`) as a message."""
    message = questions_pb2.GenerationSummary(examples=summary["examples"])
    message.dropped.update(summary["dropped"])
    for name, row in summary["forms"].items():
        form = message.forms[name]
        form.wanted = row["wanted"] or 0
        form.made = row["made"]
        form.over_quota = row["over_quota"]
        form.image_share = row["image_share"]
        form.dropped.update(row["dropped"])
    spread = summary["image_spread"]
    top = spread["most_shown"]
    message.image_spread.CopyFrom(
        questions_pb2.ImageSpread(
            max_image_share=spread["max_image_share"] or 0.0,
            held=spread["held"],
            applies=spread["applies"],
            most_shown_image=top["image"],
            most_shown_examples=top["examples"],
            most_shown_share=top["share"],
        )
    )
    return message
