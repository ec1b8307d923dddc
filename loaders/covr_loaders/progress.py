"""Progress of a load: a rich progress bar (bytes read → ETA, images, images/s) or nothing.

Progress is measured in bytes of input read, because the number of images in a streamed file is
not known until its end; images and images/s are shown beside it.
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import Protocol, Self

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class Reporter(Protocol):
    """What the load pipeline tells about its progress."""

    def start(self, description: str, total_bytes: int) -> None: ...

    def update(self, bytes_read: int, images: int) -> None: ...

    def finish(self) -> None: ...


class NullReporter:
    """Reports nothing (tests, ``--quiet``, library use)."""

    def start(self, description: str, total_bytes: int) -> None:
        return None

    def update(self, bytes_read: int, images: int) -> None:
        return None

    def finish(self) -> None:
        return None


class RichReporter:
    """A progress bar on stderr: bytes read, ETA, images and images/s."""

    def __init__(self, console: Console | None = None) -> None:
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TextColumn("{task.fields[images]:>9,} images {task.fields[rate]:>8.0f}/s"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console or Console(stderr=True),
            transient=False,
        )
        self._task: TaskID | None = None
        self._started = 0.0

    def start(self, description: str, total_bytes: int) -> None:
        self._progress.start()
        self._started = time.perf_counter()
        self._task = self._progress.add_task(description, total=total_bytes, images=0, rate=0.0)

    def update(self, bytes_read: int, images: int) -> None:
        if self._task is None:
            return
        elapsed = max(time.perf_counter() - self._started, 1e-9)
        self._progress.update(
            self._task, completed=bytes_read, images=images, rate=images / elapsed
        )

    def finish(self) -> None:
        self._progress.stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.finish()
