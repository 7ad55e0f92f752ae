"""The ``generation:`` block of a config, and the engines of ``tools.engines``.

::

    generation:
      seed: 7                    # --seed overrides
      count: 100                 # -n overrides
      output_dir: ../out/demo    # --out overrides; relative to the config file
      format: openai             # any registered format: openai, hf, anthropic, sharegpt... (--format)
      template_family: null      # with format hf: qwen | llama3 | mistral | hermes | granite ...
      layout: plain              # or arrow-safe: varying shapes as JSON text (--layout)
      check_template: null       # a chat template file every record must render in (--check-template)
      strict: false              # OpenAI strict-mode schemas in the records
      policy: {validate_results: warn}   # call policy of the job's engine (see engines)
      text: {type: template}     # or {type: llm, base_url: ..., model: ..., api_key_env: ...}
      distractors: 3             # tools offered beside the called ones (hard negatives first)
      no_call_rate: 0.1          # share of records where the right move is not to call a tool
      approval_rate: 0.7         # share of confirmation requests the user approves
      on_call_error: reject      # a record with a failed call: reject | keep (an error example)
      max_reject_rate: 0.5       # exit 1 when more records than this share are rejected
      record_time_budget: 120    # seconds one record may take
      scenarios:
        - name: chains
          weight: 2              # relative frequency (default 1)
          sampler: {type: tc/chain, k: 3, seed: 1}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fms_dgt.config import Config
from fms_dgt.core.tools.engines.base import POLICY_KEYS, CallPolicy, ToolEngine
from fms_dgt.core.tools.wire import FORMATS
from fms_dgt.errors import ConfigError
from fms_dgt.plugins import TOOL_ENGINES

if TYPE_CHECKING:
    from fms_dgt.core.tools.registry import ToolRegistry

__all__ = [
    "LAYOUTS",
    "GenerationConfig",
    "Scenario",
    "build_engines",
    "check_output_options",
    "parse_generation",
]

_GENERATION_KEYS = (
    "seed",
    "count",
    "output_dir",
    "format",
    "strict",
    "policy",
    "text",
    "scenarios",
    "record_time_budget",
    "distractors",
    "no_call_rate",
    "approval_rate",
    "on_call_error",
    "max_reject_rate",
    "template_family",
    "layout",
    "check_template",
)
_ON_CALL_ERROR = ("reject", "keep")
#: Record layouts: as the format writes them, or arrow-safe (shapes that vary as JSON text).
LAYOUTS = ("plain", "arrow-safe")
_SCENARIO_KEYS = ("name", "weight", "sampler")
_TEXT_KEYS = (
    "type",
    "base_url",
    "model",
    "api_key_env",
    "temperature",
    "request_timeout",
    "max_chars",
    "max_tokens",
    "check",
    "retries",
)


@dataclass(slots=True, kw_only=True)
class Scenario:
    """One kind of record: a sampler and how often to use it."""

    name: str
    sampler: str
    sampler_config: dict[str, Any]
    weight: float = 1.0


@dataclass(slots=True, kw_only=True)
class GenerationConfig:
    """The parsed ``generation:`` block."""

    seed: int = 0
    count: int = 10
    output_dir: Path = Path("out")
    format: str = "openai"
    strict: bool = False
    policy: CallPolicy = field(default_factory=CallPolicy)
    text: dict[str, Any] = field(default_factory=lambda: {"type": "template"})
    scenarios: list[Scenario] = field(default_factory=list)
    record_time_budget: float = 120.0
    distractors: int = 3
    no_call_rate: float = 0.1
    approval_rate: float = 0.7
    on_call_error: str = "reject"
    max_reject_rate: float = 0.5
    template_family: str | None = None
    layout: str = "plain"
    check_template: Path | None = None


def _error(message: str, config: Config, where: str) -> ConfigError:
    return ConfigError(message, path=config.label, yaml_path=where)


def _check_keys(block: Mapping[str, Any], allowed: tuple[str, ...], config: Config, where: str) -> None:
    for key in block:
        if key not in allowed:
            raise _error(
                f"unknown key {key!r}: allowed keys are {', '.join(allowed)}", config, f"{where}.{key}"
            )


def parse_generation(config: Config) -> GenerationConfig:
    """The validated ``generation:`` block (defaults when absent: one random scenario)."""
    block = config.data.get("generation") or {}
    if not isinstance(block, Mapping):
        raise _error("invalid generation block: expected a mapping", config, "generation")
    _check_keys(block, _GENERATION_KEYS, config, "generation")
    out = GenerationConfig(
        seed=_integer(block.get("seed", 0), config, "generation.seed"),
        count=_integer(block.get("count", 10), config, "generation.count"),
        output_dir=Path(config.resolve_path(str(block.get("output_dir", "out")))),
        format=str(block.get("format", "openai")),
        strict=bool(block.get("strict", False)),
        policy=_policy(block.get("policy") or {}, config),
        record_time_budget=_seconds(block.get("record_time_budget", 120.0), config),
        distractors=_integer(block.get("distractors", 3), config, "generation.distractors"),
        no_call_rate=_share(block.get("no_call_rate", 0.1), config, "generation.no_call_rate"),
        approval_rate=_share(block.get("approval_rate", 0.7), config, "generation.approval_rate"),
        on_call_error=_choice(block.get("on_call_error", "reject"), _ON_CALL_ERROR, config),
        max_reject_rate=_share(block.get("max_reject_rate", 0.5), config, "generation.max_reject_rate"),
        template_family=_optional_str(block.get("template_family"), config, "generation.template_family"),
        layout=str(block.get("layout", "plain")),
        check_template=_template_path(block.get("check_template"), config),
        text=_text(block.get("text") or {"type": "template"}, config),
        scenarios=_scenarios(block.get("scenarios"), config),
    )
    if out.format not in FORMATS:
        raise _error(
            f"unknown format {out.format!r}: use one of {', '.join(FORMATS)}", config, "generation.format"
        )
    try:
        check_output_options(out)
    except ConfigError as exc:
        raise _error(str(exc), config, "generation") from None
    return out


def check_output_options(settings: GenerationConfig) -> None:
    """The format, template family and layout go together.

    Raises:
        ConfigError: an unknown family or layout, or a family with a format other than ``hf``.
    """
    from fms_dgt.core.tools.wire.families import FAMILIES

    if settings.layout not in LAYOUTS:
        raise ConfigError(f"unknown layout {settings.layout!r}: use one of {', '.join(LAYOUTS)}")
    family = settings.template_family
    if family is None:
        return
    if family not in FAMILIES:
        raise ConfigError(f"unknown template family {family!r}: use one of {', '.join(FAMILIES)}")
    if settings.format != "hf":
        raise ConfigError(
            f"template family {family!r} with format {settings.format!r}: families adapt records in the "
            "hf layout, the one chat templates take. Use format hf"
        )


def _optional_str(value: Any, config: Config, where: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise _error(f"invalid value {value!r}: expected a name", config, where)


def _template_path(value: Any, config: Config) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _error(f"invalid value {value!r}: expected a file path", config, "generation.check_template")
    return Path(config.resolve_path(value))


def _seconds(value: Any, config: Config) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise _error(
            f"invalid value {value!r}: expected seconds > 0", config, "generation.record_time_budget"
        )
    return float(value)


def _share(value: Any, config: Config, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise _error(f"invalid value {value!r}: expected a share between 0 and 1", config, where)
    return float(value)


def _choice(value: Any, allowed: tuple[str, ...], config: Config) -> str:
    if value not in allowed:
        where = "generation.on_call_error"
        raise _error(f"invalid value {value!r}: use one of {', '.join(allowed)}", config, where)
    return str(value)


def _integer(value: Any, config: Config, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _error(f"invalid value {value!r}: expected a non-negative integer", config, where)
    return value


def _policy(block: Any, config: Config) -> CallPolicy:
    if not isinstance(block, Mapping):
        raise _error("invalid policy: expected a mapping", config, "generation.policy")
    _check_keys(block, POLICY_KEYS, config, "generation.policy")
    try:
        return CallPolicy(**block)
    except ConfigError as exc:
        raise _error(str(exc), config, "generation.policy") from exc


def _text(block: Any, config: Config) -> dict[str, Any]:
    if not isinstance(block, Mapping) or block.get("type") not in ("template", "llm"):
        raise _error(
            "invalid text: expected {type: template} or {type: llm, base_url, model}",
            config,
            "generation.text",
        )
    _check_keys(block, _TEXT_KEYS, config, "generation.text")
    if block["type"] == "llm" and not (block.get("base_url") and block.get("model")):
        raise _error("text type llm needs base_url and model", config, "generation.text")
    return dict(block)


def _scenarios(entries: Any, config: Config) -> list[Scenario]:
    if entries is None:
        return [Scenario(name="random", sampler="tc/random", sampler_config={"k": 2})]
    if not isinstance(entries, list) or not entries:
        raise _error("invalid scenarios: expected a non-empty list", config, "generation.scenarios")
    scenarios = []
    for index, entry in enumerate(entries):
        where = f"generation.scenarios[{index}]"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("sampler"), Mapping):
            raise _error("invalid scenario: expected {name, sampler: {type: ...}, weight}", config, where)
        _check_keys(entry, _SCENARIO_KEYS, config, where)
        sampler = dict(entry["sampler"])
        kind = sampler.pop("type", None)
        if not isinstance(kind, str):
            raise _error("missing sampler type (e.g. tc/chain)", config, f"{where}.sampler.type")
        weight = entry.get("weight", 1)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight <= 0:
            raise _error(f"invalid weight {weight!r}: expected a positive number", config, f"{where}.weight")
        scenarios.append(
            Scenario(
                name=str(entry.get("name", kind)), sampler=kind, sampler_config=sampler, weight=float(weight)
            )
        )
    return scenarios


def build_engines(config: Config, registry: ToolRegistry) -> dict[str, ToolEngine]:
    """The engines of ``tools.engines`` (name -> engine), each over ``registry``.

    An entry's policy keys (``timeout``, ``retries``, ``blocklist``...) form its call policy; the
    other keys are the engine's constructor arguments (a key both accept goes to both).
    """
    block = config.tools_block().get("engines") or {}
    if not isinstance(block, Mapping):
        raise _error(
            "invalid tools.engines: expected a mapping of name -> {type: ...}", config, "tools.engines"
        )
    engines: dict[str, ToolEngine] = {}
    for name, entry in block.items():
        engines[str(name)] = _engine(str(name), entry, config, registry)
    return engines


def _engine(name: str, entry: Any, config: Config, registry: ToolRegistry) -> ToolEngine:
    engine: ToolEngine = config.create(TOOL_ENGINES, entry, f"tools.engines.{name}", registry=registry)
    # A relative cache.path is the config's, and the default cache folder is named after the entry.
    engine.place_cache(name, base_dir=config.base_dir, cache_dir=config.cache_dir())
    return engine
