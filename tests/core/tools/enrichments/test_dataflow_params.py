"""Tests for fms_dgt/core/tools/enrichments/_dataflow_params.py: parameter signatures and types."""

from __future__ import annotations

from support.schemas import rest_tool, schema

from fms_dgt.core.tools.enrichments._dataflow_fields import input_fields, output_fields
from fms_dgt.core.tools.enrichments._dataflow_params import signature, type_compatibility


def test_a_path_parameter_named_for_its_paths_entity_is_that_entitys_identifier() -> None:
    # Stripe: /v1/refunds/{refund} takes a refund's id, which a refund's `id` gives.
    refund = rest_tool(
        "GetRefundsRefund",
        "/v1/refunds/{refund}",
        {"refund": "string", "expand": "string"},
        schema(id="string"),
    )
    roles = {f.name: signature(refund, f, False)[3] for f in input_fields(refund)}
    assert roles == {"refund": "id:refund|refund", "expand": ""}
    [found] = output_fields(refund)
    assert signature(refund, found, True)[3] == "id:|refund"
    # A path parameter named otherwise keeps its own role (a name is a label of its entity).
    named = rest_tool("read_map", "/maps/{name}", {"name": "string"})
    assert signature(named, input_fields(named)[0], False)[3] == "@map"


def test_one_value_fits_a_list_of_its_type_as_a_list_of_one() -> None:
    assert type_compatibility("string", "array<string>") == 0.9
    assert type_compatibility("integer", "array<number>") == 0.9 * 0.9
    assert type_compatibility("string", "array<integer>") == 0.0
    assert type_compatibility("array<string>", "string") == 0.0
