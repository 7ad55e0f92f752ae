"""Tests for polymorphic identifiers in the dataflow graph (settings version 13): an identifier
that may name one of several objects, read from a spec's unions, and a list's filter that takes
the role of its items' property."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.openapi_specs import operation, write_spec

from fms_dgt.core.tools.enrichments._dataflow_entities import MAX_VARIANTS, parse_role, role, with_variants
from fms_dgt.core.tools.enrichments._dataflow_fields import input_fields, response_variants, union_names
from fms_dgt.core.tools.enrichments._dataflow_params import signature
from fms_dgt.core.tools.enrichments._dataflow_scoring import entity_table
from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
from fms_dgt.core.tools.enrichments.dataflow_view import explain
from fms_dgt.core.tools.loaders.rest import RESTToolLoader
from fms_dgt.core.tools.registry import ToolRegistry


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _object(**props: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {k: {"type": v} if isinstance(v, str) else v for k, v in props.items()},
    }


def _query(name: str, description: str = "") -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": {"type": "string"}, "description": description}


def _listed(item: str) -> dict[str, Any]:
    return _object(data={"type": "array", "items": _ref(item)})


def _spec(tmp_path: Path) -> Path:
    """A payments API shaped like Stripe's: a balance transaction's ``source`` is a charge or a
    top-up (an expandable reference), a customer's source is a card or a bank account (a union
    result), and invoices are neither."""
    components = {
        "schemas": {
            "charge": _object(id="string", amount="integer"),
            "topup": _object(id="string", amount="integer"),
            "invoice": _object(id="string", total="integer"),
            "card": _object(
                id="string",
                last4="string",
                replacement_for={"anyOf": [{"type": "string"}, _ref("card")]},
            ),
            "user": _object(id="string", name="string"),
            "user_with_stats": _object(id="string", name="string", videos="integer"),
            "bank_account": _object(id="string", routing_number="string"),
            "balance_transaction": _object(
                id="string",
                amount="integer",
                source={
                    "description": "The object to which this transaction is related.",
                    "anyOf": [{"type": "string"}, _ref("charge"), _ref("topup")],
                },
            ),
            "payment_source": {"anyOf": [_ref("card"), _ref("bank_account")]},
        }
    }
    paths = {
        "/v1/charges/{charge}": operation("GetCharge", ("charge",), _ref("charge")),
        "/v1/topups/{topup}": operation("GetTopup", ("topup",), _ref("topup")),
        "/v1/invoices/{invoice}": operation("GetInvoice", ("invoice",), _ref("invoice")),
        "/v1/balance_transactions": operation(
            "ListBalanceTransactions",
            (_query("source", "Only return the transactions of this object."),),
            _listed("balance_transaction"),
        ),
        "/v1/customers/{customer}/cards": operation("ListCards", ("customer",), _listed("card")),
        "/v1/customers/{customer}/sources/{id}": operation(
            "GetSource", ("customer", "id"), _ref("payment_source")
        ),
        # a new source: `{customer}` is whose it is, not what the union result is
        "/v1/customers/{customer}/sources": operation(
            "CreateSource", ("customer",), _ref("payment_source"), method="post"
        ),
        "/v1/users/{id}": operation("GetUser", ("id",), {"oneOf": [_ref("user"), _ref("user_with_stats")]}),
        "/v1/cards": {"post": _create_card()},
    }
    return write_spec(tmp_path, paths, components)


def _create_card() -> dict[str, Any]:
    """``POST /v1/cards``: its body's ``replacement_for`` ("The card this one replaces") is what
    the new card's ``replacement_for`` will hold, a card's id."""
    body = _object(replacement_for={"type": "string", "description": "The card this one replaces."})
    return {
        "operationId": "CreateCard",
        "requestBody": {"content": {"application/json": {"schema": body}}},
        "responses": {
            "200": {"description": "ok", "content": {"application/json": {"schema": _ref("card")}}}
        },
    }


def _edges(tmp_path: Path) -> set[tuple[str, str, str, str]]:
    tools = RESTToolLoader(_spec(tmp_path), namespace="pay").load()
    graph = DataflowEnrichment(max_neighbors=8).enrich(ToolRegistry(tools))
    return {
        (graph.tools[int(a)].name, graph.names[o], graph.tools[int(b)].name, graph.names[i])
        for a, o, b, i in zip(graph.src, graph.output, graph.dst, graph.input, strict=True)
    }


def test_a_polymorphic_reference_feeds_each_object_it_may_be_and_no_other(tmp_path: Path) -> None:
    edges = _edges(tmp_path)
    source = ("ListBalanceTransactions", "data[].source")
    assert (*source, "GetTopup", "topup") in edges
    assert (*source, "GetCharge", "charge") in edges
    assert (*source, "GetInvoice", "invoice") not in edges  # an invoice is none of them


def test_a_lists_filter_takes_the_role_of_its_items_property(tmp_path: Path) -> None:
    # `source` of the list is what each listed transaction's `source` holds: a charge or a top-up
    edges = _edges(tmp_path)
    assert ("GetTopup", "id", "ListBalanceTransactions", "source") in edges
    assert ("GetCharge", "id", "ListBalanceTransactions", "source") in edges
    assert ("GetInvoice", "id", "ListBalanceTransactions", "source") not in edges
    tools = {t.name: t for t in RESTToolLoader(_spec(tmp_path), namespace="pay").load()}
    listing = tools["ListBalanceTransactions"]
    (field,) = [f for f in input_fields(listing) if f.name == "source"]
    assert set(parse_role(signature(listing, field, False)[3]).variants) == {"charge", "topup"}


def test_the_object_a_union_result_is_identified_by_the_last_path_parameter(tmp_path: Path) -> None:
    # /customers/{customer}/sources/{id} returns a card or a bank account: a card's id is its `id`
    edges = _edges(tmp_path)
    assert ("ListCards", "data[].id", "GetSource", "id") in edges
    assert ("GetInvoice", "id", "GetSource", "id") not in edges
    assert ("ListCards", "data[].id", "GetSource", "customer") not in edges  # not what it acts on
    tools = {t.name: t for t in RESTToolLoader(_spec(tmp_path), namespace="pay").load()}
    assert response_variants(tools["GetSource"]) == ["card", "bank_account"]
    assert response_variants(tools["GetCharge"]) == []


def test_a_union_of_an_object_and_its_extension_is_one_object(tmp_path: Path) -> None:
    # PeerTube's getUser: a User or a UserWithStats is a user either way
    tools = {t.name: t for t in RESTToolLoader(_spec(tmp_path), namespace="pay").load()}
    assert response_variants(tools["GetUser"]) == []
    (field,) = [f for f in input_fields(tools["GetUser"]) if f.name == "id"]
    assert parse_role(signature(tools["GetUser"], field, False)[3]).variants == ()


def test_a_parameter_before_the_end_of_the_path_is_not_what_a_union_result_is(tmp_path: Path) -> None:
    tools = {t.name: t for t in RESTToolLoader(_spec(tmp_path), namespace="pay").load()}
    create = tools["CreateSource"]
    (field,) = [f for f in input_fields(create) if f.name == "customer"]
    assert parse_role(signature(create, field, False)[3]).variants == ()
    assert ("ListCards", "data[].id", "CreateSource", "customer") not in _edges(tmp_path)


def test_an_input_stored_in_the_result_takes_the_role_of_what_it_becomes(tmp_path: Path) -> None:
    # the new card's `replacement_for` is a card (a reference field): so is the body's
    edges = _edges(tmp_path)
    assert ("ListCards", "data[].id", "CreateCard", "replacement_for") in edges
    assert ("GetInvoice", "id", "CreateCard", "replacement_for") not in edges


def test_the_graph_view_says_which_object_a_polymorphic_identifier_is(tmp_path: Path) -> None:
    tools = RESTToolLoader(_spec(tmp_path), namespace="pay").load()
    registry = ToolRegistry(tools)
    graph = DataflowEnrichment().enrich(registry)
    source = graph.node(registry.get("pay::ListBalanceTransactions"))
    (edge,) = [e for e in graph.edges_from(source) if e.target.name == "GetTopup"]
    assert explain(edge).entity == "topup (one of the objects it may be)"


def test_variants_are_written_and_read_back_with_the_role() -> None:
    text = with_variants("id:source|", ["topup", "charge", "topup", ""])
    assert text == "id:source|~charge,topup"
    parsed = parse_role(text)
    assert (parsed.a, parsed.b, parsed.variants) == ("source", "", ("charge", "topup"))
    assert with_variants("id:source|charge", ["charge"]) == "id:source|charge"  # one object: no variants
    assert with_variants("label", ["a", "b"]) == "label"  # only identifiers have variants


def test_kin_between_entities_and_variants() -> None:
    roles = ["id:|topup", "id:|invoice", "id:source|~charge,topup", "id:|~card,topup", "id:|~card,account"]
    table = entity_table(roles)
    a, b, g = table.first, table.second, table.group

    def kin(i: int, j: int) -> bool:
        out = (np.array([a[i]]), np.array([b[i]]), np.array([g[i]]))
        into = (np.array([a[j]]), np.array([b[j]]), np.array([g[j]]))
        return bool(table.kin(out, into)[0])

    assert kin(0, 2) and kin(2, 0)  # a top-up's id and what may be a top-up
    assert not kin(1, 2) and not kin(2, 1)  # an invoice is neither
    assert kin(2, 3)  # variants in common (topup)
    assert not kin(2, 4)  # no variant in common
    assert kin(0, 0) and not kin(0, 1)


def test_unions_are_read_to_a_bounded_depth_and_survive_cycles() -> None:
    defs: dict[str, Any] = {
        "a": {"anyOf": [{"$ref": "#/$defs/b"}, {"$ref": "#/$defs/a"}]},  # refers to itself
        "b": {"type": "object", "title": "B"},
    }
    assert set(union_names({"$ref": "#/$defs/a"}, defs)) <= {"a", "b"}
    nested: Any = {"type": "object", "title": "leaf"}
    for depth in range(50):  # a union 50 levels deep
        nested = {"anyOf": [nested, {"type": "object", "title": f"other{depth}"}]}
    assert len(union_names(nested, {})) <= 8  # four levels of two branches at most
    assert union_names({"anyOf": [{"type": "string"}, {"type": "null"}]}, {}) == []


@pytest.mark.parametrize(
    "description",
    ["The ID of the source this transaction is attached to.", "The ID of a source to transfer funds from."],
)
def test_a_qualifying_noun_followed_by_a_clause_is_the_phrases_noun(description: str) -> None:
    # not the transaction: "this transaction ..." is a clause about the source
    assert parse_role(role("ref", {"description": description}, "string", output=False)).b == "source"


def test_kin_agrees_with_sets_over_many_groups_and_entities() -> None:
    # 150 groups over 300 entities: the variants take several 64-bit words per group
    rng = np.random.default_rng(5)
    roles = [f"id:|e{n}" for n in range(300)]
    for _ in range(150):
        picked = sorted({f"e{int(n)}" for n in rng.integers(0, 300, size=3)})
        roles.append(with_variants("id:|", picked))
    table = entity_table(roles)
    every = np.arange(len(roles))
    out = (table.first[every, None], table.second[every, None], table.group[every, None])
    into = (table.first[None, every], table.second[None, every], table.group[None, every])
    found = table.kin(out, into)

    def names(text: str) -> set[str]:
        parsed = parse_role(text)
        return {e for e in (parsed.a, parsed.b, *parsed.variants) if e}

    expected = np.array([[bool(names(o) & names(i)) for i in roles] for o in roles])
    assert found.shape == expected.shape and bool((found == expected).all())


def test_an_identifier_that_may_be_too_many_objects_names_none() -> None:
    many = [f"thing{n}" for n in range(MAX_VARIANTS + 1)]
    assert with_variants("id:source|", many) == "id:source|"
    kept = many[:MAX_VARIANTS]
    assert parse_role(with_variants("id:source|", kept)).variants == tuple(sorted(kept))


def test_a_nullable_schema_that_wraps_itself_costs_nothing_but_itself(tmp_path: Path) -> None:
    # `loop: anyOf: [$ref loop, null]` as a branch of a union result recursed without end
    components = {
        "schemas": {
            "loop": {"anyOf": [_ref("loop"), {"type": "null"}]},
            "card": _object(id="string"),
            "thing": {"oneOf": [_ref("loop"), _ref("card")]},
        }
    }
    paths = {
        "/things/{id}": operation("GetThing", ("id",), _ref("thing")),
        "/cards": operation("ListCards", (), _listed("card")),
    }
    tools = RESTToolLoader(write_spec(tmp_path, paths, components), namespace="t").load()
    graph = DataflowEnrichment().enrich(ToolRegistry(tools))
    assert {t.name for t in graph.tools} == {"GetThing", "ListCards"}


def test_a_union_of_thousands_of_objects_names_none_and_is_read_once(tmp_path: Path) -> None:
    schemas: dict[str, Any] = {f"kind{n}": _object(id="string") for n in range(2000)}
    schemas["everything"] = {"oneOf": [_ref(f"kind{n}") for n in range(2000)]}
    # nested unions that repeat one another's branches: read once each
    schemas["inner"] = {"oneOf": [_ref("kind1"), _ref("kind2")]}
    schemas["outer"] = {"oneOf": [_ref("inner"), _ref("inner"), _ref("kind2"), _ref("kind3")]}
    paths = {f"/all{n}/{{id}}": operation(f"GetAll{n}", ("id",), _ref("everything")) for n in range(10)}
    paths["/outer/{id}"] = operation("GetOuter", ("id",), _ref("outer"))
    tools = {
        t.name: t
        for t in RESTToolLoader(write_spec(tmp_path, paths, {"schemas": schemas}), namespace="t").load()
    }
    assert response_variants(tools["GetAll0"]) == []  # more than 32 objects: none in particular
    assert response_variants(tools["GetOuter"]) == ["kind1", "kind2", "kind3"]
    DataflowEnrichment().enrich(ToolRegistry(list(tools.values())))
