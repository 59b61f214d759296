"""Progress of an audit: a rich progress bar counting mechanism runs, off unless asked for.

``progress`` arguments accept ``None`` (a bar only when standard error is an interactive
terminal, so tests, pipes and CI stay quiet), ``True``, ``False``, or a running ``Tracker``
(nested audits, such as the pair search inside ``audit``, then advance their caller's bar).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn


class Tracker:
    """Counts finished runs and moves a bar when one is shown; safe to advance from any thread."""

    def __init__(self, total: int, description: str, show: bool):
        self._lock = threading.Lock()
        self.completed = 0
        self.total = total
        self._bar = None
        if show:
            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), TimeRemainingColumn(),
                                 console=Console(stderr=True), transient=True)
            self._task = self._bar.add_task(description, total=total)

    def advance(self, runs: int) -> None:
        with self._lock:
            self.completed += runs
            if self._bar is not None:
                self._bar.advance(self._task, runs)

    def expect(self, runs: int) -> None:
        """Change the bar's total by ``runs`` (the test half's Poisson sizes are known only once drawn)."""
        with self._lock:
            self.total += runs
            if self._bar is not None:
                self._bar.update(self._task, total=self.total)

    def describe(self, description: str) -> None:
        if self._bar is not None:
            self._bar.update(self._task, description=description)

    def start(self) -> None:
        if self._bar is not None:
            self._bar.start()

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def _show(progress: object) -> bool:
    if progress is None:
        return Console(stderr=True).is_interactive
    if not isinstance(progress, bool):
        raise TypeError(f"progress must be None (automatic), True, False or a Tracker, got {progress!r}")
    return progress


@contextlib.contextmanager
def tracking(progress: object, total: int, description: str) -> Iterator[Tracker]:
    """The caller's ``Tracker`` if ``progress`` is one, else a new one shown as ``progress`` says."""
    if isinstance(progress, Tracker):
        yield progress
        return
    tracker = Tracker(total, description, _show(progress))
    tracker.start()
    try:
        yield tracker
    finally:
        tracker.stop()
