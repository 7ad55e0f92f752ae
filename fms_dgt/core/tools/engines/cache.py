"""Record and replay the answers of real tool calls, for any engine.

An engine entry's ``cache`` key turns it on::

    tools:
      engines:
        petstore:
          type: rest
          cache: {mode: auto, path: cache/petstore}   # path relative to the config's folder

Modes: ``off`` (the default); ``record`` (call the service and record its answer); ``replay``
(answer only from the cache: nothing is sent, and a call without a recorded answer fails with
:class:`~fms_dgt.errors.CacheMissError`); ``auto`` (answer from the cache when it can, else call
and record). ``path`` defaults to ``<tools.cache_dir>/calls/<engine name>``.

**Key.** The SHA-256 of the canonical JSON (sorted keys) of the qualified tool name, the tool's
fingerprint, the arguments as sent (after coercion and defaults) and what the engine adds
(:meth:`~fms_dgt.core.tools.engines.base.ToolEngine.cache_material`: the ``lm`` engine adds the
model, its sampling settings and the prompt). Headers and credentials are never part of it, nor is
the server's address: point ``path`` elsewhere when the same tools move to another server.

**What is recorded.** Every answer except a transient failure: a transport error, a timeout, or
an HTTP 408, 425, 429 or 5xx. A success, a service's error answer (an HTTP 4xx, an MCP
``isError``, a model answer that breaks the output schema) and a request refused before it was
sent are recorded: calling again would give the same answer. A run whose calls failed transiently
therefore replays those calls as misses.

**Which answer is served.** The answer recorded for the same call of the same session (same key,
session id and call id) when there is one, so a run replayed from its own cache gets back every
answer it got, even from a server whose state changed between calls; else the latest answer
recorded for the key (a cache filled by another run).

**Store.** A folder of JSON Lines shards, one per writer (``<host>-<pid>-<random>.jsonl``), each
line ``{key, tool, fingerprint, arguments, context, result, error, metadata, recorded_at}``.
Values pass through :func:`fms_dgt.secrets.redact_value` first, so no registered secret reaches
the disk. Each line is written with one ``write()`` on an ``O_APPEND`` descriptor, so threads,
processes and Ray workers sharing the folder never interleave. ``replay`` and ``auto`` read every
shard once, when the engine makes its first call; what other processes record later is not seen
by a running engine (in ``auto`` a call they recorded meanwhile is called and recorded again).

**Damage.** A line that cannot be read (the cut last line of a writer that was killed, or
garbage) is skipped with a warning naming its file and line; it never stops a run. A call whose
answer was on it is a miss.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import socket
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.errors import CacheMissError, CallCacheError, ConfigError
from fms_dgt.secrets import redact, redact_value

__all__ = ["CACHE_MODES", "CacheSettings", "CallCache", "cacheable", "call_key"]

log = logging.getLogger(__name__)

CACHE_MODES = ("off", "record", "replay", "auto")
_SETTING_KEYS = ("mode", "path")
_TRANSIENT_STATUS = frozenset({408, 425, 429})
_TRANSIENT_TYPES = frozenset({"transport", "timeout"})
#: Metadata that differs between two identical calls (or says how this one went): not recorded.
_VOLATILE = frozenset({"elapsed_ms", "attempts", "cache"})
_HOST = re.compile(r"[^A-Za-z0-9_.-]")

#: ``(session id, call id)`` of a call.
Context = tuple[str, str]


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheSettings:
    """An engine's ``cache`` setting.

    Attributes:
        mode: ``off``, ``record``, ``replay`` or ``auto``.
        path: the cache folder as written (relative paths resolve against the config's folder);
            None for ``<tools.cache_dir>/calls/<engine name>``.
    """

    mode: str = "off"
    path: str | None = None

    def __post_init__(self) -> None:
        if self.mode not in CACHE_MODES:
            raise ConfigError(f"invalid cache mode {self.mode!r}: use one of {', '.join(CACHE_MODES)}")
        if self.path is not None and (not isinstance(self.path, str) or not self.path):
            raise ConfigError("invalid cache path: expected a folder name")

    @classmethod
    def of(cls, value: Any) -> CacheSettings:
        """Settings from a config value: None, a mode (``cache: replay``) or ``{mode, path}``.

        Raises:
            ConfigError: an unknown key, a missing or unknown mode, or a path that is no string.
        """
        if value is None or isinstance(value, CacheSettings):
            return value or cls()
        if isinstance(value, str):
            return cls(mode=value)
        if not isinstance(value, Mapping):
            raise ConfigError("invalid cache: expected {mode: off|record|replay|auto, path: FOLDER}")
        unknown = sorted(str(k) for k in value if k not in _SETTING_KEYS)
        if unknown:
            raise ConfigError(f"unknown key {unknown[0]!r} in cache: accepted keys are mode, path")
        if "mode" not in value:
            raise ConfigError("missing cache mode: give mode: record, replay, auto or off")
        return cls(mode=value["mode"], path=value.get("path"))

    @property
    def enabled(self) -> bool:
        """True unless the mode is ``off``."""
        return self.mode != "off"

    def folder(self, engine: str, *, base_dir: Path, cache_dir: Path) -> Path:
        """The cache folder of engine ``engine``: ``path`` against ``base_dir``, else under
        ``cache_dir``."""
        if self.path is None:
            return cache_dir / "calls" / engine
        path = Path(self.path).expanduser()
        return path if path.is_absolute() else base_dir / path


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def call_key(tool: Tool, arguments: Mapping[str, Any], material: Mapping[str, Any]) -> str | None:
    """The cache key of a call, or None when its arguments or material are not JSON."""
    keyed: dict[str, Any] = {
        "tool": tool.qualified_name,
        "fingerprint": tool.fingerprint,
        "arguments": redact_value(dict(arguments)),
    }
    if material:
        keyed["material"] = redact_value(dict(material))
    try:
        text = _canonical(keyed)
    except (TypeError, ValueError):
        return None
    return hashlib.sha256(text.encode()).hexdigest()


def cacheable(result: ToolResult) -> bool:
    """True unless ``result`` is a transient failure (transport, timeout, HTTP 408/425/429/5xx)."""
    if result.error is None:
        return True
    info = result.metadata.get("error")
    info = info if isinstance(info, Mapping) else {}
    if info.get("type") in _TRANSIENT_TYPES:
        return False
    code = result.metadata.get("status", info.get("code"))
    transient = isinstance(code, int) and (code in _TRANSIENT_STATUS or 500 <= code <= 599)
    return not transient


@dataclass(frozen=True, slots=True)
class _Entry:
    """One recorded answer: when, and its line as written."""

    recorded_at: str
    line: bytes

    def answer(self, call: ToolCall, call_id: str) -> ToolResult:
        data = json.loads(self.line)
        metadata = dict(data.get("metadata") or {})
        metadata["cache"] = "hit"
        return ToolResult(
            call_id, call.name, result=data.get("result"), error=data.get("error"), metadata=metadata
        )


def _answer_shaped(data: dict[str, Any]) -> bool:
    """True when a line's answer can become a :class:`ToolResult`."""
    return isinstance(data.get("metadata"), dict) and isinstance(data.get("error"), (str, type(None)))


def _parse(raw: bytes) -> tuple[str, Context, _Entry] | None:
    """The key, context and entry of one line, or None when it cannot be read."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    key, at, context = data.get("key"), data.get("recorded_at"), data.get("context")
    if not isinstance(key, str) or not isinstance(at, str) or not _answer_shaped(data):
        return None
    context = context if isinstance(context, dict) else {}
    where = (str(context.get("session", "")), str(context.get("call_id", "")))
    return key, where, _Entry(at, raw)


class _Shard:
    """The file this process appends to, opened on the first write (and again after a fork)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._fd: int | None = None
        self._pid = 0
        self._lock = threading.Lock()

    def append(self, line: bytes) -> None:
        """Write one line with one ``write()``.

        Raises:
            CallCacheError: the folder or file cannot be created or written.
        """
        with self._lock:
            try:
                fd = self._open()
                written = os.write(fd, line)
            except OSError as exc:
                self._drop()
                raise CallCacheError(
                    f"cannot write the call cache {self.folder}: {exc}", path=str(self.folder)
                ) from exc
            if written != len(line):  # a full disk: the cut line is skipped by readers
                self._drop()
                raise CallCacheError(
                    f"cannot write the call cache {self.folder}: short write", path=str(self.folder)
                )

    def _open(self) -> int:
        if self._fd is None or self._pid != os.getpid():
            self.folder.mkdir(parents=True, exist_ok=True)
            name = f"{_HOST.sub('_', socket.gethostname())}-{os.getpid()}-{os.urandom(4).hex()}.jsonl"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND
            self._fd, self._pid = os.open(self.folder / name, flags, 0o600), os.getpid()
        return self._fd

    def _drop(self) -> None:
        """Forget the current file: the next line starts a new shard (never behind a cut line)."""
        if self._fd is not None and self._pid == os.getpid():
            with contextlib.suppress(OSError):
                os.close(self._fd)
        self._fd = None

    def close(self) -> None:
        """Close the file. Idempotent."""
        with self._lock:
            self._drop()


class CallCache:
    """The record/replay cache of one engine (see the module docstring).

    Args:
        folder: where the shards live.
        mode: ``record``, ``replay`` or ``auto``.
        engine: the engine's name, for messages.
    """

    def __init__(self, folder: Path, *, mode: str, engine: str) -> None:
        self.folder = folder
        self.mode = mode
        self.engine = engine
        self._latest: dict[str, _Entry] = {}
        self._exact: dict[tuple[str, Context], _Entry] = {}
        self._lock = threading.Lock()
        self._shard = _Shard(folder)
        self._unrecordable: set[str] = set()
        if mode in ("replay", "auto"):
            self._load()

    def __len__(self) -> int:
        return len(self._latest)

    # ------------------------------------------------------------------ answering

    def answer(
        self,
        tool: Tool,
        call: ToolCall,
        context: Context,
        material: Mapping[str, Any],
        run: Callable[[], ToolResult],
    ) -> ToolResult:
        """The call's answer: from the cache, or from ``run()`` (recorded when it may be).

        Raises:
            CacheMissError: mode ``replay`` and no answer is recorded for the call.
        """
        key = call_key(tool, call.arguments, material)
        if key is not None and self.mode != "record":
            hit = self.lookup(key, context)
            if hit is not None:
                return hit.answer(call, context[1])
        if self.mode == "replay":
            raise self._miss(tool, key)
        result = run()
        if key is not None and cacheable(result):
            self._record(key, tool, call, context, result)
        return result

    def lookup(self, key: str, context: Context) -> _Entry | None:
        """The answer recorded for this call of this session, else the latest for the key."""
        with self._lock:
            return self._exact.get((key, context)) or self._latest.get(key)

    def _miss(self, tool: Tool, key: str | None) -> CacheMissError:
        shown = key[:16] if key else "none: the arguments are not JSON"
        held = f"it holds {len(self):,} answers" if self.folder.is_dir() else "the folder does not exist"
        return CacheMissError(
            f"cache miss for {tool.qualified_name} in the call cache {self.folder} (engine "
            f"{self.engine!r}, key {shown}): mode replay never calls the service, and no answer "
            f"is recorded for this call ({held}). Run once with cache mode record or auto to "
            "record it, or check that tools and arguments match the recorded run",
            tool=tool.qualified_name,
            key=key or "",
            path=str(self.folder),
        )

    # ------------------------------------------------------------------ recording

    def _record(self, key: str, tool: Tool, call: ToolCall, context: Context, result: ToolResult) -> None:
        at = datetime.now(timezone.utc).isoformat(timespec="microseconds")
        try:
            line = _line(key, tool, call, context, result, at)
        except (TypeError, ValueError) as exc:
            self._not_json(tool, exc)
            result.metadata["cache"] = "not recorded: the answer is not JSON"
            return
        try:
            self._shard.append(line)
        except CallCacheError as exc:
            log.warning("%s; the answer of %s was not recorded", exc, tool.qualified_name)
            result.metadata["cache"] = "not recorded: the cache cannot be written"
            return
        result.metadata["cache"] = "recorded"
        if self.mode == "auto":  # a later identical call of this run is a hit
            self._index(key, context, _Entry(at, line))

    def _not_json(self, tool: Tool, exc: Exception) -> None:
        if tool.qualified_name not in self._unrecordable:
            self._unrecordable.add(tool.qualified_name)
            log.warning("answers of %s are not recorded in %s: %s", tool.qualified_name, self.folder, exc)

    def _index(self, key: str, context: Context, entry: _Entry) -> None:
        with self._lock:
            latest = self._latest.get(key)
            if latest is None or entry.recorded_at >= latest.recorded_at:
                self._latest[key] = entry
            exact = self._exact.get((key, context))
            if exact is None or entry.recorded_at >= exact.recorded_at:
                self._exact[(key, context)] = entry

    # ------------------------------------------------------------------ loading

    def _load(self) -> None:
        try:
            shards = sorted(self.folder.glob("*.jsonl")) if self.folder.is_dir() else []
        except OSError as exc:
            log.warning("cannot list the call cache %s: %s; every call is a miss", self.folder, exc)
            return
        for shard in shards:
            self._load_shard(shard)

    def _load_shard(self, shard: Path) -> None:
        try:
            lines = shard.read_bytes().split(b"\n")
        except OSError as exc:
            log.warning("cannot read cache shard %s: %s; its answers are skipped", shard, exc)
            return
        bad: list[int] = []
        for number, raw in enumerate(lines[:-1], 1):
            parsed = _parse(raw)
            if parsed is None:
                bad.append(number)
            else:
                self._index(*parsed)
        if bad:
            log.warning(
                "skipped %d unreadable line(s) of cache shard %s (first: line %d); the calls they "
                "answered are misses",
                len(bad),
                shard,
                bad[0],
            )
        if lines[-1]:
            log.warning(
                "skipped the cut last line %d of cache shard %s (its writer stopped mid-line)",
                len(lines),
                shard,
            )

    def close(self) -> None:
        """Close the shard this process writes. Idempotent."""
        self._shard.close()


def _line(key: str, tool: Tool, call: ToolCall, context: Context, result: ToolResult, at: str) -> bytes:
    """The JSON line recording one answer, secrets redacted."""
    metadata = {k: v for k, v in result.metadata.items() if k not in _VOLATILE}
    entry = {
        "key": key,
        "tool": tool.qualified_name,
        "fingerprint": tool.fingerprint,
        "arguments": redact_value(dict(call.arguments)),
        "context": redact_value({"session": context[0], "call_id": context[1]}),
        "result": redact_value(result.result),
        "error": None if result.error is None else redact(result.error),
        "metadata": redact_value(metadata),
        "recorded_at": at,
    }
    return (json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
