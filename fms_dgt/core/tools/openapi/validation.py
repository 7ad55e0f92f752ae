"""Checking a spec before its operations are converted.

:func:`check_root` is the quick structural check every load runs (a mapping, a supported version,
a ``paths`` object where the version needs one). :func:`validate_spec` is the full
``openapi-spec-validator`` check behind the loader's ``validate: true``; it is slow on large specs,
so it is opt-in, and the validator is imported only when it runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.request import url2pathname

from fms_dgt.core.tools.openapi.documents import DocumentStore, RefError, is_url
from fms_dgt.core.tools.openapi.operations import spec_version
from fms_dgt.errors import LoadError

__all__ = ["check_root", "validate_spec"]

_MAX_PROBLEMS = 20


def check_root(store: DocumentStore) -> bool:
    """Check the root document's shape; True when it has operations to convert.

    Raises:
        LoadError: the root is not a mapping, has no supported ``openapi``/``swagger`` version, or
            its ``paths`` is missing (2.0, 3.0) or not a mapping; with the JSON pointer.
    """
    root, source = store.root, store.source
    if not isinstance(root, dict):
        raise LoadError(
            f"not an OpenAPI document: the top level is a {type(root).__name__}, not a mapping. "
            "Point spec at an OpenAPI or Swagger file",
            source=source,
            pointer="",
        )
    version = spec_version(root)
    if version is None:
        raise _version_error(root, source)
    paths = root.get("paths")
    if paths is None and version in ("2.0", "3.0"):
        raise LoadError(
            f"invalid OpenAPI {version} document: 'paths' is missing. Add a paths object",
            source=source,
            pointer="/paths",
        )
    if paths is not None and not isinstance(paths, dict):
        raise LoadError(
            f"invalid OpenAPI document: 'paths' is a {type(paths).__name__}, not a mapping",
            source=source,
            pointer="/paths",
        )
    return bool(paths)


def _version_error(root: Mapping[str, Any], source: str) -> LoadError:
    if "openapi" in root or "swagger" in root:
        key = "openapi" if "openapi" in root else "swagger"
        return LoadError(
            f"unsupported OpenAPI version {root[key]!r}: supported are Swagger 2.0 and OpenAPI "
            "3.0, 3.1 and 3.2",
            source=source,
            pointer=f"/{key}",
        )
    return LoadError(
        "not an OpenAPI document: neither 'openapi' nor 'swagger' is set at the top level. Point "
        "spec at an OpenAPI or Swagger file",
        source=source,
        pointer="",
    )


def validate_spec(store: DocumentStore) -> None:
    """Full validation with ``openapi-spec-validator``; every problem becomes a :class:`LoadError`.

    The validator resolves ``$ref`` on its own, so it gets only handlers that obey the same
    policy as the loader (no network unless allowed, no files outside the spec's tree unless
    allowed).

    Raises:
        LoadError: the spec violates the OpenAPI specification (up to 20 problems, each with its
            JSON pointer), or a reference was refused or could not be read.
    """
    import openapi_spec_validator as osv

    classes = {
        "2.0": osv.OpenAPIV2SpecValidator,
        "3.0": osv.OpenAPIV30SpecValidator,
        "3.1": osv.OpenAPIV31SpecValidator,
        "3.2": osv.OpenAPIV32SpecValidator,
    }
    base = classes[spec_version(store.root) or "3.0"]
    guarded = type(f"Guarded{base.__name__}", (base,), {"resolver_handlers": _handlers(base, store)})
    base_uri = store.root_uri if is_url(store.root_uri) else Path(store.root_uri).as_uri()
    try:
        errors = list(guarded(_string_keys(store.root), base_uri=base_uri).iter_errors())
    except Exception as exc:  # the validator raises its own and referencing errors
        why = _refusal(exc) or f"{type(exc).__name__}: {exc}"
        raise LoadError(
            f"OpenAPI validation failed: {why}. Fix the spec or set validate: false", source=store.source
        ) from exc
    problems = [_problem(e, store.source) for e in errors[:_MAX_PROBLEMS]]
    if problems:
        raise LoadError.collect(problems, store.source)


def _handlers(validator: Any, store: DocumentStore) -> dict[str, Any]:
    handlers = dict(validator.resolver_handlers)
    if not store.allow_remote_refs:
        handlers = {k: v for k, v in handlers.items() if k == "file"}
    if "file" in handlers:
        handlers["file"] = _FileGuard(handlers["file"], store)
    return handlers


def _string_keys(node: Any) -> Any:
    """A copy with every mapping key a string: YAML reads unquoted status codes as integers,
    which the validator cannot handle although the spec means the same thing."""
    if isinstance(node, dict):
        return {str(k): _string_keys(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_string_keys(v) for v in node]
    return node


def _refusal(exc: BaseException | None) -> str | None:
    """The loader's own reason when a guarded handler refused a reference somewhere in the chain."""
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, RefError):
            return exc.reason
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return None


class _FileGuard:
    """A ``file:`` resolver handler that refuses paths the loader's policy refuses."""

    def __init__(self, inner: Any, store: DocumentStore) -> None:
        self.inner = inner
        self.store = store

    def __call__(self, uri: str) -> Any:
        path = url2pathname(urlsplit(uri).path)
        self.store.target(path, self.store.root_uri)  # raises RefError when refused
        return self.inner(uri)


def _problem(error: Any, source: str) -> LoadError:
    path = getattr(error, "path", None) or ()
    pointer = "".join(f"/{str(p).replace('~', '~0').replace('/', '~1')}" for p in path)
    message = str(getattr(error, "message", error))
    # With jsonschema-rs installed the validator's messages go on with the failing keyword and the
    # instance over several lines; the first line says what is wrong, the pointer says where.
    first_line = message.split("\n", 1)[0]
    return LoadError(f"invalid OpenAPI document: {first_line}", source=source, pointer=pointer)
