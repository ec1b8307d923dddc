"""One look for the progress bars of long jobs (generation, model training and evaluation).

Why here: every job over a couple of seconds shows the same columns on stderr, and ``rich`` is
imported only when a job starts (``covr --help`` must not pay for it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Progress


def progress_bar(*, quiet: bool = False) -> Progress:
    """A bar with description, count, elapsed and remaining time, drawn on stderr."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        disable=quiet,
        transient=False,
    )
