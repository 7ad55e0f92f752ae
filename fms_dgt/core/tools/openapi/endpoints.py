"""Where an operation's requests go and which credentials they need.

:class:`Endpoints` reads, once per spec, the server URLs (OpenAPI 3 ``servers`` of the operation,
path item or root, variables replaced by their defaults; Swagger 2.0 ``scheme://host/basePath``)
and the security schemes (``components.securitySchemes`` / ``securityDefinitions``), and answers
per operation. Relative server URLs are resolved against the spec's URL when it was fetched, and
kept relative otherwise (the engine then needs a ``base_url``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urljoin, urlsplit

from fms_dgt.core.tools.openapi.documents import DocumentStore, RefError, is_url, public_url
from fms_dgt.core.tools.openapi.operations import Operation
from fms_dgt.core.tools.openapi.route import Requirement, SecurityScheme

__all__ = ["Endpoints", "Security"]

#: The security requirements of an operation and the schemes they name.
Security = tuple[tuple[Requirement, ...], dict[str, SecurityScheme]]


class Endpoints:
    """Servers and security of one spec.

    Args:
        store: the spec's documents.
        swagger: the spec is Swagger 2.0.
    """

    def __init__(self, store: DocumentStore, *, swagger: bool) -> None:
        self.store = store
        self.root: dict[str, Any] = store.root
        self.swagger = swagger
        self._schemes = self._security_schemes()
        # Most operations share the root's security list: read each distinct list once.
        self._security: dict[int, tuple[Any, Security]] = {}

    # ------------------------------------------------------------------ servers

    def servers(self, op: Operation) -> list[str]:
        """Every server URL of the operation (the innermost ``servers`` list that is set)."""
        if self.swagger:
            return [self._swagger_base(op)]
        for node in (op.node, op.item, self.root):
            servers = node.get("servers")
            if isinstance(servers, list) and servers:
                return [self._server_url(s) for s in servers if isinstance(s, dict)]
        return [self._relative("/")]

    def base_url(self, op: Operation, servers: Sequence[str] | None = None) -> str:
        """The first server URL of the operation (``servers``: its :meth:`servers`, when known)."""
        servers = self.servers(op) if servers is None else servers
        return servers[0] if servers else self._relative("/")

    def _server_url(self, server: dict[str, Any]) -> str:
        url = str(server.get("url", "/"))
        variables = server.get("variables") or {}
        for name, var in variables.items() if isinstance(variables, dict) else ():
            default = var.get("default", "") if isinstance(var, dict) else ""
            url = url.replace("{" + str(name) + "}", str(default))
        return self._relative(url)

    def _relative(self, url: str) -> str:
        if is_url(url) or not is_url(self.store.root_uri):
            return url
        # Joined to the spec's URL without its credentials, which must not reach the route.
        return urljoin(public_url(self.store.root_uri), url)

    def _swagger_base(self, op: Operation) -> str:
        schemes = op.node.get("schemes") or self.root.get("schemes") or []
        scheme = "https" if "https" in schemes or not schemes else str(schemes[0])
        host = self.root.get("host")
        base_path = str(self.root.get("basePath") or "")
        if isinstance(host, str) and host:
            return f"{scheme}://{host}{base_path}"
        if is_url(self.store.root_uri):
            parts = urlsplit(public_url(self.store.root_uri))
            return f"{parts.scheme}://{parts.netloc}{base_path}"
        return base_path or "/"

    # ------------------------------------------------------------------ security

    def security(self, op: Operation) -> Security:
        """The effective requirements (the operation's, else the root's) and the schemes they name.

        Requirements that are not mappings are dropped (they name no scheme); scopes that are not
        strings are dropped too. Treat the result as read-only: operations share it.
        """
        raw = op.node.get("security", self.root.get("security"))
        known = self._security.get(id(raw))
        if known is not None and known[0] is raw:
            return known[1]
        found = _read_security(raw, self._schemes)
        self._security[id(raw)] = (raw, found)  # holding raw keeps its id from being reused
        return found

    def _security_schemes(self) -> dict[str, SecurityScheme]:
        if self.swagger:
            raw = self.root.get("securityDefinitions") or {}
        else:
            raw = (self.root.get("components") or {}).get("securitySchemes") or {}
        schemes: dict[str, SecurityScheme] = {}
        for name, node in raw.items() if isinstance(raw, dict) else ():
            if isinstance(node, dict) and isinstance(node.get("$ref"), str):
                try:
                    node = self.store.resolve(node["$ref"], self.store.root_uri)[1]
                except RefError:
                    continue
            if isinstance(node, dict):
                schemes[str(name)] = _scheme(node)
        return schemes


def _read_security(raw: Any, schemes: dict[str, SecurityScheme]) -> Security:
    if not isinstance(raw, list):
        return (), {}
    requirements = tuple(_requirement(r) for r in raw if isinstance(r, dict))
    names = sorted({n for r in requirements for n in r})
    return requirements, {n: schemes[n] for n in names if n in schemes}


def _requirement(raw: dict[Any, Any]) -> Requirement:
    return {
        str(name): tuple(s for s in scopes if isinstance(s, str)) if isinstance(scopes, list) else ()
        for name, scopes in raw.items()
    }


def _scheme(node: dict[str, Any]) -> SecurityScheme:
    def text(key: str) -> str | None:
        value = node.get(key)
        return value if isinstance(value, str) else None

    kind, scheme = text("type"), text("scheme")
    if kind == "basic":  # Swagger 2.0
        kind, scheme = "http", "basic"
    return SecurityScheme(
        type=kind,
        scheme=scheme.lower() if scheme else scheme,
        bearer_format=text("bearerFormat"),
        location=text("in"),
        name=text("name"),
        open_id_connect_url=text("openIdConnectUrl"),
    )
