"""The ``output_parameters`` enrichment: fill in result schemas for tools that lack them.

Tools that already declare ``output_parameters`` are left alone. For the others, strategies are tried
in the configured order until one gives a schema:

* ``observe``: call the tool through an engine with synthesised valid arguments (a few argument
  sets per tool, deterministic) and infer a JSON Schema from the results that succeed. Building a
  registry must not change a server, so tools that speak HTTP (``rest`` operations, manifest tools
  with an ``http`` block) are called only when their method is safe (GET, HEAD, OPTIONS); others
  are reported as not observed unless ``observe_unsafe`` names them (qualified names, operation
  ids or globs).
* ``llm``: ask a model behind an OpenAI-compatible ``/chat/completions`` endpoint for the schema
  (answers are cached by tool content and model).

The filled tools replace the originals in the registry being built (``update_tools``), so later
enrichments (``embeddings``, ``dataflow``) see them. ``artifacts["output_parameters"]`` is an
:class:`OutputParametersReport` saying which tools were filled by which strategy and why others
were not.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import logging
import math
import os
import random
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from fms_dgt.core.tools.data_objects import Tool, ToolCall, ToolResult
from fms_dgt.core.tools.engines.base import ToolEngine
from fms_dgt.core.tools.enrichments.base import ToolEnrichment, resolve_cache_dir, stable_hash
from fms_dgt.core.tools.openai_compat import chat_content, lm_settings, post_json
from fms_dgt.core.tools.schema import get_validator, json_type, normalise_parameters
from fms_dgt.core.tools.transport import decode_json
from fms_dgt.errors import ConfigError, DGTError, EnrichmentError, RESTCallError
from fms_dgt.plugins import get_tool_engine_class, register_tool_enrichment

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = [
    "OBSERVE_SAFE_METHODS",
    "OutputParametersEnrichment",
    "OutputParametersReport",
    "http_method",
    "infer_schema",
    "synthesise_arguments",
]

log = logging.getLogger(__name__)

EngineFactory = Callable[["ToolRegistry"], ToolEngine]
_STRATEGIES = ("observe", "llm")
_SESSION = "output_parameters"
#: Methods the observe strategy calls without being told to: they do not change server state.
OBSERVE_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def http_method(tool: Tool) -> str | None:
    """The HTTP method a call of ``tool`` sends, or None for a tool that speaks no HTTP.

    ``rest`` tools say it in their route, manifest tools in ``http.method`` (POST by default); a
    route without a readable method gives ``"unknown"`` (treated as unsafe).
    """
    metadata = tool.metadata
    route = metadata.get("route")
    if metadata.get("kind") in ("rest", "openapi") or route is not None:
        method = route.get("method") if isinstance(route, dict) else None
        return method.upper() if isinstance(method, str) else "unknown"
    http = metadata.get("http")
    if metadata.get("kind") == "http" or isinstance(http, dict):
        method = http.get("method", "POST") if isinstance(http, dict) else "POST"
        return method.upper() if isinstance(method, str) else "unknown"
    return None


@dataclass(slots=True)
class OutputParametersReport:
    """What the enrichment did.

    Attributes:
        filled: qualified name -> strategy that produced its schema (overloads share a name; see
            ``Tool.metadata["output_parameters_source"]`` for each).
        failed: qualified name -> why no strategy produced a schema.
        kept: how many tools already had ``output_parameters``.
    """

    filled: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    kept: int = 0


# --------------------------------------------------------------------------- argument synthesis


def _string_value(schema: Mapping[str, Any], name: str, rng: random.Random) -> str:
    fmt = schema.get("format")
    samples = {
        "date": "2024-03-15",
        "date-time": "2024-03-15T10:30:00Z",
        "time": "10:30:00",
        "email": "user@example.com",
        "uri": "https://example.com/item",
        "url": "https://example.com/item",
        "uuid": "123e4567-e89b-12d3-a456-426614174000",
    }
    text = samples.get(str(fmt), f"{name or 'value'}_{rng.randint(1, 99)}")
    low, high = int(schema.get("minLength", 0)), schema.get("maxLength")
    text = text.ljust(low, "x")
    return text[: int(high)] if high is not None else text


def _number_value(schema: Mapping[str, Any], integer: bool, rng: random.Random) -> int | float:
    low = schema.get("minimum", schema.get("exclusiveMinimum", 1))
    high = schema.get("maximum", schema.get("exclusiveMaximum", max(100, low + 1)))
    if "exclusiveMinimum" in schema and "minimum" not in schema:
        low += 1 if integer else 1e-6
    if "exclusiveMaximum" in schema and "maximum" not in schema:
        high -= 1 if integer else 1e-6
    low = min(low, high)
    if integer:
        first = math.ceil(low)
        return rng.randint(first, max(first, math.floor(high)))
    return round(rng.uniform(float(low), float(high)), 2)


def synthesise_arguments(schema: Any, rng: random.Random, name: str = "") -> Any:
    """A value that validates against ``schema`` in common cases (enums, formats, bounds, nesting).

    Every property of an object is filled, so the observed results show as many fields as possible.
    """
    if not isinstance(schema, Mapping):
        return f"{name or 'value'}_{rng.randint(1, 99)}"
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return rng.choice(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return synthesise_arguments(schema[key][0], rng, name)
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    return _by_type(str(kind), schema, rng, name)


def _by_type(kind: str, schema: Mapping[str, Any], rng: random.Random, name: str) -> Any:
    if kind == "object":
        props = schema.get("properties", {})
        return (
            {k: synthesise_arguments(v, rng, k) for k, v in props.items()}
            if isinstance(props, Mapping)
            else {}
        )
    if kind == "array":
        count = max(1, int(schema.get("minItems", 1)))
        return [synthesise_arguments(schema.get("items", {}), rng, name) for _ in range(count)]
    if kind in ("integer", "number"):
        return _number_value(schema, kind == "integer", rng)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    return _string_value(schema, name, rng)


# --------------------------------------------------------------------------- schema inference


def infer_schema(values: Sequence[Any]) -> dict[str, Any]:
    """The narrowest simple JSON Schema that accepts every value in ``values``.

    Objects get ``properties`` (and ``required`` for keys present in every value), arrays get
    ``items``, mixed integers and floats become ``number``, several types become a type list.
    """
    types = list(dict.fromkeys(json_type(v) for v in values))
    if "integer" in types and "number" in types:
        types.remove("integer")
    if not types:
        return {}
    if len(types) > 1:
        return {"type": types}
    kind = types[0]
    if kind == "object":
        return _infer_object([v for v in values if isinstance(v, Mapping)])
    if kind == "array":
        items = [item for v in values for item in v]
        return {"type": "array", "items": infer_schema(items)} if items else {"type": "array"}
    return {"type": kind}


def _infer_object(values: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    keys = list(dict.fromkeys(k for v in values for k in v))
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {k: infer_schema([v[k] for v in values if k in v]) for k in keys},
    }
    required = [k for k in keys if all(k in v for v in values)]
    if required:
        schema["required"] = required
    return schema


def _decoded(result: ToolResult) -> Any:
    value = result.result
    if isinstance(value, str):
        try:
            return decode_json(value, f"the result of {result.name}")
        except (ValueError, RESTCallError):  # text, or JSON too deep or too long to use
            return value
    return value


# --------------------------------------------------------------------------- enrichment


@register_tool_enrichment("output_parameters")
class OutputParametersEnrichment(ToolEnrichment):
    """Fill ``output_parameters`` of tools that have none.

    Args:
        strategy: ``observe``, ``llm``, or a list of both in the order to try them.
        engine: for ``observe``: an engine plug-in name (built on the registry being enriched with
            ``engine_options``), or in code a :class:`ToolEngine` or a factory
            ``registry -> ToolEngine``.
        engine_options: keyword arguments for the engine plug-in.
        observe_unsafe: HTTP tools that ``observe`` may call although their method can change
            server state (POST, PUT, PATCH, DELETE...): qualified names, operation ids or globs
            (``petstore::create*``). By default only GET, HEAD and OPTIONS are called.
        samples: argument sets tried per tool when observing.
        seed: seed of the argument synthesis.
        model: for ``llm``: the model name.
        base_url: for ``llm``: the API root (``http://127.0.0.1:8000/v1``).
        api_key_env: environment variable holding the API key.
        timeout: seconds per LLM request.
        cache_dir: cache directory for LLM answers (the config passes ``tools.cache_dir``).
        force: ask again even when an answer is cached.
    """

    artifact_key = "output_parameters"

    def __init__(
        self,
        *,
        strategy: str | Sequence[str] = "observe",
        engine: str | ToolEngine | EngineFactory | None = None,
        engine_options: Mapping[str, Any] | None = None,
        observe_unsafe: str | Sequence[str] = (),
        samples: int = 3,
        seed: int = 0,
        model: str | None = None,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60.0,
        cache_dir: str | PathLike[str] | None = None,
        force: bool = False,
    ) -> None:
        self.strategies = _check_strategies(strategy, engine, model, base_url)
        self.engine = engine
        self.engine_options = dict(engine_options or {})
        self.observe_unsafe = _patterns(observe_unsafe)
        self.samples = max(1, int(samples))
        self.seed = seed
        self.model, self.base_url = model, base_url
        self.api_key_env, self.timeout = api_key_env, timeout
        root = resolve_cache_dir(cache_dir)
        self.cache = root / "output_parameters" / stable_hash([model, base_url], size=16) if root else None
        self.force = force

    extra_config_keys = ("lm_config",)

    @classmethod
    def prepare_config(cls, settings: Mapping[str, Any]) -> dict[str, Any]:
        """Also accept the seed's ``lm_config`` block: the ``llm`` strategy with that model."""
        out = dict(settings)
        if "lm_config" in out:
            translated = lm_settings(out.pop("lm_config"))
            for key in ("model", "base_url", "api_key_env"):
                if key in translated:
                    if key in out:
                        raise ConfigError(
                            f"conflicting keys: lm_config and {key!r} both set the model's {key}"
                        )
                    out[key] = translated[key]
            out.setdefault("strategy", "llm")
        return out

    def enrich(self, registry: ToolRegistry) -> OutputParametersReport:
        """Fill the missing schemas and replace those tools in ``registry``."""
        report = OutputParametersReport()
        todo = [t for t in registry.tools() if not t.output_parameters]
        report.kept = len(registry) - len(todo)
        found: dict[int, tuple[dict[str, Any], str]] = {}
        reasons: dict[int, list[str]] = {i: [] for i in range(len(todo))}
        for strategy in self.strategies:
            pending = [i for i in range(len(todo)) if i not in found]
            if not pending:
                break
            run = self._observe if strategy == "observe" else self._ask
            for i, (schema, why) in zip(pending, run(registry, [todo[i] for i in pending]), strict=True):
                if schema is not None:
                    found[i] = (schema, strategy)
                else:
                    reasons[i].append(f"{strategy}: {why}")
        self._apply(registry, todo, found, reasons, report)
        return report

    def _apply(
        self,
        registry: ToolRegistry,
        todo: Sequence[Tool],
        found: Mapping[int, tuple[dict[str, Any], str]],
        reasons: Mapping[int, list[str]],
        report: OutputParametersReport,
    ) -> None:
        updated = []
        for i, tool in enumerate(todo):
            if i in found:
                schema, strategy = found[i]
                metadata = {**tool.metadata, "output_parameters_source": strategy}
                updated.append(dataclasses.replace(tool, output_parameters=schema, metadata=metadata))
                report.filled[tool.qualified_name] = strategy
            else:
                report.failed[tool.qualified_name] = "; ".join(reasons[i])
        if updated:
            registry.update_tools(updated)
        if report.failed:
            log.warning("output_parameters: no schema for %d tool(s)", len(report.failed))

    # ------------------------------------------------------------------ observe

    def _make_engine(self, registry: ToolRegistry) -> ToolEngine:
        engine = self.engine
        if isinstance(engine, ToolEngine):
            return engine
        if isinstance(engine, str):
            cls = get_tool_engine_class(engine)
            built = cls(registry, **self.engine_options)
        elif callable(engine):
            built = engine(registry)
        else:
            raise EnrichmentError("missing engine for the output_parameters 'observe' strategy. Set engine.")
        if not isinstance(built, ToolEngine):
            raise EnrichmentError(
                f"invalid engine for output_parameters: got {type(built).__name__}, not a ToolEngine. "
                "Pass an engine name, a ToolEngine, or a factory that returns one."
            )
        return built

    def _observe(
        self, registry: ToolRegistry, tools: Sequence[Tool]
    ) -> list[tuple[dict[str, Any] | None, str]]:
        refusals = [self._refusal(tool) for tool in tools]
        callable_ = [i for i, why in enumerate(refusals) if why is None]
        if not callable_:
            return [(None, str(why)) for why in refusals]
        engine = self._make_engine(registry)
        calls = [call for i in callable_ for call in self._calls(tools[i], i)]
        engine.setup(_SESSION)
        try:
            results = engine.execute(_SESSION, calls)
        finally:
            engine.teardown(_SESSION)
        found: list[tuple[dict[str, Any] | None, str]] = [(None, str(why)) for why in refusals]
        for n, i in enumerate(callable_):
            found[i] = self._schema_from(results[n * self.samples : (n + 1) * self.samples])
        return found

    def _refusal(self, tool: Tool) -> str | None:
        """Why ``tool`` may not be called to observe it (its method can change a server), or None."""
        method = http_method(tool)
        if method is None or method in OBSERVE_SAFE_METHODS:
            return None
        names = [tool.qualified_name, tool.metadata.get("operation_id")]
        if any(isinstance(n, str) and fnmatch.fnmatchcase(n, p) for n in names for p in self.observe_unsafe):
            return None
        return (
            f"not observed: {tool.qualified_name} sends {method}, which can change server state. "
            "Name it in observe_unsafe to call it anyway, or give it an output schema"
        )

    def _calls(self, tool: Tool, index: int) -> list[ToolCall]:
        rng = random.Random(stable_hash([self.seed, tool.qualified_name, tool.fingerprint]))
        validator = get_validator(tool.parameters, tool.fingerprint)
        calls = []
        for n in range(self.samples):
            arguments = synthesise_arguments(tool.parameters, rng)
            if not validator.is_valid(arguments):
                arguments = {k: v for k, v in arguments.items() if k in tool.parameters.get("required", [])}
            calls.append(ToolCall(tool.qualified_name, arguments, call_id=f"op_{index}_{n}"))
        return calls

    @staticmethod
    def _schema_from(results: Sequence[ToolResult]) -> tuple[dict[str, Any] | None, str]:
        values = [_decoded(r) for r in results if r.ok]
        if not values:
            errors = "; ".join(str(r.error) for r in results[:2])
            return None, f"every call failed ({errors})"
        schema = infer_schema(values)
        if "type" not in schema:
            return None, "the results have no type"
        return schema, ""

    # ------------------------------------------------------------------ llm

    def _ask(self, registry: ToolRegistry, tools: Sequence[Tool]) -> list[tuple[dict[str, Any] | None, str]]:
        return [self._ask_one(tool) for tool in tools]

    def _ask_one(self, tool: Tool) -> tuple[dict[str, Any] | None, str]:
        key = stable_hash([tool.qualified_name, tool.description, tool.parameters])
        cached = self._cached(key)
        if cached is not None:
            return cached, ""
        try:
            schema = self._request(tool)
        except EnrichmentError as exc:
            return None, str(exc)
        self._remember(key, schema)
        return schema, ""

    def _request(self, tool: Tool) -> dict[str, Any]:
        url = str(self.base_url).rstrip("/") + "/chat/completions"
        answer = post_json(
            url,
            {"model": self.model, "temperature": 0, "messages": _messages(tool)},
            api_key_env=self.api_key_env,
            timeout=self.timeout,
            error=EnrichmentError,
        )
        try:
            content = chat_content(answer)
        except ValueError as exc:
            raise EnrichmentError(f"unexpected answer from {url}: no choices[0].message.content.") from exc
        return _parse_schema(str(content), url)

    def _cached(self, key: str) -> dict[str, Any] | None:
        if self.cache is None or self.force:
            return None
        try:
            value = json.loads((self.cache / f"{key}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def _remember(self, key: str, schema: Mapping[str, Any]) -> None:
        if self.cache is None:
            return
        self.cache.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.cache, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(schema, handle)
        os.replace(tmp, Path(self.cache) / f"{key}.json")


def _patterns(value: str | Sequence[str]) -> tuple[str, ...]:
    patterns = [value] if isinstance(value, str) else list(value)
    if not all(isinstance(p, str) for p in patterns):
        raise ConfigError("invalid observe_unsafe for output_parameters: expected names or globs (strings)")
    return tuple(patterns)


def _check_strategies(
    strategy: str | Sequence[str], engine: Any, model: str | None, base_url: str | None
) -> list[str]:
    names = [strategy] if isinstance(strategy, str) else list(strategy)
    for name in names:
        if name not in _STRATEGIES:
            raise ConfigError(
                f"unknown strategy {name!r} for output_parameters: use "
                f"{' or '.join(_STRATEGIES)} (or a list of both)."
            )
    if "observe" in names and engine is None:
        raise ConfigError(
            "missing engine for the output_parameters 'observe' strategy: it calls tools through an engine. "
            "Set engine (an engine name), or use strategy: llm."
        )
    if "llm" in names and not (model and base_url):
        raise ConfigError(
            "missing model or base_url for the output_parameters 'llm' strategy. Set both keys."
        )
    return names


def _messages(tool: Tool) -> list[dict[str, str]]:
    spec = json.dumps(
        {"name": tool.name, "description": tool.description, "parameters": tool.parameters}, indent=1
    )
    return [
        {
            "role": "system",
            "content": "You write JSON Schemas (Draft 2020-12). "
            "Answer with one JSON object and nothing else.",
        },
        {
            "role": "user",
            "content": f"Write the JSON Schema of the result this tool returns, with a description per "
            f"property:\n{spec}",
        },
    ]


_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


def _parse_schema(content: str, url: str) -> dict[str, Any]:
    """The schema in a model's answer (code fences allowed), normalised and checked."""
    try:
        raw = decode_json(_FENCE.sub("", content.strip()), f"the answer of {url}")
    except ValueError as exc:
        raise EnrichmentError(f"unusable answer from {url}: not JSON ({exc}).") from exc
    except RESTCallError as exc:  # nested too deeply, or an integer too long to convert
        raise EnrichmentError(f"unusable answer from {url}: {exc}.") from exc
    if not isinstance(raw, dict) or not raw:
        raise EnrichmentError(f"unusable answer from {url}: expected a JSON Schema object.")
    schema, _ = normalise_parameters(raw)
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise EnrichmentError(f"unusable answer from {url}: invalid JSON Schema ({exc.message}).") from exc
    try:
        Tool("probe", "probe", output_parameters=schema)
    except DGTError as exc:
        raise EnrichmentError(f"unusable answer from {url}: {exc}") from exc
    return schema
