"""Tests for identifier inputs whose entity no output of their namespace names
(fms_dgt/core/tools/enrichments/_dataflow_scoring.py: orphan_inputs, Scorer.freeing)."""

from __future__ import annotations

from support.schemas import schema

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
from fms_dgt.core.tools.enrichments.dataflow_view import explain
from fms_dgt.core.tools.registry import ToolRegistry


def _described(text: str) -> dict[str, str]:
    return {"type": "string", "description": text}


def _library() -> list[Tool]:
    book = _described("Unique identifier of this book in the catalogue.")
    author = _described("Identifier of the book's author in the catalogue.")
    return [
        Tool("get_book", "lib", output_parameters=schema(id=book, author_id=author)),
        # No output of "lib" names a volume: the API's word for what its outputs call a book.
        Tool(
            "borrow_volume",
            "lib",
            parameters=schema(volume_id=_described("Identifier of the volume to borrow.")),
        ),
        # Authors are named by an output of "lib": an author's id input is an author's, not a book's.
        Tool(
            "get_author",
            "lib",
            parameters=schema(author_id=_described("Identifier of the author in the catalogue.")),
        ),
        # Another namespace keeps its entity: a book of "lib" is no volume of "shop".
        Tool(
            "order_volume",
            "shop",
            parameters=schema(volume_id=_described("Identifier of the volume to order.")),
        ),
    ]


def test_an_input_whose_entity_its_api_never_names_takes_its_apis_identifiers() -> None:
    graph = DataflowEnrichment(threshold=0.01).enrich(ToolRegistry(_library()))
    edges = {(e.output, e.target.qualified_name, e.input): e for e in graph.edges_from(0)}
    assert ("id", "lib::borrow_volume", "volume_id") in edges
    assert ("id", "lib::get_author", "author_id") not in edges  # the API names authors: a clash
    assert ("id", "shop::order_volume", "volume_id") not in edges  # another namespace: a clash
    # an author's id is asked for by name in "lib": it is an author's, never a volume's
    assert ("author_id", "lib::borrow_volume", "volume_id") not in edges
    why = explain(edges[("id", "lib::borrow_volume", "volume_id")])
    assert why.entity == "book into volume (different entities)"


def test_a_produced_entity_keeps_the_exclusion() -> None:
    tools = _library()
    tools.append(
        Tool("list_volumes", "lib", output_parameters=schema(volume_id=_described("A volume's id.")))
    )
    graph = DataflowEnrichment(threshold=0.01).enrich(ToolRegistry(tools))
    targets = {(e.output, e.target.name, e.input) for e in graph.edges_from(0)}
    assert ("id", "borrow_volume", "volume_id") not in targets  # volumes are named now: a book is none


def test_an_input_given_by_another_api_is_not_fed_this_apis_identifiers() -> None:
    # The flights API asks for bookings by name; a customer's id comes from the accounts API.
    booking = _described("Identifier of the new booking.")
    customer = _described("Identifier of the customer account.")
    tools = [
        Tool("find_user", "accounts", output_parameters=schema(user_id=customer)),
        Tool(
            "book_flight",
            "flights",
            parameters=schema(user_id=customer),
            output_parameters=schema(booking_id=booking),
        ),
        Tool("cancel_booking", "flights", parameters=schema(booking_id=_described("The booking to cancel."))),
        Tool("rebook", "flights", parameters=schema(user_id=customer, booking_id=booking)),
    ]
    graph = DataflowEnrichment(threshold=0.01).enrich(ToolRegistry(tools))
    edges = {(e.source.name, e.output, e.target.name, e.input) for n in range(4) for e in graph.edges_from(n)}
    assert ("book_flight", "booking_id", "cancel_booking", "booking_id") in edges
    assert ("book_flight", "booking_id", "rebook", "user_id") not in edges
    assert ("find_user", "user_id", "rebook", "user_id") in edges
