"""The stdio transport: an MCP server as a child process, spoken to over its stdin and stdout.

Written here, not taken from the SDK, because the server is untrusted and must not be able to:

* **outlive the run through its children.** The server starts in a session (and process group) of
  its own. Closing ends the whole group: stdin is closed and the server given a moment to exit,
  then every process left in the group (its children too, even when the server itself exited
  cleanly) gets SIGTERM, then SIGKILL. Groups still alive at interpreter exit are ended by
  :func:`end_all_groups`. (A child that leaves the group on purpose, with ``setsid``, escapes.)
* **flood the terminal or memory through stderr.** Its stderr is read by the client: the last
  :data:`STDERR_KEEP` bytes are kept for error messages (``the server process exited with code
  1; its stderr ended with: ...``), and lines are logged at INFO, at most
  :data:`STDERR_LINES_PER_WINDOW` per minute, each cut to :data:`STDERR_LINE_CHARS` characters.
* **exhaust memory with one endless line.** A message longer than ``max_message_bytes`` is
  dropped as it streams in and fails the request it answers.
* **break the session with noise.** A line that is not a JSON-RPC message is handed on as an
  :class:`~fms_dgt.core.tools.mcp.guard.UnreadableMessage` (the guard logs it, naming the
  server, or fails the request it answers when its id can be made out).

Every function imports ``anyio`` and the SDK when called, never at import time.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import re
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from fms_dgt.core.tools.mcp.guard import MessageGuard, RateLimiter, UnreadableMessage
from fms_dgt.core.tools.mcp.redaction import register_resolved
from fms_dgt.core.tools.mcp.spec import MCPServerSpec
from fms_dgt.errors import LoadError
from fms_dgt.io import DEFAULT_LIMITS, check_limits, check_text
from fms_dgt.secrets import redact

if TYPE_CHECKING:
    import anyio
    from anyio.abc import Process

__all__ = [
    "STDERR_KEEP",
    "STDERR_LINES_PER_WINDOW",
    "STDERR_LINE_CHARS",
    "LineReader",
    "ServerProcess",
    "StderrLog",
    "end_all_groups",
    "live_groups",
    "parse_line",
    "resolve_command",
    "stdio_streams",
]

log = logging.getLogger(__name__)

#: Bytes of a server's stderr kept for error messages (the rest is dropped as it comes).
STDERR_KEEP: Final = 64 * 1024
#: Lines of a server's stderr logged per minute; the others are counted and dropped.
STDERR_LINES_PER_WINDOW: Final = 50
#: Characters of one stderr line that are logged.
STDERR_LINE_CHARS: Final = 500
_STDERR_WINDOW: Final = 60.0
_NOTE_CHARS: Final = 1500  # of the stderr tail, in an error message
_EXIT_GRACE: Final = 2.0  # seconds a server has to exit once its stdin is closed
_TERM_GRACE: Final = 2.0  # seconds its group has between SIGTERM and SIGKILL
_FLUSH_TIMEOUT: Final = 0.5
_POLL: Final = 0.02
_PREFIX: Final = 4096  # bytes of an unreadable line searched for its request id
_TOO_DEEP: Final = f"it is nested more than {DEFAULT_LIMITS.max_depth} levels deep"
_ID: Final = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")')

_GROUPS: set[int] = set()
_GROUPS_LOCK = threading.Lock()


# --------------------------------------------------------------------------- stderr


class StderrLog:
    """A server's stderr: the last :data:`STDERR_KEEP` bytes kept, lines logged rate-limited.

    Args:
        server: the server's name, in log lines.
        keep: how many trailing bytes to keep.
    """

    def __init__(self, server: str, keep: int = STDERR_KEEP) -> None:
        self.server = server
        self.keep = keep
        self.total = 0
        self._tail = bytearray()
        self._line = bytearray()
        self._limiter = RateLimiter(STDERR_LINES_PER_WINDOW, _STDERR_WINDOW)

    def feed(self, chunk: bytes) -> None:
        """Take the next bytes the server wrote."""
        self.total += len(chunk)
        self._tail += chunk
        if len(self._tail) > self.keep:
            del self._tail[: len(self._tail) - self.keep]
        *lines, rest = chunk.split(b"\n")
        for line in lines:
            self._emit(bytes(self._line) + line)
            self._line.clear()
        room = STDERR_LINE_CHARS * 4 - len(self._line)  # an endless line is cut, not buffered
        self._line += rest[: max(0, room)]

    def close(self) -> None:
        """The stream ended: log the last line and how many were held back."""
        if self._line:
            self._emit(bytes(self._line))
            self._line.clear()
        if self._limiter.held:
            log.info("MCP server %s: %d more stderr lines were not logged", self.server, self._limiter.held)
            self._limiter.held = 0

    def text(self, limit: int = _NOTE_CHARS) -> str:
        """The end of what the server wrote, at most ``limit`` characters."""
        text = self._tail.decode("utf-8", errors="replace").strip()
        return text if len(text) <= limit else "..." + text[-limit:]

    def _emit(self, raw: bytes) -> None:
        line = raw.decode("utf-8", errors="replace").rstrip()
        if not line:
            return
        allowed, held = self._limiter.allow()
        if not allowed:
            return
        if held:
            log.info("MCP server %s: %d stderr lines were not logged", self.server, held)
        cut = line if len(line) <= STDERR_LINE_CHARS else line[:STDERR_LINE_CHARS] + "..."
        log.info("MCP server %s stderr: %s", self.server, cut)


@dataclass(slots=True, eq=False)
class ServerProcess:
    """What the client knows of a running (or ended) stdio server process."""

    pid: int
    stderr: StderrLog
    exit_code: int | None = None
    ended: anyio.Event | None = field(default=None, repr=False)

    def describe(self) -> str:
        """``; the server process exited with code 1; its stderr ended with: ...``, or ``""``."""
        parts = []
        if self.exit_code is not None:
            parts.append(f"the server process exited with code {self.exit_code}")
        tail = self.stderr.text()
        if tail:
            parts.append(f"its stderr ended with: {tail}")
        return redact("; " + "; ".join(parts)) if parts else ""

    async def wait_ended(self, timeout: float) -> None:
        """Wait at most ``timeout`` seconds for the process to exit and its stderr to end."""
        import anyio

        if self.ended is not None:
            with anyio.move_on_after(timeout):
                await self.ended.wait()


# --------------------------------------------------------------------------- stdout


class LineReader:
    """Splits a server's stdout into messages, none longer than ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._buffer = bytearray()
        self._scanned = 0
        self._overflow: tuple[bytes, int] | None = None  # (prefix, bytes so far) of a long line

    def feed(self, chunk: bytes) -> list[Any]:
        """The messages (or :class:`UnreadableMessage`) completed by ``chunk``."""
        self._buffer += chunk
        items: list[Any] = []
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end < 0:
                self._hold()
                return items
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            self._scanned = 0
            item = self._finish(line)
            if item is not None:
                items.append(item)

    def _hold(self) -> None:
        """No line end yet: keep the bytes, unless the line is already too long to keep."""
        if self._overflow is not None:
            prefix, size = self._overflow
            self._overflow = (prefix, size + len(self._buffer))
            self._buffer.clear()
        elif len(self._buffer) > self.limit:
            self._overflow = (bytes(self._buffer[:_PREFIX]), len(self._buffer))
            self._buffer.clear()
        self._scanned = len(self._buffer)

    def _finish(self, line: bytes) -> Any:
        if self._overflow is not None:
            prefix, size = self._overflow
            self._overflow = None
            return self._too_long(prefix, size + len(line))
        if len(line) > self.limit:
            return self._too_long(line[:_PREFIX], len(line))
        return parse_line(line) if line.strip() else None

    def _too_long(self, prefix: bytes, size: int) -> UnreadableMessage:
        reason = f"it is {size} bytes long, over max_message_bytes ({self.limit})"
        return UnreadableMessage(reason, size, _id_in(prefix), _excerpt(prefix))


def parse_line(line: bytes) -> Any:
    """One line as a ``SessionMessage``, or an :class:`UnreadableMessage` saying why it is not one."""
    session_message, adapter, validation_error = _sdk()
    try:
        return session_message(adapter.validate_json(line, by_name=False))
    except validation_error:
        return _unreadable(line)


@functools.cache
def _sdk() -> tuple[Any, Any, type[Exception]]:
    """What reading a message needs from the SDK (imported on first use; looked up once per line)."""
    from mcp.shared.message import SessionMessage
    from mcp_types import jsonrpc_message_adapter
    from pydantic import ValidationError

    return SessionMessage, jsonrpc_message_adapter, ValidationError


def _unreadable(line: bytes) -> UnreadableMessage:
    """Why ``line`` is not a message, and the request it answers when that can be made out.

    Python's parser reads deeper than the SDK's (which stops near 200 levels), so a deep answer
    still names its request and fails it at once.
    """
    try:
        value = json.loads(line.decode("utf-8"))
    except RecursionError:
        return UnreadableMessage(_TOO_DEEP, len(line), _id_in(line[:_PREFIX]))
    except ValueError as exc:
        reason = "it is not UTF-8" if isinstance(exc, UnicodeDecodeError) else "it is not JSON"
        return UnreadableMessage(reason, len(line), _id_in(line[:_PREFIX]), _excerpt(line))
    found = value.get("id") if isinstance(value, dict) else None
    request_id = found if isinstance(found, int | str) and not isinstance(found, bool) else None
    try:
        check_limits(value, "MCP message")
    except LoadError:
        return UnreadableMessage(_TOO_DEEP, len(line), request_id, parsed=_message(value))
    try:  # the SDK refuses a lone surrogate anywhere: name it (a tools/list answer loses just its tool)
        check_text(value, "MCP message")
    except LoadError as exc:
        where = f" at {exc.pointer}" if exc.pointer else ""
        return UnreadableMessage(f"{exc.reason}{where}", len(line), request_id, parsed=_message(value))
    return UnreadableMessage("it is not a JSON-RPC message", len(line), request_id, _excerpt(line))


def _message(value: Any) -> Any:
    """``value`` as a ``SessionMessage`` when it is a well-formed message, else None."""
    from mcp.shared.message import SessionMessage
    from mcp_types import jsonrpc_message_adapter
    from pydantic import ValidationError

    try:
        return SessionMessage(jsonrpc_message_adapter.validate_python(value, by_name=False))
    except (ValidationError, RecursionError):
        return None


def _id_in(prefix: bytes) -> int | str | None:
    """The request id a (possibly cut) JSON-RPC envelope names near its start, if any."""
    if not prefix.lstrip().startswith(b"{") or b'"jsonrpc"' not in prefix:
        return None
    match = _ID.search(prefix)
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, int | str) else None


def _excerpt(raw: bytes, chars: int = 80) -> str:
    text = raw[: chars * 4].decode("utf-8", errors="replace")
    return repr(text[:chars] + ("..." if len(text) > chars or len(raw) > chars * 4 else ""))


# --------------------------------------------------------------------------- the transport


@contextlib.asynccontextmanager
async def stdio_streams(spec: MCPServerSpec, guard: MessageGuard) -> AsyncIterator[tuple[Any, Any]]:
    """Start ``spec``'s server and yield the SDK's ``(read_stream, write_stream)`` for it.

    The server process is recorded in ``guard.process``. Leaving the context ends the server and
    every process of its group (see the module docstring), also when cancelled.

    Raises:
        OSError: the command cannot be started.
        ConfigError: ``args`` or ``env`` name a ``${VAR}`` that is not set.
    """
    import anyio
    from mcp.shared.message import SessionMessage

    process = await _spawn(spec)
    server = ServerProcess(process.pid, StderrLog(spec.name), ended=anyio.Event())
    guard.process = server
    _track(process.pid)
    read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](0)
    flushed = anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(_read_stdout, process, read_send, spec.max_message_bytes)
        group.start_soon(_write_stdin, process, write_receive, read_send, flushed)
        group.start_soon(_watch, process, server)
        try:
            yield read_receive, write_send
        finally:
            with anyio.CancelScope(shield=True):
                read_receive.close()
                write_send.close()
                with anyio.move_on_after(_FLUSH_TIMEOUT):
                    await flushed.wait()
                await _stop(process)
            group.cancel_scope.cancel()


async def _spawn(spec: MCPServerSpec) -> Process:
    import anyio
    from mcp.client.stdio import get_default_environment

    args = [_interpolated(a, f"mcp server {spec.name}.args") for a in spec.args]
    env = {k: _interpolated(v, f"mcp server {spec.name}.env.{k}") for k, v in (spec.env or {}).items()}
    command = [resolve_command(spec.command or ""), *args]
    return await anyio.open_process(
        command, env=get_default_environment() | env, cwd=spec.cwd, start_new_session=True
    )


def _interpolated(value: str, where: str) -> str:
    """``value`` with ``${VAR}`` resolved now (what a variable held is registered as a secret)."""
    if "${" not in value:
        return value
    from fms_dgt.config import interpolate

    resolved = str(interpolate(value, yaml_path=where))
    register_resolved(value, resolved)
    return resolved


def resolve_command(command: str) -> str:
    """The executable to start: ``python`` means the interpreter running this package."""
    # A bare ``python`` would find whatever interpreter is first on PATH, usually not the one
    # that has this package (and the server's dependencies) installed.
    return sys.executable if command in ("python", "python3") else command


async def _read_stdout(process: Process, send: Any, limit: int) -> None:
    import anyio

    reader = LineReader(limit)
    async with send:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            async for chunk in _chunks(process.stdout):
                for item in reader.feed(chunk):
                    await send.send(item)
    # Nobody reads any more: keep draining, so a server blocked on a full pipe can still exit.
    with contextlib.suppress(Exception):
        async for _chunk in _chunks(process.stdout):
            pass


async def _chunks(stream: Any) -> AsyncIterator[bytes]:
    import anyio

    if stream is None:
        return
    ended = (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError)
    with contextlib.suppress(*ended):
        async for chunk in stream:
            yield chunk


async def _write_stdin(process: Process, receive: Any, read_send: Any, flushed: anyio.Event) -> None:
    import anyio

    try:
        async with receive:
            async for message in receive:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                await process.stdin.send(data.encode())  # type: ignore[union-attr]
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        # The server stopped reading (or died): end the read side too, so requests waiting for
        # an answer fail now instead of at their timeout.
        await read_send.aclose()
    finally:
        flushed.set()


async def _watch(process: Process, server: ServerProcess) -> None:
    """Read stderr to its end, note the exit code, then mark the process ended."""
    try:
        async for chunk in _chunks(process.stderr):
            server.stderr.feed(chunk)
        server.stderr.close()
        server.exit_code = await process.wait()
    finally:
        if server.ended is not None:
            server.ended.set()


# --------------------------------------------------------------------------- ending the process group


async def _stop(process: Process) -> None:
    """Close stdin, give the server :data:`_EXIT_GRACE` to exit, then end its whole group."""
    import anyio

    with contextlib.suppress(Exception):
        await process.stdin.aclose()  # type: ignore[union-attr]
    with anyio.move_on_after(_EXIT_GRACE):
        while process.returncode is None:
            await anyio.sleep(_POLL)
    await _end_group(process.pid, process)
    with contextlib.suppress(Exception):
        await process.stdout.aclose()  # type: ignore[union-attr]


async def _end_group(pgid: int, process: Process | None = None) -> None:
    import anyio

    if _signal_group(pgid, signal.SIGTERM):
        with anyio.move_on_after(_TERM_GRACE):
            while _group_alive(pgid) or (process is not None and process.returncode is None):
                await anyio.sleep(_POLL)
        if _group_alive(pgid):
            _signal_group(pgid, signal.SIGKILL)
    with _GROUPS_LOCK:
        _GROUPS.discard(pgid)


def _track(pgid: int) -> None:
    with _GROUPS_LOCK:
        _GROUPS.add(pgid)


def live_groups() -> list[int]:
    """Process groups of stdio servers started by this process and not ended yet."""
    with _GROUPS_LOCK:
        return sorted(_GROUPS)


def end_all_groups(grace: float = 0.5) -> None:
    """End every server process group still alive (at interpreter exit): SIGTERM, then SIGKILL."""
    groups = [g for g in live_groups() if _signal_group(g, signal.SIGTERM)]
    deadline = time.monotonic() + grace
    while groups and time.monotonic() < deadline:
        time.sleep(_POLL)
        groups = [g for g in groups if _group_alive(g)]
    for pgid in groups:
        _signal_group(pgid, signal.SIGKILL)
    with _GROUPS_LOCK:
        _GROUPS.clear()


def _signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to the group; False when there is no such group (or no way to signal one)."""
    killpg = getattr(os, "killpg", None)
    if killpg is None:  # pragma: no cover - Windows has no process groups to end
        return False
    try:
        killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # zombies or members of another user: keep waiting for them
    return True


def _group_alive(pgid: int) -> bool:
    """True while a process of group ``pgid`` runs (zombies do not count: nothing may reap them)."""
    if not _signal_group(pgid, 0):  # signal 0 only probes
        return False
    proc = Path("/proc")
    if not proc.is_dir():  # pragma: no cover - no /proc: a zombie keeps the group alive
        return True
    return any(_running_in(stat, pgid) for stat in proc.glob("[0-9]*/stat"))


def _running_in(stat: Path, pgid: int) -> bool:
    try:
        fields = stat.read_text().rpartition(")")[2].split()
    except OSError:
        return False
    # After the command name: state, ppid, pgrp, ...
    return len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z"
