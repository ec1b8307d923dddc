"""SDK values → request messages, by field name.

The SDK's value types (:mod:`covr_client.types`) mirror the messages of ``proto/covr/v1``: same
field names, nested values for nested messages, tuples for repeated fields, mappings for maps.
So one walk over a dataclass fills any message, and the SDK holds no hand-written copy of the
server's scene-graph conversion (``covr.service.convert`` is the one written out). Fields the
message does not have (``SceneGraph.image_id`` is a property, not a field) and ``None`` values
(unset optional fields) are skipped; numbers go into float fields as floats; a Python scalar
going into a ``Scalar`` message sets the member of its type.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

M = TypeVar("M", bound=Message)

_FLOATS = (FieldDescriptor.CPPTYPE_FLOAT, FieldDescriptor.CPPTYPE_DOUBLE)


def to_message(value: Any, message: M) -> M:
    """``message`` filled from the dataclass ``value`` (see the module text); returns it."""
    fields = message.DESCRIPTOR.fields_by_name
    for item in dataclasses.fields(value):
        data = getattr(value, item.name)
        field = fields.get(item.name)
        if data is None or field is None:
            continue
        _set(message, field, data)
    return message


def _set(message: Message, field: Any, data: Any) -> None:
    target = getattr(message, field.name)
    entry = field.message_type
    if entry is not None and entry.GetOptions().map_entry:
        _fill_map(target, entry.fields_by_name["value"], data)
    elif field.is_repeated:
        if entry is None:
            target.extend(data)
        else:
            for element in data:
                to_message(element, target.add())
    elif entry is not None:
        to_message(data, target)
    else:
        setattr(message, field.name, float(data) if field.cpp_type in _FLOATS else data)


def _fill_map(target: Any, value_field: Any, data: Mapping[str, Any]) -> None:
    for key, element in data.items():
        if value_field.message_type is None:
            target[key] = element
        elif dataclasses.is_dataclass(element):
            to_message(element, target[key])
        else:
            _set_scalar(target[key], element)


def _set_scalar(scalar: Any, value: Any) -> None:
    """A ``covr.v1.Scalar`` holding ``value`` (bool before int: a bool is an int in Python)."""
    if isinstance(value, bool):
        scalar.bool_value = value
    elif isinstance(value, int):
        scalar.int_value = value
    elif isinstance(value, float):
        scalar.double_value = value
    else:
        scalar.string_value = str(value)
