"""Opaque page tokens: the position of a stream plus the request fields it is only valid for.

A token is URL-safe base64 of a small JSON object. It is not a secret and not signed: a forged
token can only ask for another page of data the caller may read anyway; what matters is that a
token from one query is refused for another (``INVALID_ARGUMENT`` naming ``page_token``).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from covr.service.errors import InvalidArgument

MAX_TOKEN = 8192


def encode(state: dict[str, Any]) -> str:
    raw = json.dumps(state, sort_keys=True, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(token: str, bound: dict[str, Any], field: str = "page_token") -> dict[str, Any]:
    """The state in ``token``; it must have been issued for the same ``bound`` request fields."""
    if not token:
        return {}
    if len(token) > MAX_TOKEN:
        raise InvalidArgument.field(field, "is too long to be a page token")
    try:
        padded = token + "=" * (-len(token) % 4)
        state = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, UnicodeError, binascii.Error) as exc:
        raise InvalidArgument.field(field, "is not a page token issued by this service") from exc
    if not isinstance(state, dict):
        raise InvalidArgument.field(field, "is not a page token issued by this service")
    for key, value in bound.items():
        if state.get(key) != value:
            raise InvalidArgument.field(
                field, f"was issued for a different {key}; page tokens only continue their query"
            )
    return state
