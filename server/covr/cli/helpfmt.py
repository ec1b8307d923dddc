"""Help output that reads well: metavars named after what a value is, no braces in usage lines.

Why post-process instead of writing ``metavar=`` on ~170 options: this Typer prints the Python
type (``--seed <int>``, ``--out <path>``) and wraps required arguments in braces
(``covr show {image_id}``); one pass over the finished command tree gives every command the
conventional form (``--seed N``, ``--out PATH``, ``covr show IMAGE_ID``) and cannot be forgotten
by a new option. An explicit ``metavar=`` in a command still wins.
"""

from __future__ import annotations

import pathlib
from typing import Any

from typer.core import TyperArgument, TyperGroup

_BY_TYPE: dict[Any, str] = {
    str: "TEXT",
    int: "N",
    float: "NUMBER",
    pathlib.Path: "PATH",
}


class _Argument(TyperArgument):
    """An argument shown as ``NAME`` (required) or ``[NAME]`` (optional) in the usage line."""

    def _usage_display_name(self) -> str:
        name = self.display_name_raw
        if not self.required:
            name = f"[{name}]"
        return name + ("..." if self.nargs != 1 else "")

    def display_type_rich(self, ctx: Any) -> str | None:
        """No Python type after the name in the arguments list (``SRC``, not ``SRC <path>``)."""
        del ctx
        return None


def _annotation(param: Any) -> Any:
    descriptor = getattr(param, "type_descriptor", None)
    return getattr(descriptor, "annotation", None)


def _option_metavar(param: Any) -> str | None:
    annotation = _annotation(param)
    if annotation is None:
        return None
    args = getattr(annotation, "__args__", ())
    base = next((a for a in args if a is not type(None)), annotation) if args else annotation
    label = _BY_TYPE.get(base)
    if label is None:
        return None
    return label


def tidy(command: Any) -> None:
    """Give every parameter below ``command`` a conventional metavar (idempotent)."""
    for param in getattr(command, "params", ()):
        if param.metavar is not None:
            continue
        if isinstance(param, TyperArgument):
            param.metavar = str(param.name).upper()
            if type(param) is TyperArgument:
                param.__class__ = _Argument
        elif not getattr(param, "is_flag", False):
            param.metavar = _option_metavar(param)
    for sub in getattr(command, "commands", {}).values():
        tidy(sub)


class CovrGroup(TyperGroup):
    """The root command group: tidies the help of the whole tree before running."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        tidy(self)
        return super().main(*args, **kwargs)
