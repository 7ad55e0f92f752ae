"""Compiled validators, cached by schema fingerprint.

:func:`get_validator` returns a :class:`CompiledValidator` cached by fingerprint.

* ``is_valid`` runs a `jsonschema-rs <https://pypi.org/project/jsonschema-rs/>`_ Draft 2020-12
  validator: ``format`` is an annotation (never asserted), booleans are not numbers, ``1.0`` is an
  integer, and nothing is ever fetched (``offline``): only references inside the schema resolve.
* A schema jsonschema-rs cannot compile although it is valid Draft 2020-12 (a Python regular
  expression that is not ECMA-262, such as ``\\Z``) is validated by ``jsonschema`` instead.
* ``explain`` says why an instance does not validate with ``jsonschema``'s ``best_match``.
* A schema neither can use (invalid, or a ``$ref`` that does not resolve inside it) raises
  :class:`InvalidSchemaError`; the failure is cached too, so it is not recompiled per call.

Both libraries are imported on first use, so ``import fms_dgt`` does not load them.
"""

from __future__ import annotations

import bisect
import functools
import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import unquote

from fms_dgt.core.tools.schema.fingerprint import fingerprint
from fms_dgt.errors import InvalidSchemaError

if TYPE_CHECKING:
    import jsonschema_rs
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError
    from referencing import Registry

__all__ = ["MAX_RECURSIVE_DEPTH", "CompiledValidator", "InvalidSchemaError", "get_validator"]

#: Deepest instance a schema with ``$ref`` is validated by jsonschema-rs. A reference lets
#: validation follow the instance down without bound, and jsonschema-rs recurses on the native
#: stack, so a deeper instance goes to ``jsonschema``, which stops at Python's recursion limit.
MAX_RECURSIVE_DEPTH = 256

_LOCAL_ONLY = (
    "only references inside the schema ('#/...') resolve; remote and file references are never "
    "fetched. Copy the referenced schema under $defs and refer to it as '#/$defs/<name>'"
)


class CompiledValidator:
    """A reusable validator for one schema.

    Raises:
        InvalidSchemaError: (on construction) the schema is not valid Draft 2020-12, or a ``$ref``
            in it does not resolve inside the schema.
    """

    __slots__ = ("_fast", "_full", "_recursive", "schema")

    def __init__(self, schema: Mapping[str, Any] | bool):
        self.schema, self._fast = _compile(schema)
        self._full: Draft202012Validator | None = None
        self._recursive = _may_recurse(self.schema)

    def __reduce__(self) -> tuple[type[CompiledValidator], tuple[Any]]:
        # A jsonschema-rs validator cannot be pickled or copied: rebuild it from the schema, so a
        # Tool holding its output validator still deep-copies and pickles.
        return CompiledValidator, (self.schema,)

    @property
    def backend(self) -> str:
        """``"jsonschema-rs"``, or ``"jsonschema"`` for a schema jsonschema-rs cannot compile."""
        return "jsonschema" if self._fast is None else "jsonschema-rs"

    @property
    def full(self) -> Draft202012Validator:
        """The ``jsonschema`` validator (built on first use; it never fetches a reference)."""
        if self._full is None:
            from jsonschema import Draft202012Validator

            self._full = Draft202012Validator(self.schema, registry=_local_registry())
        return self._full

    def is_valid(self, instance: Any) -> bool:
        """True when ``instance`` validates.

        Tuples count as arrays and any ``Mapping`` as an object, as in
        :func:`~fms_dgt.core.tools.schema.normalise.json_type`. An instance nested too deeply to
        validate is reported invalid.
        """
        fast = self._fast
        if fast is not None and not (self._recursive and _deeper_than(instance, MAX_RECURSIVE_DEPTH)):
            try:
                return fast.is_valid(instance)
            except ValueError:
                pass  # a value jsonschema-rs does not take (a Mapping that is not a dict, a set...)
        return self._slow_is_valid(instance)

    def explain(self, instance: Any) -> str | None:
        """Why ``instance`` does not validate (the best match), or None when it does."""
        found = self.locate(instance)
        if found is None:
            return None
        message, pointer = found
        return f"{message} (at {pointer})" if pointer else message

    def locate(self, instance: Any) -> tuple[str, str] | None:
        """The best-match failure as ``(message, JSON pointer of the offending value)``, or None."""
        if self.is_valid(instance):
            return None
        try:
            error = self._best_match(instance)
        except RecursionError:
            return "the value is nested too deeply to validate", ""
        if error is not None:
            pointer = "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in error.absolute_path)
            return error.message, pointer
        # The two libraries disagree (a regular expression Python and ECMA-262 read differently):
        # the reason comes from the one that rejected the value.
        return self._fast_reason(instance) or "the value does not validate", ""

    def _slow_is_valid(self, instance: Any) -> bool:
        from referencing.exceptions import Unresolvable

        try:
            return bool(self.full.is_valid(_plain(instance)))
        except RecursionError:
            return False
        except Unresolvable as exc:
            _unresolvable(exc)

    def _best_match(self, instance: Any) -> ValidationError | None:
        from jsonschema.exceptions import best_match
        from referencing.exceptions import Unresolvable

        try:
            error: ValidationError | None = best_match(self.full.iter_errors(_plain(instance)))
        except Unresolvable as exc:
            _unresolvable(exc)
        return error

    def _fast_reason(self, instance: Any) -> str | None:
        if self._fast is None:
            return None
        try:
            error = next(iter(self._fast.iter_errors(instance)), None)
        except ValueError:
            return None
        if error is None:
            return None
        where = "/".join(str(p) for p in error.instance_path)
        message = error.message.split("\n", 1)[0]
        return f"{message} (at /{where})" if where else message


def _compile(schema: Mapping[str, Any] | bool) -> tuple[Any, jsonschema_rs.Validator | None]:
    """The schema to validate with and its jsonschema-rs validator (None: ``jsonschema`` only)."""
    fast = _compile_fast(schema)
    if fast is not None:
        return schema, fast
    # jsonschema-rs takes no Mapping but a dict, and jsonschema reads tuples as no array.
    plain = _plain(schema)
    fast = _compile_fast(plain)
    if fast is None:
        _check_schema(plain)
    return plain, fast


def _compile_fast(schema: Mapping[str, Any] | bool) -> jsonschema_rs.Validator | None:
    """The jsonschema-rs validator, or None when it cannot compile ``schema``."""
    import jsonschema_rs

    try:
        return jsonschema_rs.Draft202012Validator(
            schema,  # type: ignore[arg-type]  # any Mapping is accepted; the stub says dict
            validate_formats=False,
            ignore_unknown_formats=True,
            offline=True,
        )
    except jsonschema_rs.ValidationError as exc:
        if type(exc.kind).__name__ == "Referencing":
            raise InvalidSchemaError(exc.message.split("\n", 1)[0], fix=_LOCAL_ONLY) from exc
    except (ValueError, TypeError):
        pass  # a Python value in the schema jsonschema-rs does not take, or nesting past its limit
    return None


def _check_schema(schema: Mapping[str, Any] | bool) -> None:
    """Raise :class:`InvalidSchemaError` unless ``jsonschema`` can use ``schema``."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:  # already the best match among the schema's problems
        pointer = "".join(f"/{_escape(str(p))}" for p in exc.absolute_path)
        raise InvalidSchemaError(exc.message, pointer=pointer) from exc
    except RecursionError as exc:
        raise InvalidSchemaError("the schema is nested too deeply to compile") from exc


def _unresolvable(exc: Exception) -> NoReturn:
    raise InvalidSchemaError(f"$ref does not resolve: {exc}", fix=_LOCAL_ONLY) from exc


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


@functools.cache
def _local_registry() -> Registry:
    """A ``referencing`` registry that refuses every retrieval (the meta-schemas stay known)."""
    from referencing import Registry

    return Registry(retrieve=_refuse)  # type: ignore[call-arg]  # attrs fields mypy does not see


def _refuse(uri: str) -> NoReturn:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # attrs fields mypy does not see


def _may_recurse(schema: Any) -> bool:
    """True when following ``$ref`` can lead back to the same ``$ref`` (validation may then go as
    deep as the instance does). Anything but a plain ``#/...`` pointer counts as recursive."""
    targets = _local_targets(schema)
    if targets is None:
        return True
    ordered = sorted(targets)
    state: dict[str, int] = {}  # 1: on the current path, 2: explored without finding a cycle
    try:
        return any(_cycle_from(ref, targets, ordered, state) for ref in ordered)
    except RecursionError:  # a chain of references longer than Python's stack: assume the worst
        return True


def _local_targets(schema: Any) -> dict[str, str] | None:
    """``{location of a $ref: the pointer it targets}``, or None when a reference is not a plain
    pointer into this document (an anchor, a relative URI, ``$dynamicRef``, a nested ``$id``)."""
    targets: dict[str, str] = {}
    stack: list[tuple[Any, str]] = [(schema, "")]
    while stack:
        node, location = stack.pop()
        if isinstance(node, list):
            stack.extend((item, f"{location}/{i}") for i, item in enumerate(node))
            continue
        if not isinstance(node, Mapping):
            continue
        if "$dynamicRef" in node or (location and "$id" in node):
            return None
        ref = node.get("$ref")
        if ref is not None:
            if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
                return None
            targets[location] = unquote(ref[1:])
        stack.extend((value, f"{location}/{_escape(str(key))}") for key, value in node.items())
    return targets


def _cycle_from(ref: str, targets: dict[str, str], ordered: list[str], state: dict[str, int]) -> bool:
    """Depth-first search over "the target of this $ref holds that $ref"."""
    if state.get(ref) == 2:
        return False
    state[ref] = 1
    for inner in _refs_inside(targets[ref], ordered):
        if state.get(inner) == 1 or _cycle_from(inner, targets, ordered, state):
            return True
    state[ref] = 2
    return False


def _refs_inside(pointer: str, ordered: list[str]) -> Iterator[str]:
    """The ``$ref`` locations at or below ``pointer`` (``ordered`` is sorted, so they are adjacent)."""
    for index in range(bisect.bisect_left(ordered, pointer), len(ordered)):
        location = ordered[index]
        if not location.startswith(pointer):
            return
        if len(location) == len(pointer) or location[len(pointer)] == "/":
            yield location


def _deeper_than(value: Any, limit: int) -> bool:
    """True when ``value`` nests more than ``limit`` arrays or objects deep."""
    if not isinstance(value, (dict, list, tuple, Mapping)):
        return False
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        for child in node.values() if isinstance(node, Mapping) else node:
            if isinstance(child, (dict, list, tuple, Mapping)):
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False


def _plain(value: Any) -> Any:
    """``value`` with every Mapping made a dict and every tuple a list (what ``jsonschema`` reads)."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


_VALIDATORS: dict[str, CompiledValidator | InvalidSchemaError] = {}
_VALIDATORS_LOCK = threading.Lock()


def get_validator(schema: Mapping[str, Any], fp: str | None = None) -> CompiledValidator:
    """The cached :class:`CompiledValidator` of ``schema`` (keyed by its fingerprint).

    Raises:
        InvalidSchemaError: the schema cannot be compiled (see :class:`CompiledValidator`).
    """
    key = fp or fingerprint(schema)
    cached = _VALIDATORS.get(key)
    if cached is None:
        with _VALIDATORS_LOCK:
            cached = _VALIDATORS.get(key)
            if cached is None:
                cached = _compile_or_error(schema)
                _VALIDATORS[key] = cached
    if isinstance(cached, InvalidSchemaError):
        raise InvalidSchemaError(cached.reason, pointer=cached.pointer, fix=cached.fix)
    return cached


def _compile_or_error(schema: Mapping[str, Any]) -> CompiledValidator | InvalidSchemaError:
    try:
        return CompiledValidator(schema)
    except InvalidSchemaError as exc:
        return exc
