"""Writing examples in the CLI's JSONL format, so SDK output is a drop-in ``covr`` input.

``covr generate`` writes one example per line: keys in a fixed order (:meth:`Example.to_dict`),
compact separators, non-ASCII text as is, UTF-8, ``\\n`` after every line. The same examples
written here give the same bytes, so files from both can be diffed, concatenated and read by
``covr split``, ``covr easiness`` and ``covr evaluate``. The SDK does not import the server's
writer (it installs without the server), so the format is restated here and a test compares
the two byte for byte.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from covr_client.types import Example


def dumps(example: Example) -> str:
    """One example as the CLI's JSON line (without the newline)."""
    record: dict[str, Any] = example.to_dict()
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def write_jsonl(examples: Iterable[Example], out: str | os.PathLike[str] | IO[str]) -> int:
    """Write ``examples`` as ``covr generate`` does and return how many were written.

    ``out`` is a path or an open text file. A path is written atomically, like the CLI: into a
    temporary file beside it, renamed at the end, so a failure (a partial example, a stream
    that breaks, a full disk) leaves no half-written file. A file object is written as the
    examples come (the caller owns it; open it with ``encoding="utf-8"``).

    Raises ``ValueError`` for a partial example (see :meth:`Example.to_dict`) and ``OSError``
    (``PermissionError``, ``FileNotFoundError``, ...) naming the path when it cannot be written.
    """
    if not isinstance(out, (str, os.PathLike)):
        return _write(examples, out)
    path = Path(out)
    tmp = path.with_name(path.name + ".tmp")
    try:
        handle = tmp.open("w", encoding="utf-8", newline="\n")
    except OSError as exc:
        raise type(exc)(
            exc.errno, f"cannot write examples to {path}: {exc.strerror}", str(path)
        ) from None
    try:
        with handle:
            n = _write(examples, handle)
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return n


def _write(examples: Iterable[Example], handle: IO[str]) -> int:
    n = 0
    for example in examples:
        handle.write(dumps(example))
        handle.write("\n")
        n += 1
    return n
