"""The package's one error hierarchy.

Every exception raised on purpose by ``fms_dgt`` derives from :class:`DGTError`, so a caller can catch
everything the package means to raise with one ``except``. Third-party exceptions are translated where
they arise (``raise ... from exc``) and never leak bare.

::

    DGTError
    ├── ConfigError                 bad YAML config: unknown key, missing ${VAR} (also a ``ValueError``)
    │   └── ConfigNotFoundError     the config file does not exist (also a ``FileNotFoundError``)
    ├── PluginError
    │   ├── UnknownPluginError      no plug-in of that kind under that name (lists known names)
    │   └── PluginRegistrationError duplicate name or wrong base class at registration
    ├── LoadError                   a source could not be read or converted (file, line, JSON pointer)
    │   ├── SourceNotFoundError     a tool file or spec does not exist (also a ``FileNotFoundError``)
    │   ├── OperationError          an OpenAPI operation cannot be converted (skipped and reported)
    │   └── RefError                a $ref cannot be followed (missing, refused by policy, unreadable)
    │       └── CircularRefError    ... a chain of $refs leads back to itself
    ├── MCPClientError              an MCP connect/list/call failed (names server, transport, operation)
    │   ├── MCPTimeoutError         ... ran out of time (also a ``TimeoutError``)
    │   └── MCPConnectionLost       ... the connection dropped mid-request
    ├── ToolError
    │   ├── ToolDefinitionError     a tool object violates an invariant (also a ``ValueError``)
    │   │   ├── InvalidSchemaError  a schema cannot be compiled (bad keyword, non-local $ref)
    │   │   └── RouteError          a REST tool's route is missing or malformed
    │   ├── DuplicateToolError      same (namespace, name, fingerprint) registered twice
    │   ├── ToolNotFoundError       no tool under a qualified name (also a ``LookupError``)
    │   ├── AmbiguousToolError      a name has several overloads and the caller did not pick one
    │   └── NoMatchingOverloadError no overload of a name validates the call's arguments
    ├── RESTCallError               a call could not become an HTTP request, or the request failed
    │   ├── RequestRefusedError     ... it would leave its declared origin or base path (nothing sent)
    │   ├── HTTPTransportError      ... the connection failed, timed out or broke mid-response
    │   └── ResponseTooLargeError   ... the response body went past the engine's size cap
    ├── EngineError                 session API misuse (unknown session, setup twice)
    ├── RetryableError              a call failure worth retrying (engines raise it from ``call``)
    ├── CallCacheError              an engine's record/replay cache folder cannot be read or written
    │   └── CacheMissError          ... replay found no recorded answer for a call (tool, key, folder)
    ├── EnrichmentError             enrichment graph or run failed
    ├── RefreshError                ``refresh()`` failed; the previous registry is kept
    ├── WireError                   a name or message cannot be mapped to or from a provider format
    ├── SamplingError               a sampler could not return exactly ``k`` tools
    ├── TemplateError               a mock template names a field the call does not have
    ├── SynthesisError              no value satisfies a schema (contradictory constraints)
    ├── TextError                   the text model could not write a turn of a record
    ├── RejectedRecord              a record failed its checks (it goes to ``rejects.jsonl``)
    ├── OutputError                 an output folder is locked, damaged, full or read-only
    ├── WorkerError                 a worker process of a run failed (names it and what it was doing)
    └── ExportError                 records cannot be exported (bad input folder or line, missing extra)
        └── ChatTemplateError       a record does not render through a chat template

Messages follow ``<what> <who>: <why>. <how to fix>`` and the parts are also kept as attributes.
Every error class of the package is defined here, and this module imports nothing but the standard
library, so any module may raise any error without importing protocol libraries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "AmbiguousToolError",
    "CacheMissError",
    "CallCacheError",
    "ChatTemplateError",
    "CircularRefError",
    "ConfigError",
    "ConfigNotFoundError",
    "DGTError",
    "DuplicateToolError",
    "EngineError",
    "EnrichmentError",
    "ExportError",
    "HTTPTransportError",
    "InvalidSchemaError",
    "LoadError",
    "MCPClientError",
    "MCPConnectionLost",
    "MCPTimeoutError",
    "NoMatchingOverloadError",
    "OperationError",
    "OutputError",
    "PluginError",
    "PluginRegistrationError",
    "RESTCallError",
    "RefError",
    "RefreshError",
    "RejectedRecord",
    "RequestRefusedError",
    "ResponseTooLargeError",
    "RetryableError",
    "RouteError",
    "SamplingError",
    "SourceNotFoundError",
    "SynthesisError",
    "TemplateError",
    "TextError",
    "ToolDefinitionError",
    "ToolError",
    "ToolNotFoundError",
    "UnknownPluginError",
    "WireError",
    "WorkerError",
]


class DGTError(Exception):
    """Base class of every error ``fms_dgt`` raises on purpose."""


class ConfigError(DGTError, ValueError):
    """A configuration is invalid.

    Attributes:
        path: the config file, when there is one.
        yaml_path: dotted location inside the config (``tools.registry[0].path``).
    """

    def __init__(self, message: str, *, path: str | None = None, yaml_path: str | None = None):
        self.path = path
        self.yaml_path = yaml_path
        self.reason = message
        where = ", ".join(p for p in (path, yaml_path and f"at {yaml_path}") if p)
        super().__init__(f"{message} ({where})" if where else message)


class ConfigNotFoundError(ConfigError, FileNotFoundError):
    """The config file does not exist (also a ``FileNotFoundError``)."""


class PluginError(DGTError):
    """Base class of plug-in registry errors."""


class UnknownPluginError(PluginError, LookupError):
    """No plug-in of a kind is registered under a name."""

    def __init__(self, kind: str, name: str, known: Sequence[str], suggestion: str | None = None):
        self.kind = kind
        self.name = name
        self.known = list(known)
        hint = f" Did you mean {suggestion!r}?" if suggestion else ""
        names = ", ".join(sorted(self.known)) or "(none)"
        super().__init__(f"unknown {kind} {name!r}: registered names are {names}.{hint}")

    def __str__(self) -> str:  # LookupError would otherwise repr() the message like KeyError
        return str(self.args[0])


class PluginRegistrationError(PluginError):
    """A plug-in could not be registered (duplicate name, wrong base class)."""


class LoadError(DGTError):
    """A tool source could not be read or converted.

    Attributes:
        source: file path, URL or server name.
        line: 1-based line in the file, when known.
        pointer: JSON pointer (RFC 6901) to the offending value, when known.
        problems: every individual problem when one load found several (each a ``LoadError``).
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        pointer: str | None = None,
        problems: Sequence[LoadError] = (),
    ):
        self.source = source
        self.line = line
        self.pointer = pointer
        self.reason = message
        self.problems = list(problems)
        super().__init__(_locate(message, source, line, pointer))

    @classmethod
    def collect(cls, problems: Sequence[LoadError], source: str) -> LoadError:
        """One error standing for several: the first alone, or a summary listing them all."""
        if len(problems) == 1:
            return problems[0]
        listed = "\n  ".join(str(p) for p in problems)
        return cls(f"{len(problems)} problems in {source}:\n  {listed}\n", problems=problems)


class SourceNotFoundError(LoadError, FileNotFoundError):
    """A tool file or spec does not exist (also a ``FileNotFoundError``)."""


class RefError(LoadError):
    """A ``$ref`` cannot be followed (missing target, refused by policy, unreadable file)."""


class CircularRefError(RefError):
    """A chain of pure ``$ref`` nodes leads back to itself (no schema at all).

    Attributes:
        target: the first target of the chain.
    """

    def __init__(self, message: str, target: Any) -> None:
        self.target = target
        super().__init__(message)


class OperationError(LoadError):
    """An OpenAPI operation cannot be converted; the loader skips it and reports why."""


def _locate(message: str, source: str | None, line: int | None, pointer: str | None) -> str:
    parts = []
    if source:
        parts.append(f"{source}:{line}" if line else source)
    if pointer is not None:
        parts.append(f"at {pointer or '/'}")
    return f"{message} [{' '.join(parts)}]" if parts else message


class ToolError(DGTError):
    """Base class of tool and registry errors."""


_FIX_SCHEMA = (
    "Fix the schema so it is valid Draft 2020-12 JSON Schema (normalise_parameters repairs the "
    "common dialect slips)"
)


class ToolDefinitionError(ToolError, ValueError):
    """A tool definition violates an invariant (a name with ``::``, a non-object schema)."""


class InvalidSchemaError(ToolDefinitionError):
    """A schema cannot be turned into a validator.

    Attributes:
        reason: what is wrong.
        pointer: JSON pointer to the offending part of the schema (``""`` for the root or unknown).
        fix: how to fix it.
    """

    def __init__(self, reason: str, *, pointer: str = "", fix: str = _FIX_SCHEMA):
        self.reason = reason
        self.pointer = pointer
        self.fix = fix
        where = f" at {pointer}" if pointer else ""
        super().__init__(f"cannot compile JSON Schema{where}: {reason}. {fix}.")


class RouteError(ToolDefinitionError):
    """A tool's route is missing or malformed.

    Attributes:
        owner: the tool (or other holder) whose route it is.
        field: the dotted path of the offending field, empty for the route as a whole.
    """

    def __init__(self, message: str, *, owner: str, field: str = "") -> None:
        self.owner = owner
        self.field = field
        super().__init__(message)


class DuplicateToolError(ToolError):
    """The same ``(namespace, name, fingerprint)`` was registered twice."""

    def __init__(self, qualified_name: str, first: str, second: str):
        self.qualified_name = qualified_name
        self.first = first
        self.second = second
        super().__init__(
            f"duplicate tool: {qualified_name} with identical input schema registered twice "
            f"(first from {first}, again from {second}). Remove one of them, or give them "
            "different namespaces."
        )


class ToolNotFoundError(ToolError, LookupError):
    """No tool is registered under a qualified name."""

    def __init__(self, qualified_name: str, suggestion: str | None = None):
        self.qualified_name = qualified_name
        hint = f" Did you mean {suggestion!r}?" if suggestion else ""
        super().__init__(
            f"unknown tool {qualified_name!r}: no tool has that qualified name (namespace::name).{hint}"
        )

    def __str__(self) -> str:
        return str(self.args[0])


class AmbiguousToolError(ToolError):
    """A qualified name has several overloads; use ``overloads()`` or ``match()``."""

    def __init__(self, qualified_name: str, fingerprints: Sequence[str]):
        self.qualified_name = qualified_name
        self.fingerprints = list(fingerprints)
        listed = ", ".join(f[:12] for f in fingerprints)
        super().__init__(
            f"ambiguous tool {qualified_name!r}: {len(fingerprints)} overloads (fingerprints "
            f"{listed}). Use registry.match(tool_call) to pick one by its arguments, or "
            "registry.overloads(name) to see them all."
        )


class NoMatchingOverloadError(ToolError):
    """No overload of a name accepts the call's arguments.

    Attributes:
        reasons: one explanation per candidate, keyed by fingerprint.
    """

    def __init__(self, qualified_name: str, reasons: dict[str, str]):
        self.qualified_name = qualified_name
        self.reasons = dict(reasons)
        detail = "; ".join(f"overload {fp[:12]}: {why}" for fp, why in reasons.items())
        super().__init__(
            f"arguments rejected by {qualified_name!r}: {detail}. Fix the arguments to match one "
            "of the input schemas."
        )


class MCPClientError(DGTError):
    """An MCP operation failed.

    Attributes:
        server: the server's name.
        transport: ``stdio``, ``sse``, ``streamable_http``, or ``auto`` before an HTTP server's
            transport is known.
        operation: ``connect``, ``tools/list``, ``tools/call <name>``...
        reason: why it failed.
    """

    def __init__(self, server: str, transport: str, operation: str, reason: str, hint: str = "") -> None:
        self.server = server
        self.transport = transport
        self.operation = operation
        self.reason = reason
        text = f"MCP {operation} failed for server {server!r} ({transport}): {reason}."
        super().__init__(f"{text} {hint}" if hint else text)


class MCPTimeoutError(MCPClientError, TimeoutError):
    """An MCP operation did not finish within its timeout."""


class MCPConnectionLost(MCPClientError):
    """The connection dropped while a request was in flight; the next use reconnects."""


class RESTCallError(DGTError):
    """A call could not be turned into a request or the request failed (returned as data)."""


class RequestRefusedError(RESTCallError):
    """A request (or a redirect) would leave its declared origin or base path; nothing was sent."""


class HTTPTransportError(RESTCallError):
    """The HTTP exchange failed: no connection, a timeout, or a response broken mid-way.

    Attributes:
        timed_out: the failure was a timeout.
    """

    def __init__(self, message: str, *, timed_out: bool = False):
        self.timed_out = timed_out
        super().__init__(message)


class ResponseTooLargeError(RESTCallError):
    """A response body (counted decompressed) went past the size cap; reading stopped there.

    Attributes:
        limit: the cap in bytes.
    """

    def __init__(self, message: str, *, limit: int):
        self.limit = limit
        super().__init__(message)


class EngineError(DGTError):
    """Misuse of the session API (unknown session, setup twice, an invalid handler)."""


class RetryableError(DGTError):
    """A call failure worth retrying (rate limit, temporary outage); engines raise it from ``call``.

    Attributes:
        retry_after: seconds the service asked to wait (HTTP ``Retry-After``), when it said so;
            the retry waits that long (capped by the policy's ``max_retry_after``) instead of the
            exponential backoff.
    """

    def __init__(self, message: str, *, retry_after: float | None = None):
        self.retry_after = retry_after
        super().__init__(message)


class CallCacheError(DGTError):
    """An engine's record/replay cache folder cannot be created, read or written.

    Attributes:
        path: the cache folder, when known.
    """

    def __init__(self, message: str, *, path: str | None = None):
        self.path = path
        super().__init__(message)


class CacheMissError(CallCacheError, LookupError):
    """Replay found no recorded answer for a call (mode ``replay`` never calls the service).

    Attributes:
        tool: the qualified name of the tool called.
        key: the call's cache key.
        path: the cache folder searched.
    """

    def __init__(self, message: str, *, tool: str, key: str, path: str):
        self.tool = tool
        self.key = key
        super().__init__(message, path=path)


class EnrichmentError(DGTError):
    """The enrichment graph is invalid (cycle, missing dependency) or an enrichment failed."""


class RefreshError(DGTError):
    """``refresh()`` failed; the registry still holds its previous tools and artifacts."""


class WireError(DGTError):
    """A name or message cannot be mapped to or from a provider format."""


class OutputError(DGTError):
    """A run's output folder cannot be used: locked by another run, damaged, full or read-only."""


class WorkerError(DGTError):
    """A worker process of a run (``run.executor: processes``) failed: its job could not be built
    or a record raised; the message names it and says why. What the run wrote so far is kept for
    ``--resume``. (A worker that dies without a word is only a warning: the run builds its
    records itself.)"""


class ExportError(DGTError):
    """Records cannot be exported: a missing or damaged input, an unknown format, a missing extra.

    Attributes:
        path: the file at fault, when there is one.
        line: its 1-based line, when known.
    """

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.reason = message
        where = f"{path}:{line}: " if path and line else f"{path}: " if path else ""
        super().__init__(f"{where}{message}")


class ChatTemplateError(ExportError):
    """A record does not render through a chat template (the template raised, or it is not Jinja)."""


class TemplateError(DGTError, ValueError):
    """A mock template names a field the call does not have."""


class SynthesisError(DGTError):
    """No valid value could be synthesised for a schema (e.g. contradictory constraints)."""


class TextError(DGTError):
    """The text model could not write a turn of a record."""


class RejectedRecord(DGTError):
    """A record failed validation or could not be built; it goes to ``rejects.jsonl``.

    Attributes:
        reason: the short reason counted in the summary (defaults to the class name).
        call: for a failed call: ``{"tool", "engine", "error"}``, written with the reject.
    """

    def __init__(self, message: str, *, reason: str | None = None, call: Mapping[str, Any] | None = None):
        super().__init__(message)
        self.reason = reason or type(self).__name__
        self.call = dict(call) if call is not None else None


class SamplingError(DGTError):
    """A sampler could not return exactly the requested number of tools.

    Attributes:
        requested: how many tools were asked for.
        tools: the partial sample gathered before giving up.
    """

    def __init__(self, message: str, *, requested: int | None = None, tools: Sequence[Any] = ()):
        self.requested = requested
        self.tools = list(tools)
        super().__init__(message)
