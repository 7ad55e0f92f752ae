"""OpenAPI 3 response links: the spec's own word on which response value feeds which operation.

A Link Object in a response (``responses.200.links.GetUser``) names a target operation, by
``operationId`` or by ``operationRef`` (a JSON reference to the operation), and maps the target's
parameters to *runtime expressions*: ``"id": "$response.body#/user/id"`` says that the ``user.id``
of this response is the ``id`` the target takes. The ``dataflow`` enrichment reads these as edges
the spec's author drew (:mod:`fms_dgt.core.tools.enrichments._dataflow_links`).

:func:`read_links` keeps, per link, the target and the parameters whose expression reads the
response body (``$response.body#/pointer``; ``""`` is the whole body), as
``{"name", "operation_id" | "operation_ref", "parameters": {name: pointer}}``. Everything else a
link may say (``$request.path.row``: a value of this call's own request, ``$response.header.X``,
constants, ``requestBody``, ``server``) is no response value and is left out with a note. A
``$ref`` to ``components/links`` is followed under the loader's reference policy; an
``operationRef`` into another document is never read, only noted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fms_dgt.core.tools.openapi.documents import DocumentStore, shown_ref
from fms_dgt.errors import RefError

__all__ = ["MAX_LINKS", "MAX_LINK_PARAMETERS", "read_links"]

#: At most this many links of one response are read.
MAX_LINKS = 50
#: At most this many parameters of one link are read.
MAX_LINK_PARAMETERS = 50
#: Longest runtime expression read (a JSON pointer into a response is short).
_MAX_EXPRESSION = 1000
_BODY = "$response.body"


def read_links(
    store: DocumentStore, response: Mapping[str, Any], uri: str
) -> tuple[list[dict[str, Any]], list[str]]:
    """The usable links of one response object (read in document ``uri``), and notes on what was left out."""
    raw = response.get("links")
    if raw is None:
        return [], []
    if not isinstance(raw, dict):
        return [], [f"links is a {type(raw).__name__}, not a map of links: ignored"]
    links: list[dict[str, Any]] = []
    notes: list[str] = []
    if len(raw) > MAX_LINKS:
        notes.append(f"links: {len(raw)} links, only the first {MAX_LINKS} are read")
    for name, node in list(raw.items())[:MAX_LINKS]:
        shown = str(name)[:100]
        try:
            link, where = _link_object(store, node, uri)
        except RefError as exc:
            notes.append(f"links.{shown}: {exc.reason}: ignored")
            continue
        if link is None:
            notes.append(f"links.{shown} is not a Link Object: ignored")
            continue
        target, problem = _target(store, link, where)
        if target is None:
            notes.append(f"links.{shown}: {problem}: ignored")
            continue
        parameters, skipped = _parameters(link.get("parameters"))
        notes.extend(f"links.{shown}.parameters.{p}: {why}" for p, why in skipped)
        if parameters:
            links.append({"name": shown, **target, "parameters": parameters})
        elif not skipped:
            notes.append(f"links.{shown}: no parameter takes a value of the response body: no dataflow edge")
    return links, notes


def _link_object(store: DocumentStore, node: Any, uri: str) -> tuple[dict[str, Any] | None, str]:
    """The Link Object (a ``$ref`` followed) and the document it was read in."""
    if isinstance(node, dict) and isinstance(node.get("$ref"), str):
        target, node = store.resolve(node["$ref"], uri)
        uri = target.uri
    return (node if isinstance(node, dict) else None), uri


def _target(store: DocumentStore, link: Mapping[str, Any], uri: str) -> tuple[dict[str, str] | None, str]:
    """``{"operation_id": ...}`` or ``{"operation_ref": pointer}`` (into the root document), or why not."""
    op_id = link.get("operationId")
    if op_id is not None and not isinstance(op_id, str):
        return None, f"operationId is a {type(op_id).__name__}, not a string"
    if isinstance(op_id, str) and op_id.strip():
        if len(op_id) > _MAX_EXPRESSION:
            return None, f"operationId longer than {_MAX_EXPRESSION} characters"
        return {"operation_id": op_id.strip()}, ""
    ref = link.get("operationRef")
    if not isinstance(ref, str) or not ref:
        return None, "neither operationId nor operationRef names the target operation"
    if len(ref) > _MAX_EXPRESSION:
        return None, f"operationRef longer than {_MAX_EXPRESSION} characters"
    try:
        target = store.target(ref, uri)
    except RefError as exc:
        return None, exc.reason
    if target.uri != store.root_uri or not target.pointer.startswith("/paths/"):
        return None, f"operationRef {shown_ref(ref)!r} is not an operation of this document (not followed)"
    return {"operation_ref": target.pointer}, ""


def _parameters(raw: Any) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The parameters that take a value of the response body, as JSON pointers, and the others."""
    if not isinstance(raw, dict):
        return {}, []
    kept: dict[str, str] = {}
    skipped: list[tuple[str, str]] = []
    for name, expression in list(raw.items())[:MAX_LINK_PARAMETERS]:
        shown = repr(str(name)[:100])[1:-1]
        pointer = _body_pointer(expression)
        if _control(str(name)) or len(str(name)) > 200:
            skipped.append((shown, "a name with control characters or over 200 characters: ignored"))
        elif pointer is None:
            text = repr(expression)[:100]
            skipped.append((shown, f"{text} is no value of the response body: not a dataflow edge"))
        else:
            kept[str(name)] = pointer
    return kept, skipped


def _body_pointer(expression: Any) -> str | None:
    """The JSON pointer of ``$response.body#/a/b`` (``""`` for the whole body), else None."""
    if not isinstance(expression, str) or len(expression) > _MAX_EXPRESSION:
        return None
    text = expression.strip()
    if text == _BODY:
        return ""
    if not text.startswith(_BODY + "#"):
        return None
    pointer = text[len(_BODY) + 1 :]
    if pointer and not pointer.startswith("/"):
        return None
    return None if _control(pointer) else pointer


def _control(text: str) -> bool:
    """Whether ``text`` holds a control character (C0, DEL or C1)."""
    return any(ord(c) < 32 or 127 <= ord(c) < 160 for c in text)
