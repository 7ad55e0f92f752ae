"""Stopping a run on Ctrl-C between records, so the output and its summary always agree.

The first SIGINT asks the run to stop: the record in flight is finished and written, then the run
stops as interrupted (``KeyboardInterrupt``, exit 130 from the CLI). A second SIGINT stops it at
once; the summary is then counted again from the files, since the interruption may fall between
writing a record and counting it.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType
from typing import Any

__all__ = ["GracefulStop", "Stopped"]


class Stopped(KeyboardInterrupt):
    """The run stopped between records, as the first Ctrl-C asked."""


class GracefulStop:
    """A SIGINT handler for the span of a run (installed only from the main thread)."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: Any = None
        self._installed = False

    def __enter__(self) -> GracefulStop:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.requested:  # asked twice: stop now
            raise KeyboardInterrupt
        self.requested = True

    def check(self) -> None:
        """Between records: stop when asked.

        Raises:
            Stopped: a Ctrl-C came during the last record.
        """
        if self.requested:
            raise Stopped

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, self._previous)
