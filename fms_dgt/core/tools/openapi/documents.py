"""Reading OpenAPI documents and resolving ``$ref`` between them, with a security policy.

A :class:`DocumentStore` owns every document of one spec: the root (a local file or an http(s) URL)
and the files or URLs its ``$ref`` values point at, each parsed once. :meth:`DocumentStore.resolve`
turns a reference into a :class:`Target` (the document and the JSON pointer inside it) and the node
there, following chains of pure ``$ref`` nodes with cycle detection.

Policy: a network ``$ref`` (or any relative ``$ref`` inside a document fetched by URL) is refused
unless ``allow_remote_refs``; a file ``$ref`` may not leave the root document's directory tree
unless ``allow_outside_refs``. A URL fetch has one deadline (``timeout``) for the whole download
and a size cap counted on the decompressed body while it streams. Credentials in a spec URL (its
userinfo, query values of parameters named like ``key`` or ``token``) are registered with
:mod:`fms_dgt.secrets`, and URLs are shown everywhere by :func:`display_url` (no userinfo, query
values masked). JSON pointers are read strictly (RFC 6901): a bad ``~`` escape or an index that
is not a plain decimal number is a :class:`RefError` naming the reference.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urldefrag, urljoin, urlsplit

from fms_dgt.core.tools.transport import display_url, is_sensitive_name, is_url, public_url
from fms_dgt.errors import CircularRefError, LoadError, RefError
from fms_dgt.io import check_text, escapes_surrogate, parse_yaml_text
from fms_dgt.secrets import redact, register_secret

__all__ = [
    "CircularRefError",
    "DocumentStore",
    "RefError",
    "Target",
    "display_url",
    "escape_pointer",
    "is_url",
    "parse_text",
    "public_url",
    "register_url_secrets",
    "shown_ref",
    "unescape_pointer",
]

MAX_REF_CHAIN = 64
MAX_REDIRECTS = 5
#: Longest array index a JSON pointer may hold (more digits cannot index any real list).
_MAX_INDEX_DIGITS = 18
_BAD_ESCAPE = re.compile(r"~(?![01])")


@dataclass(frozen=True, slots=True)
class Target:
    """Where a resolved reference points: a document URI and a JSON pointer inside it."""

    uri: str
    pointer: str

    @property
    def ref(self) -> str:
        """The absolute reference ``uri#pointer``."""
        return f"{self.uri}#{self.pointer}"


def register_url_secrets(url: str) -> None:
    """Hide the credentials a URL carries at every exit: its userinfo and the values of query
    parameters named like credentials (``key``, ``token``, ``secret``...)."""
    if not is_url(url):
        return
    parts = urlsplit(url)
    userinfo = parts.netloc.rpartition("@")[0]
    for secret in userinfo.split(":") if userinfo else ():
        register_secret(unquote(secret))
    for name, value in parse_qsl(parts.query, keep_blank_values=False):
        if is_sensitive_name(name):
            register_secret(value)


def shown_ref(ref: str) -> str:
    """A reference as a message may show it: no userinfo, query values as ``***``
    (:func:`~fms_dgt.core.tools.transport.display_url`), even when it is no valid URL; at most
    200 characters."""
    try:
        return display_url(ref)[:200]
    except ValueError:  # an invalid URL (``http://[::1/x``): mask by pattern
        return _QUERY_VALUE.sub("=***", _USERINFO.sub("//", ref))[:200]


_USERINFO = re.compile(r"//[^/?#]*@")
_QUERY_VALUE = re.compile(r"=[^&#]*")


def escape_pointer(token: str) -> str:
    """Escape one JSON pointer token (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")


def unescape_pointer(token: str) -> str:
    """One JSON pointer token as the name it stands for (``~1`` is ``/``, ``~0`` is ``~``)."""
    return token.replace("~1", "/").replace("~0", "~")


class DocumentStore:
    """Every document of one spec, parsed once, plus reference resolution.

    Args:
        root: path or http(s) URL of the root document.
        allow_remote_refs: follow ``$ref`` values that need the network.
        allow_outside_refs: follow file ``$ref`` values that leave the root's directory tree.
        timeout: seconds allowed for one URL fetch.
        max_bytes: largest document accepted from a URL.
    """

    def __init__(
        self,
        root: str,
        *,
        allow_remote_refs: bool = False,
        allow_outside_refs: bool = False,
        timeout: float = 30.0,
        max_bytes: int = 50_000_000,
    ) -> None:
        register_url_secrets(root)
        self.root_uri = root if is_url(root) else str(Path(root).resolve())
        self.source = display_url(root)
        self.allow_remote_refs = allow_remote_refs
        self.allow_outside_refs = allow_outside_refs
        self.timeout = timeout
        self.max_bytes = max_bytes
        self._root_dir = None if is_url(root) else Path(self.root_uri).parent
        self._docs: dict[str, Any] = {}
        self._resolved: dict[tuple[str, str], tuple[Target, Any]] = {}
        self._ids: dict[str, tuple[dict[str, str], dict[str, str]]] = {}

    @property
    def root(self) -> Any:
        """The parsed root document."""
        return self.document(self.root_uri)

    def document(self, uri: str) -> Any:
        """The parsed document at ``uri`` (read on first use)."""
        doc = self._docs.get(uri)
        if doc is None and uri not in self._docs:
            doc = self._read(uri)
            self._docs[uri] = doc
        return doc

    def _read(self, uri: str) -> Any:
        text = _fetch(uri, self.timeout, self.max_bytes) if is_url(uri) else _read_file(uri)
        return parse_text(text, uri)

    def resolve(self, ref: str, base: str) -> tuple[Target, Any]:
        """Follow ``ref`` (relative to document ``base``) to the first node that is not a pure ``$ref``.

        Raises:
            RefError: the target is missing, refused, unreadable, or the chain is a cycle.
        """
        key = (ref, base)
        found = self._resolved.get(key)
        if found is None:
            found = self._resolved[key] = self._follow(ref, base)
        return found

    def _follow(self, ref: str, base: str) -> tuple[Target, Any]:
        first = target = self.target(ref, base)
        seen = {target}
        for _ in range(MAX_REF_CHAIN):
            node = self.node(target)
            if not (isinstance(node, dict) and isinstance(node.get("$ref"), str) and len(node) == 1):
                return target, node
            target = self.target(node["$ref"], target.uri)
            if target in seen:
                raise CircularRefError(
                    f"circular $ref chain through {_shown(target)}: the reference points back at itself",
                    first,
                )
            seen.add(target)
        raise RefError(f"$ref chain longer than {MAX_REF_CHAIN} starting at {ref!r}")

    def target(self, ref: str, base: str) -> Target:
        """The absolute :class:`Target` of ``ref`` read in document ``base``.

        Raises:
            RefError: the reference is refused by the security policy, or malformed (an invalid
                URL, a NUL byte in a path).
        """
        try:
            return self._target(ref, base)
        except ValueError as exc:  # urllib and pathlib reject some strings outright
            raise RefError(f"malformed $ref {shown_ref(ref)!r}: {exc}") from exc

    def _target(self, ref: str, base: str) -> Target:
        address, fragment = urldefrag(ref)
        pointer = unquote(fragment)
        if address or (pointer and not pointer.startswith("/")):
            known = self._by_id(address, pointer, base)
            if known is not None:
                return known
        uri = base if not address else self._join(address, base)
        if pointer and not pointer.startswith("/"):
            raise RefError(
                f"unsupported $ref {ref!r}: only JSON pointer fragments (#/...) are supported, not anchors"
            )
        return Target(uri, pointer)

    def _by_id(self, address: str, fragment: str, base: str) -> Target | None:
        """A target named by an ``$id`` or ``$anchor`` of document ``base`` (OpenAPI 3.1 style)."""
        ids, anchors = self._identifiers(base)
        pointer = ids.get(address) if address else ""
        if pointer is None:
            return None
        if fragment and not fragment.startswith("/"):
            anchored = anchors.get(fragment)
            return None if anchored is None else Target(base, anchored)
        return Target(base, pointer + fragment)

    def _identifiers(self, uri: str) -> tuple[dict[str, str], dict[str, str]]:
        found = self._ids.get(uri)
        if found is None:
            try:
                document = self.document(uri)
            except LoadError:
                document = None
            found = self._ids[uri] = _index_identifiers(document)
        return found

    def _join(self, address: str, base: str) -> str:
        if is_url(address) or is_url(base):
            uri = urljoin(base, address) if is_url(base) else address
            if not self.allow_remote_refs:
                raise RefError(
                    f"remote $ref refused: {display_url(uri)}. Network references are off by default; set "
                    "allow_remote_refs: true on the loader to follow them"
                )
            return uri
        if urlsplit(address).scheme not in ("", "file"):
            raise RefError(f"unsupported $ref scheme in {address!r}: use a relative file path or http(s)")
        path = (Path(base).parent / unquote(urlsplit(address).path)).resolve()
        if (
            not self.allow_outside_refs
            and self._root_dir is not None
            and not path.is_relative_to(self._root_dir)
        ):
            raise RefError(
                f"file $ref outside the spec's directory refused: {path}. Move the file under "
                f"{self._root_dir} or set allow_outside_refs: true"
            )
        return str(path)

    def node(self, target: Target) -> Any:
        """The node at ``target``.

        Raises:
            RefError: the document cannot be read or the pointer does not exist in it.
        """
        try:
            node = self.document(target.uri)
        except LoadError as exc:
            raise RefError(f"cannot read $ref target {display_url(target.uri)}: {exc.reason}") from exc
        for token in target.pointer.split("/")[1:]:
            node = _step(node, token, target)
        return node


def _index_identifiers(document: Any) -> tuple[dict[str, str], dict[str, str]]:
    """``$id`` value -> pointer and ``$anchor`` name -> pointer for every schema in a document."""
    ids: dict[str, str] = {}
    anchors: dict[str, str] = {}
    stack: list[tuple[Any, str]] = [(document, "")]
    seen: set[int] = set()  # YAML aliases can make a document refer to itself
    while stack:
        node, pointer = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            if isinstance(node.get("$id"), str):
                ids.setdefault(node["$id"], pointer)
            if isinstance(node.get("$anchor"), str):
                anchors.setdefault(node["$anchor"], pointer)
            stack.extend((v, f"{pointer}/{escape_pointer(str(k))}") for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{pointer}/{i}") for i, v in enumerate(node))
    return ids, anchors


def _step(node: Any, raw: str, target: Target) -> Any:
    if _BAD_ESCAPE.search(raw):
        raise RefError(
            f"invalid JSON pointer in $ref {_shown(target)}: {raw!r} has a '~' not followed by 0 or 1 "
            "(write ~0 for '~' and ~1 for '/')"
        )
    token = unescape_pointer(raw)
    # An index is plain ASCII digits ("²" is a digit to str.isdigit, and int() refuses 5,000 of them).
    index = int(token) if token.isascii() and token.isdigit() and len(token) <= _MAX_INDEX_DIGITS else None
    if isinstance(node, dict):
        if token in node:
            return node[token]
        if index is not None and index in node:  # YAML reads unquoted status codes as integers
            return node[index]
    if isinstance(node, list) and index is not None and index < len(node):
        return node[index]
    raise RefError(
        f"missing $ref target {_shown(target)}: no {token[:80]!r} there. Fix the reference or add the "
        "definition"
    )


def _shown(target: Target) -> str:
    return f"{display_url(target.uri)}#{target.pointer[:200]}"


def _read_file(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise LoadError("OpenAPI document not found: check the path", source=path) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise LoadError(f"cannot read OpenAPI document: {exc}", source=path) from exc


def parse_text(text: str, source: str) -> Any:
    """Parse JSON or YAML text (JSON first when it looks like JSON, since it is much faster).

    Raises:
        LoadError: the text is neither (with line).
    """
    try:
        value = _parse(text, source)
    except RecursionError as exc:
        raise LoadError(
            "document nested too deeply to parse: no OpenAPI spec needs this depth", source=source
        ) from exc
    if escapes_surrogate(text):  # a lone surrogate would fail every tool, record and encoder later
        check_text(value, source)
    return value


def _parse(text: str, source: str) -> Any:
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            if source.lower().endswith(".json"):
                raise LoadError(f"invalid JSON: {exc.msg}", source=source, line=exc.lineno) from exc
        except ValueError as exc:  # an integer of more than 4,300 digits
            raise LoadError(f"unusable JSON: {exc}. Fix the document", source=source) from None
    docs = parse_yaml_text(text, source)
    if len(docs) != 1:
        raise LoadError(
            f"expected one YAML document, found {len(docs)}: an OpenAPI spec is a single document",
            source=source,
        )
    return docs[0]


def _fetch(url: str, timeout: float, max_bytes: int) -> str:
    import httpx2 as httpx

    shown = display_url(url)
    deadline = time.monotonic() + timeout
    try:
        # Redirects carry no credential across origins: the query stays behind, and the client
        # drops the Authorization it makes from userinfo.
        with (
            httpx.Client(timeout=timeout, follow_redirects=True, max_redirects=MAX_REDIRECTS) as client,
            client.stream("GET", url) as response,
        ):
            if response.status_code >= 400:
                raise LoadError(
                    f"cannot fetch OpenAPI document: HTTP {response.status_code}. Check the URL",
                    source=shown,
                )
            return _read_capped(response, shown, max_bytes, deadline)
    except httpx.HTTPError as exc:
        raise LoadError(
            f"cannot fetch OpenAPI document: {type(exc).__name__}: {redact(str(exc))}. Check the URL "
            "and network",
            source=shown,
        ) from None


def _read_capped(response: Any, shown: str, max_bytes: int, deadline: float) -> str:
    """The body, counted decompressed while it streams, within ``max_bytes`` and the deadline."""
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():  # decompressed in pieces of at most 1 MiB
        size += len(chunk)
        if size > max_bytes:
            raise LoadError(
                f"OpenAPI document too large: more than {max_bytes} bytes (decompressed). Raise "
                "max_bytes or download the file and load it locally",
                source=shown,
            )
        if time.monotonic() > deadline:
            raise LoadError(
                "cannot fetch OpenAPI document: the download took longer than the timeout. Raise "
                "timeout or download the file and load it locally",
                source=shown,
            )
        chunks.append(chunk)
    try:
        return b"".join(chunks).decode(response.encoding or "utf-8")
    except (LookupError, UnicodeDecodeError) as exc:
        raise LoadError(f"cannot decode OpenAPI document: {exc}", source=shown) from exc
