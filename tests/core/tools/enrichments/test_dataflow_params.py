"""Tests for fms_dgt/core/tools/enrichments/_dataflow_params.py: parameter signatures and types."""

from __future__ import annotations

from support.schemas import rest_tool, schema

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments._dataflow_fields import input_fields, output_fields
from fms_dgt.core.tools.enrichments._dataflow_params import signature, type_compatibility
from fms_dgt.core.tools.enrichments._dataflow_scoring import KIN_FLOOR
from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
from fms_dgt.core.tools.registry import ToolRegistry


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


def test_a_reference_field_is_an_identifier_of_the_object_it_may_be_expanded_to() -> None:
    # Stripe: `original_payout` is a payout's id, or the payout itself when expanded.
    payout = {"type": "object", "title": "payout", "properties": {"id": {"type": "string"}}}
    reference = {"anyOf": [{"type": "string", "maxLength": 5000}, {"$ref": "#/$defs/payout"}]}
    outputs = {**schema(original_payout=reference, reversed_by=reference), "$defs": {"payout": payout}}
    tool = rest_tool("GetPayoutsPayout", "/v1/payouts/{payout}", {"payout": "string"}, outputs)
    roles = {f.name: signature(tool, f, True)[2:] for f in output_fields(tool)}
    assert roles["original_payout"] == ("string", "id:payout|payout")
    assert roles["reversed_by"] == ("string", "id:|payout")
    # a plain union of values is no reference
    plain = rest_tool("t", "/t", {}, schema(value={"anyOf": [{"type": "string"}, {"type": "integer"}]}))
    assert signature(plain, output_fields(plain)[0], True)[3] == ""


def test_an_object_or_an_empty_string_or_a_number_is_no_reference() -> None:
    # Stripe clears a value with "" (`address`: an address, or "" to unset it) and filters a time
    # by a number or a range (`created`): neither is an id of the object.
    address = {"type": "object", "title": "address", "properties": {"city": {"type": "string"}}}
    specs = {"type": "object", "title": "range_query_specs", "properties": {"gt": {"type": "integer"}}}
    inputs = {
        "address": {"anyOf": [address, {"type": "string", "enum": [""]}]},
        "created": {"anyOf": [specs, {"type": "integer"}]},
        "customer": {"anyOf": [{"type": "string"}, {**address, "title": "customer"}]},
    }
    tool = Tool("PostCustomers", "pay", parameters=schema(**inputs))
    roles = {f.name: signature(tool, f, False)[3] for f in input_fields(tool)}
    assert not roles["address"].startswith("id:") and not roles["created"].startswith("id:")
    assert roles["customer"] == "id:customer|customer"  # a string or the object: its id


def test_a_path_parameter_named_for_its_collection_in_several_words_is_its_identifier() -> None:
    cases = {
        "/v1/tax_rates/{tax_rate}": "tax_rate",
        "/v1/subscription_items/{item}": "item",
        "/v1/shipping_rates/{shipping_rate_token}": "shipping_rate_token",
    }
    for path, name in cases.items():
        tool = rest_tool("op", path, {name: "string"})
        assert signature(tool, input_fields(tool)[0], False)[3].startswith("id:"), path
    other = rest_tool("op", "/v1/tax_rates/{country}", {"country": "string"})
    assert signature(other, input_fields(other)[0], False)[3] == ""


def test_identifiers_of_one_entity_score_at_least_the_kin_floor_whatever_their_texts() -> None:
    # Stripe: a promotion code's `id` ("Unique identifier for the object.") and the undescribed
    # `{promotion_code}` of a path share few words, and still name one thing.
    described = {"type": "string", "description": "Unique identifier for the object."}
    outputs = {**schema(id=described), "title": "promotion_code"}
    create = rest_tool("PostPromotionCodes", "/v1/promotion_codes", {"code": "string"}, outputs)
    read = rest_tool("GetPromotionCode", "/v1/promotion_codes/{promotion_code}", {"promotion_code": "string"})
    graph = DataflowEnrichment().enrich(ToolRegistry([create, read]))
    [edge] = [e for e in graph.edges_from(graph.node(create)) if e.input == "promotion_code"]
    assert edge.score >= KIN_FLOOR


def test_a_reference_names_its_object_as_a_holder_or_a_path_would() -> None:
    # The one rule of name_entity: a reference to a subscription item feeds /subscription_items/{item}.
    item = {"type": "object", "properties": {"id": {"type": "string"}}}
    reference = {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/subscription_item"}]}
    record = rest_tool(
        "GetUsage",
        "/v1/usage",
        {},
        {**schema(subscription_item=reference), "$defs": {"subscription_item": item}},
    )
    read = rest_tool("GetItem", "/v1/subscription_items/{item}", {"item": "string"})
    out_role = signature(record, output_fields(record)[0], True)[3]
    in_role = signature(read, input_fields(read)[0], False)[3]
    assert out_role.endswith("|subscription item") and in_role == "id:subscription item|subscription item"


def test_an_identifier_in_a_titled_object_feeds_the_holders_entity_and_the_schemas() -> None:
    # Star Trek: movies[].mainDirector is a StaffHeader; its uid feeds get_staff and directorUid.
    header = {"type": "object", "title": "StaffHeader", "properties": {"uid": {"type": "string"}}}
    movie = {"type": "object", "properties": {"mainDirector": header}}
    search = rest_tool(
        "search_movies", "/movie/search", {}, schema(movies={"type": "array", "items": movie}), namespace="st"
    )
    staff = rest_tool("get_staff", "/staff", {"uid": "string"}, namespace="st")
    by_director = rest_tool("find_movies", "/movie/find", {"directorUid": "string"}, namespace="st")
    company = rest_tool("get_company", "/company", {"uid": "string"}, namespace="st")
    found = [f for f in output_fields(search) if f.name == "movies[].mainDirector.uid"]
    assert signature(search, found[0], True)[3] == "id:director|staff"
    graph = DataflowEnrichment().enrich(ToolRegistry([search, staff, by_director, company]))
    edges = graph.edges_from(graph.node(search))
    fed = {(e.target.name, e.input) for e in edges if e.output == found[0].name}
    assert {("get_staff", "uid"), ("find_movies", "directorUid")} <= fed
    assert ("get_company", "uid") not in fed  # a company's uid is another entity's
