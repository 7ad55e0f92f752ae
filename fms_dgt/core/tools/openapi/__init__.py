"""Everything OpenAPI, shared by the ``rest`` loader and the ``rest`` engine.

Loading a spec (:mod:`~fms_dgt.core.tools.loaders.rest` drives these):

* :mod:`.documents`: reading spec files and URLs, ``$ref`` resolution with a security policy;
* :mod:`.validation`: the structural check every load runs and the opt-in full validation;
* :mod:`.operations`: finding every ``(path, method)`` pair;
* :mod:`.converter`: one operation as one tool's fields, using :mod:`.parameters`,
  :mod:`.bodies`, :mod:`.endpoints` (servers and security), :mod:`.media` and :mod:`.schemas`
  (OpenAPI schemas as self-contained Draft 2020-12);
* :mod:`.route`: the typed :class:`Route` stored in ``Tool.metadata["route"]``.

Calling a tool (:mod:`~fms_dgt.core.tools.engines.rest` drives these):

* :mod:`.request`: the HTTP request of one call, from its route;
* :mod:`.auth`: credentials, security schemes applied, secrets redacted.

Third-party libraries are imported only where they are used, inside functions
(``openapi-spec-validator`` by :func:`validate_spec`, the HTTP client by document fetching), so
importing this package stays light.
"""

from __future__ import annotations

from fms_dgt.core.tools.openapi.auth import (
    Credential,
    Credentials,
    Redactor,
    SecretLogFilter,
    is_sensitive_header,
    protect_logs,
)
from fms_dgt.core.tools.openapi.bodies import BODY_MODES
from fms_dgt.core.tools.openapi.converter import OperationConverter, ToolFields, slug
from fms_dgt.core.tools.openapi.documents import (
    CircularRefError,
    DocumentStore,
    RefError,
    Target,
    display_url,
    is_url,
    parse_text,
)
from fms_dgt.core.tools.openapi.operations import (
    METHODS,
    Operation,
    OperationError,
    iter_operations,
    spec_version,
)
from fms_dgt.core.tools.openapi.request import (
    Request,
    RESTCallError,
    body_content,
    build_request,
    resolve_base_url,
)
from fms_dgt.core.tools.openapi.route import (
    ROUTE_KEY,
    ArgumentSpec,
    BodySpec,
    Interner,
    ResponseSpec,
    Route,
    RouteError,
    SecurityScheme,
    route_of,
)
from fms_dgt.core.tools.openapi.schemas import SchemaCompiler
from fms_dgt.core.tools.openapi.validation import check_root, validate_spec

__all__ = [
    "BODY_MODES",
    "METHODS",
    "ROUTE_KEY",
    "ArgumentSpec",
    "BodySpec",
    "CircularRefError",
    "Credential",
    "Credentials",
    "DocumentStore",
    "Interner",
    "Operation",
    "OperationConverter",
    "OperationError",
    "RESTCallError",
    "Redactor",
    "RefError",
    "Request",
    "ResponseSpec",
    "Route",
    "RouteError",
    "SchemaCompiler",
    "SecretLogFilter",
    "SecurityScheme",
    "Target",
    "ToolFields",
    "body_content",
    "build_request",
    "check_root",
    "display_url",
    "is_sensitive_header",
    "is_url",
    "iter_operations",
    "parse_text",
    "protect_logs",
    "resolve_base_url",
    "route_of",
    "slug",
    "spec_version",
    "validate_spec",
]
