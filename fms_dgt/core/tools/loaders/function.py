"""The ``function`` loader: Python callables as tools, with schemas from their signatures.

Register callables by qualified name, in code or in the config::

    from fms_dgt.core.tools.loaders.function import register_function

    @register_function(namespace="math")
    def add(a: float, b: float = 0.0) -> float:
        \"\"\"Add two numbers.

        Args:
            a: first addend.
            b: second addend.
        \"\"\"
        return a + b

or, in YAML, ``{type: function, namespace: math, functions: ["my_pkg.math:add"]}`` under
``tools.registry``. When no tool definition is given, the tool's schema is taken from the
signature (type hints, defaults, ``Literal`` enums, ``Optional``) and its descriptions from the
Google-style docstring; the return annotation becomes ``output_parameters``.
"""

from __future__ import annotations

import importlib
import inspect
import re
import threading
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Literal, Union, get_args, get_origin

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.loaders.base import ToolLoader
from fms_dgt.errors import ConfigError, LoadError
from fms_dgt.plugins import register_tool_loader

__all__ = [
    "FunctionToolLoader",
    "annotation_schema",
    "clear_functions",
    "get_function",
    "import_callable",
    "register_function",
    "registered_tools",
    "tool_from_function",
]

_FUNCTIONS: dict[str, Callable[..., Any]] = {}
_FUNCTIONS_LOCK = threading.Lock()


def register_function(
    fn: Callable[..., Any] | None = None, *, name: str | None = None, namespace: str = "functions"
) -> Any:
    """Register ``fn`` as ``namespace::name`` (usable as a decorator, with or without arguments)."""

    def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
        qualified = f"{namespace}::{name or func.__name__}"
        with _FUNCTIONS_LOCK:
            _FUNCTIONS[qualified] = func
        return func

    return decorator(fn) if fn is not None else decorator


def get_function(qualified_name: str) -> Callable[..., Any] | None:
    """The callable registered under a qualified name, or None."""
    return _FUNCTIONS.get(qualified_name)


def clear_functions() -> None:
    """Forget every registered function (for tests)."""
    with _FUNCTIONS_LOCK:
        _FUNCTIONS.clear()


def registered_tools(namespace: str | None = None) -> list[Tool]:
    """Tools for every registered function (optionally of one namespace)."""
    tools = []
    for qualified, fn in sorted(_FUNCTIONS.items()):
        ns, _, name = qualified.partition("::")
        if namespace is None or ns == namespace:
            tools.append(tool_from_function(fn, namespace=ns, name=name))
    return tools


# ---------------------------------------------------------------- schemas from signatures

_SIMPLE = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    dict: "object",
    list: "array",
    tuple: "array",
    set: "array",
    type(None): "null",
}


def annotation_schema(annotation: Any) -> dict[str, Any]:
    """JSON Schema of a type annotation (``{}`` when it cannot be expressed)."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return {}
    if annotation in _SIMPLE:
        return {"type": _SIMPLE[annotation]}
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Literal:
        return {"enum": list(args)}
    if origin in (Union, types.UnionType):
        return _union_schema(args)
    if origin in (list, set, tuple, Sequence) and args:
        return {"type": "array", "items": annotation_schema(args[0])}
    if origin in (dict, Mapping) and len(args) == 2:
        return {"type": "object", "additionalProperties": annotation_schema(args[1])}
    if origin is not None and origin in _SIMPLE:
        return {"type": _SIMPLE[origin]}
    return {}


def _union_schema(args: tuple[Any, ...]) -> dict[str, Any]:
    parts = [annotation_schema(a) for a in args]
    kinds = [p.get("type") for p in parts]
    if all(isinstance(k, str) for k in kinds) and all(len(p) == 1 for p in parts):
        return {"type": list(dict.fromkeys(kinds))}
    return {"anyOf": parts} if all(parts) else {}


_ARG_LINE = re.compile(r"^\s{2,}(\w+)(?:\s*\([^)]*\))?:\s*(.+)$")


def _docstring_parts(fn: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    doc = inspect.getdoc(fn) or ""
    summary = doc.split("\n\n", 1)[0].strip()
    args: dict[str, str] = {}
    in_args = False
    for line in doc.splitlines():
        if line.strip() in ("Args:", "Arguments:", "Parameters:"):
            in_args = True
        elif in_args and line and not line[0].isspace():
            in_args = False
        elif in_args and (match := _ARG_LINE.match(line)):
            args[match.group(1)] = match.group(2).strip()
    return summary, args


def _output_schema(annotation: Any) -> tuple[dict[str, Any], bool]:
    """The output schema of a return annotation; non-object results are wrapped as ``result``."""
    schema = annotation_schema(annotation)
    if not schema or schema.get("type") == "object":
        return schema, False
    return {"type": "object", "properties": {"result": schema}, "required": ["result"]}, True


def tool_from_function(fn: Callable[..., Any], *, namespace: str, name: str | None = None) -> Tool:
    """A :class:`Tool` whose schemas come from ``fn``'s signature and docstring."""
    signature = inspect.signature(fn)
    hints = typing.get_type_hints(fn)
    summary, arg_docs = _docstring_parts(fn)
    properties: dict[str, Any] = {}
    required = []
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        schema = annotation_schema(hints.get(param.name, param.annotation))
        if param.name in arg_docs:
            schema["description"] = arg_docs[param.name]
        if param.default is param.empty:
            required.append(param.name)
        elif _json_like(param.default):
            schema["default"] = param.default
        properties[param.name] = schema
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    output, wraps = _output_schema(hints.get("return", inspect.Parameter.empty))
    module = getattr(fn, "__module__", "") or ""
    return Tool(
        name or fn.__name__,
        namespace,
        description=summary,
        parameters=parameters,
        output_parameters=output,
        metadata={
            "kind": "function",
            "callable": f"{module}:{fn.__qualname__}",
            "wraps_result": wraps,
            "source": f"function {module}:{fn.__qualname__}",
        },
    )


def _json_like(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool, list, dict))


def import_callable(path: str) -> Callable[..., Any]:
    """``module:attribute`` (or ``module.attribute``) imported.

    Raises:
        LoadError: the module or attribute does not exist or is not callable.
    """
    module_name, sep, attr = path.partition(":")
    if not sep:
        module_name, _, attr = path.rpartition(".")
    try:
        target: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError, ValueError) as exc:
        raise LoadError(f"cannot import function {path!r}: {exc}. Use 'package.module:function'.") from exc
    if not callable(target):
        raise LoadError(f"cannot use {path!r} as a tool: it is not callable.")
    return typing.cast(Callable[..., Any], target)


@register_tool_loader("function")
class FunctionToolLoader(ToolLoader):
    """Tools from Python callables named ``module:function`` (schemas from their signatures).

    Args:
        functions: import paths; empty means every function registered with
            :func:`register_function` in ``namespace``.
        namespace: the tools' namespace.
    """

    path_keys: ClassVar[tuple[str, ...]] = ()

    def __init__(self, functions: Sequence[str] = (), *, namespace: str = "functions") -> None:
        if isinstance(functions, str):
            raise ConfigError("invalid functions: expected a list of 'module:function' paths")
        self.functions = list(functions)
        super().__init__(namespace=namespace)

    def describe(self) -> str:
        return f"functions {', '.join(self.functions) or '(registered)'}"

    def load(self) -> list[Tool]:
        """Import each function and build its tool."""
        self._new_report()
        namespace = self.namespace or "functions"
        if not self.functions:
            return registered_tools(namespace)
        tools = []
        for path in self.functions:
            fn = import_callable(path)
            register_function(fn, namespace=namespace)
            tools.append(tool_from_function(fn, namespace=namespace))
        self.report.tools = len(tools)
        return tools
