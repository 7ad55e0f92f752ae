"""Back-off shared by every call to one host: a rate limit seen by one call pauses them all.

When a response says the host is overloaded (HTTP 429, or 503 with a ``Retry-After`` header),
every request of the process to that host (scheme, host and port) waits until the time the host
asked for before it is sent: the calls in flight before their next attempt, new calls before their
first. ``Retry-After`` may be seconds or an HTTP date; the wait is capped (an engine's
``max_retry_after``, default 60 s) so a hostile or broken header cannot stall a run; a 429 without
the header pauses the host for the engine's ``backoff``. Pauses only ever grow: a shorter one asked
for while a longer one runs changes nothing.

The pause is shared through :data:`HOSTS` by every :class:`~fms_dgt.core.tools.transport.Sender`
(the ``rest``, ``http`` and ``lm`` engines); how often a call is retried is still the engine's
``retries``.
"""

from __future__ import annotations

import datetime
import threading
import time

__all__ = ["DEFAULT_MAX_RETRY_AFTER", "HOSTS", "HostBackoff", "HostKey", "retry_after_seconds"]

#: The longest pause a ``Retry-After`` imposes unless an engine says otherwise.
DEFAULT_MAX_RETRY_AFTER = 60.0

#: ``(scheme, host, port)``.
HostKey = tuple[str, str, int]


def retry_after_seconds(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), or None.

    A date in the past is 0; anything unreadable is None.
    """
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return float(value)
    from email.utils import parsedate_to_datetime  # only for the rare date form

    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    now = datetime.datetime.now(moment.tzinfo or datetime.timezone.utc)
    return max(0.0, (moment - now).total_seconds())


class HostBackoff:
    """Per host, the moment before which no request may be sent. Thread-safe."""

    def __init__(self) -> None:
        self._until: dict[HostKey, float] = {}
        self._lock = threading.Lock()

    def pause(self, host: HostKey, seconds: float) -> None:
        """Hold every request to ``host`` for ``seconds`` from now (unless held longer already)."""
        if seconds <= 0:
            return
        now = time.monotonic()
        with self._lock:
            if self._until.get(host, 0.0) < now + seconds:
                self._until[host] = now + seconds
            # Forget hosts whose pause is over, so a long run over many hosts keeps a small table.
            for key in [k for k, t in self._until.items() if t <= now]:
                del self._until[key]

    def observe(
        self, host: HostKey, status: int, retry_after: str | None, *, cap: float, backoff: float
    ) -> float:
        """Pause ``host`` as a response asks; returns the pause in seconds (0 for none)."""
        asked = retry_after_seconds(retry_after)
        if status == 429:
            seconds = backoff if asked is None else asked
        elif status == 503 and asked is not None:
            seconds = asked
        else:
            return 0.0
        seconds = min(seconds, cap)
        self.pause(host, seconds)
        return seconds

    def remaining(self, host: HostKey) -> float:
        """Seconds until ``host`` may be called (0 when it may be now)."""
        with self._lock:
            until = self._until.get(host, 0.0)
        return max(0.0, until - time.monotonic())

    def wait(self, host: HostKey) -> float:
        """Sleep until ``host`` may be called (its pause may grow meanwhile); returns the wait."""
        waited = 0.0
        while (left := self.remaining(host)) > 0:
            time.sleep(left)
            waited += left
        return waited

    def clear(self) -> None:
        """End every pause (for tests)."""
        with self._lock:
            self._until.clear()


#: The process's one table of paused hosts.
HOSTS = HostBackoff()
