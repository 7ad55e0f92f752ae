"""JSON Schema handling for tools: dialect normalisation, semantic fingerprints, compiled validators.

* :mod:`~fms_dgt.core.tools.schema.normalise`: any dialect -> Draft 2020-12, with notes.
* :mod:`~fms_dgt.core.tools.schema.fingerprint`: a hash of what decides which instances validate.
* :mod:`~fms_dgt.core.tools.schema.validate`: validators compiled once per fingerprint.
"""

from __future__ import annotations

from fms_dgt.core.tools.schema.fingerprint import canonical_form, fingerprint
from fms_dgt.core.tools.schema.normalise import (
    ANNOTATION_KEYS,
    JSON_TYPES,
    SCHEMA_KEYWORDS,
    SCHEMA_LIST_KEYWORDS,
    SCHEMA_MAP_KEYWORDS,
    is_flat_parameter_map,
    json_type,
    normalise_parameters,
    normalise_schema,
    type_from_name,
)
from fms_dgt.core.tools.schema.validate import CompiledValidator, InvalidSchemaError, get_validator

__all__ = [
    "ANNOTATION_KEYS",
    "JSON_TYPES",
    "SCHEMA_KEYWORDS",
    "SCHEMA_LIST_KEYWORDS",
    "SCHEMA_MAP_KEYWORDS",
    "CompiledValidator",
    "InvalidSchemaError",
    "canonical_form",
    "fingerprint",
    "get_validator",
    "is_flat_parameter_map",
    "json_type",
    "normalise_parameters",
    "normalise_schema",
    "type_from_name",
]
