"""Tests for fms_dgt/core/tools/enrichments/_dataflow_exact.py: exact matches within one namespace."""

from __future__ import annotations

from support.schemas import rest_tool, schema

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments._dataflow_entities import compound_name, parse_role, role
from fms_dgt.core.tools.enrichments._dataflow_exact import referred_name, same_name
from fms_dgt.core.tools.enrichments.dataflow import DataflowEnrichment
from fms_dgt.core.tools.enrichments.dataflow_view import explain
from fms_dgt.core.tools.registry import ToolRegistry


def test_bare_labels_match_exactly_only_within_one_entity() -> None:
    tools = [
        Tool(
            "get_pool", "flow", parameters=schema(pool_name="string"), output_parameters=schema(name="string")
        ),
        Tool("rename_pool", "flow", parameters=schema(name="string")),
        Tool("create_role", "flow", parameters=schema(name="string")),
    ]
    graph = DataflowEnrichment(threshold=0.01).enrich(ToolRegistry(tools))
    scores = {(e.target.name, e.input): e.score for e in graph.edges_from(0)}
    assert scores[("rename_pool", "name")] == 1.0  # a pool's name into a pool's name: the API's own wiring
    assert scores.get(("create_role", "name"), 0.0) < 1.0  # a pool's name is no name for a new role


def test_abbreviations_are_spelled_out_in_exact_names() -> None:
    assert same_name("lat") == same_name("latitude") == same_name("Latitude")
    assert same_name("originLng") == same_name("origin_longitude")
    assert same_name("lat") != same_name("late")


def test_exact_names_match_across_the_apis_of_a_catalogue_namespace() -> None:
    described = {"type": "number", "description": "Latitude of the place, in degrees."}
    hub = [
        Tool("Tripadvisor_searchLocation", "hub", output_parameters=schema(latitude=described)),
        Tool("Tripadvisor_getHotels", "hub", parameters=schema(geoId="string")),
        Tool("LocalBusiness_search", "hub", parameters=schema(lat={"type": "number", "description": "Lat"})),
        Tool("LocalBusiness_reviews", "hub", parameters=schema(business_id="string")),
        Tool("Weather_now", "hub", parameters=schema(city="string")),
        Tool("Weather_forecast", "hub", parameters=schema(city="string")),
    ]
    crowd = [Tool(f"find_near_{n}", "other", parameters=schema(latitude=described)) for n in range(6)]
    graph = DataflowEnrichment(max_neighbors=2).enrich(ToolRegistry(hub + crowd))
    edges = [(e.target.qualified_name, e.input, e.score) for e in graph.edges_from(0)]
    # Two APIs of one catalogue were put together to be used together: LocalBusiness's lat is
    # Tripadvisor's latitude, ahead of the better-described latitude inputs of another namespace.
    assert edges[0] == ("hub::LocalBusiness_search", "lat", 1.0)


def test_one_name_is_one_thing_whether_plain_or_an_identifier_and_in_the_singular_or_plural() -> None:
    # A listed object's `namespace` (a plain value) is the `{namespace}` path parameter (an
    # identifier), and a run's `dag_id` goes into a list of `dag_ids` as a list of one.
    listed = schema(items={"type": "array", "items": schema(namespace="string", dag_id="string")})
    tools = [
        rest_tool("list_things", "/namespaces/{namespace}/things", {"namespace": "string"}, listed),
        rest_tool(
            "read_thing", "/namespaces/{namespace}/things/{name}", {"namespace": "string", "name": "string"}
        ),
        Tool(
            "get_runs_batch",
            "tube",
            parameters=schema(dag_ids={"type": "array", "items": {"type": "string"}}),
        ),
    ]
    graph = DataflowEnrichment(threshold=0.01).enrich(ToolRegistry(tools))
    scores = {(e.output, e.target.name, e.input): e.score for e in graph.edges_from(0)}
    assert scores[("items[].namespace", "read_thing", "namespace")] == 1.0
    assert scores[("items[].dag_id", "get_runs_batch", "dag_ids")] == 1.0
    assert same_name("dag_ids") == same_name("dagId")


def test_the_ids_of_a_lists_items_match_an_input_named_for_the_list() -> None:
    # Stripe: a subscription item's tax_rates[].id go into the tax_rates (ids) of another item.
    rates = {"type": "array", "items": schema(id="string", percentage="number")}
    ids = {"type": "array", "items": {"type": "string"}}
    tools = [
        Tool("get_item", "pay", output_parameters=schema(tax_rates=rates)),
        Tool("update_item", "pay", parameters=schema(tax_rates=ids)),
        Tool("other", "pay", parameters=schema(percentage_ids=ids)),
    ]
    graph = DataflowEnrichment(threshold=0.01).enrich(ToolRegistry(tools))
    scores = {(e.output, e.target.name, e.input): e.score for e in graph.edges_from(0)}
    assert scores[("tax_rates[].id", "update_item", "tax_rates")] == 1.0
    assert scores.get(("tax_rates[].percentage", "update_item", "tax_rates"), 0.0) < 1.0
    tags = {"type": "array", "items": schema(name="string")}
    named = [
        Tool("get_dag", "flow", output_parameters=schema(tags=tags)),
        Tool("get_dags", "flow", parameters=schema(tags=ids)),
    ]
    graph = DataflowEnrichment(threshold=0.01).enrich(ToolRegistry(named))
    assert ("tags[].name", "tags", 1.0) in [(e.output, e.input, e.score) for e in graph.edges_from(0)]


def test_an_input_named_for_an_entity_takes_its_identifier() -> None:
    # Stripe: a reader's `location` ("The location to assign the reader to") is a location's id.
    located = {"type": "string", "description": "Unique identifier for the object."}
    tools = [
        Tool("create_location", "pay", output_parameters=schema(id=located, display_name="string")),
        Tool("create_reader", "pay", parameters=schema(location="string", label="string")),
        Tool("list_files", "pay", parameters=schema(file="string")),
        Tool("create_other", "elsewhere", parameters=schema(location="string")),
    ]
    graph = DataflowEnrichment(threshold=0.01).enrich(ToolRegistry(tools))
    scores = {(e.output, e.target.qualified_name, e.input): e.score for e in graph.edges_from(0)}
    assert scores[("id", "pay::create_reader", "location")] == 1.0
    assert scores.get(("id", "pay::list_files", "file"), 0.0) < 1.0  # a location's id is no file
    assert scores.get(("id", "elsewhere::create_other", "location"), 0.0) < 1.0  # another namespace
    # an identifier of another entity under the entity's name is not it
    pets = [
        Tool("create_location", "zoo", output_parameters=schema(id=located)),
        Tool(
            "move_pet", "zoo", parameters=schema(location={"type": "string", "description": "ID of the pet"})
        ),
    ]
    graph = DataflowEnrichment(threshold=0.01).enrich(ToolRegistry(pets))
    assert all(e.score < 1.0 for e in graph.edges_from(0))


def test_an_input_named_for_the_object_a_bare_id_sits_in_takes_it() -> None:
    # Stripe: a payment method's `id` sits in a `payment_method` (entity: method); the
    # `payment_method` input ("The PaymentMethod to share.") takes it.
    located = {"type": "string", "description": "Unique identifier for the object."}
    method = {"type": "object", "title": "payment_method", "properties": {"id": located}}
    listed = schema(data={"type": "array", "items": method})
    share = {"type": "string", "description": "The PaymentMethod to share."}
    tools = [
        Tool("list_methods", "pay", output_parameters=listed),
        Tool("share_method", "pay", parameters=schema(payment_method=share)),
        Tool("setup", "pay", parameters=schema(setup_method="string")),
    ]
    graph = DataflowEnrichment(threshold=0.01).enrich(ToolRegistry(tools))
    scores = {(e.output, e.target.name, e.input): e.score for e in graph.edges_from(0)}
    assert scores[("data[].id", "share_method", "payment_method")] == 1.0
    assert scores.get(("data[].id", "setup", "setup_method"), 0.0) < 1.0  # only the whole name
    # a single word is the entity itself (the rule above), not a second name
    assert parse_role(role("id", located, "string", "method", True, "", "method")).whole == ""
    assert compound_name(("PaymentFlowsPaymentMethodList", "data", "payment_method")) == "payment method"
    # a compound read from another place than the entity is not kept (a Source inside a payment_method)
    assert parse_role(role("id", located, "string", "source", True, "", "payment method")).whole == ""
    assert compound_name(("author",)) == "" and compound_name(("io.k8s.api.apps.v1.StatefulSet",)) == ""


def test_exact_matches_of_a_tagless_apis_own_resource_rank_first() -> None:
    # Stripe has no tags: a tax id's customer goes first to the tax id operations of that
    # customer, then to the many other operations taking a `customer`.
    customer = {"type": "string", "description": "ID of the customer."}
    listed = schema(data={"type": "array", "items": schema(id="string", customer=customer)})
    tools = [
        rest_tool(
            "GetTaxIds", "/v1/customers/{customer}/tax_ids", {"customer": customer}, listed, namespace="pay"
        )
    ]
    tools.append(
        rest_tool("PostTaxIds", "/v1/customers/{customer}/tax_ids", {"customer": customer}, namespace="pay")
    )
    tools += [
        rest_tool(f"Other{n}", f"/v1/other_{n}s", {"customer": customer}, namespace="pay") for n in range(12)
    ]
    graph = DataflowEnrichment(max_neighbors=2).enrich(ToolRegistry(tools))
    targets = [e.target.name for e in graph.edges_from(0) if e.output == "data[].customer"]
    assert targets[0] == "PostTaxIds" and len(targets) == 2


def test_a_bare_label_read_with_its_entity_matches_an_input_so_named() -> None:
    # PeerTube: a channel's `name` is what `channelHandle` and `channelName` take; a role's is not
    channel = {"type": "object", "title": "VideoChannel", "properties": {"name": {"type": "string"}}}
    handle = {
        "type": "string",
        "description": "The video channel handle (example: 'my_username@example.com')",
    }
    tools = [
        Tool("getChannels", "tube", output_parameters=schema(data={"type": "array", "items": channel})),
        Tool("getChannel", "tube", parameters=schema(channelHandle=handle)),
        Tool(
            "findVideos", "tube", parameters=schema(channelName={"type": "string", "description": "Filter"})
        ),
        Tool("getRole", "tube", parameters=schema(roleName="string")),
    ]
    graph = DataflowEnrichment(threshold=0.01).enrich(ToolRegistry(tools))
    scores = {(e.target.name, e.input): e.score for e in graph.edges_from(0) if e.output == "data[].name"}
    assert scores[("getChannel", "channelHandle")] == scores[("findVideos", "channelName")] == 1.0
    assert scores.get(("getRole", "roleName"), 0.0) < 1.0


def test_a_name_or_an_id_goes_to_a_search_input_or_a_handle_only_by_what_it_is() -> None:
    # A saved query's id is no search text (`q` reads "query"), and an opaque job handle is no
    # job name: neither is an exact match.
    described = {"type": "string", "description": "ID of the saved query"}
    token = {"type": "string", "description": "Opaque token to poll with"}
    tools = [
        Tool("save_query", "db", output_parameters=schema(query_id=described, job_handle=token)),
        Tool("search_tables", "db", parameters=schema(q="string")),
        Tool("create_job", "db", parameters=schema(job_name={"type": "string", "description": "A title"})),
    ]
    graph = DataflowEnrichment(threshold=0.01).enrich(ToolRegistry(tools))
    assert all(e.score < 1.0 for e in graph.edges_from(0))


def test_the_graph_view_says_an_input_is_named_for_the_object() -> None:
    located = {"type": "string", "description": "Unique identifier for the object."}
    method = {"type": "object", "title": "payment_method", "properties": {"id": located}}
    tools = [
        Tool("get_method", "pay", output_parameters=schema(data={"type": "array", "items": method})),
        Tool("share_method", "pay", parameters=schema(payment_method="string")),
    ]
    graph = DataflowEnrichment(threshold=0.01).enrich(ToolRegistry(tools))
    (edge,) = [e for e in graph.edges_from(0) if e.input == "payment_method"]
    assert explain(edge).names == "input named for the payment method, same namespace"


def test_an_input_named_as_a_reference_to_an_entity_takes_its_identifier() -> None:
    # As Stripe's `original_source` ("The source to share.") takes a source's `id`, and its
    # `selected_shipping_method` a listed shipping method's `id` (entity method).
    located = {"type": "string", "description": "Unique identifier for the object."}
    method = {"type": "object", "title": "ShippingMethod", "properties": {"id": located}}
    tools = [
        Tool("get_card", "pay", output_parameters=schema(id=located, account="string")),
        Tool("share_card", "pay", parameters=schema(original_card="string", new_card="string")),
        Tool(
            "get_order", "pay", output_parameters=schema(shipping_methods={"type": "array", "items": method})
        ),
        Tool("update_order", "pay", parameters=schema(selected_shipping_method="string", default="string")),
        Tool("payout", "pay", parameters=schema(external_account="string")),
        Tool("share_elsewhere", "other", parameters=schema(original_card="string")),
    ]
    graph = DataflowEnrichment(threshold=0.01).enrich(ToolRegistry(tools))
    scores = {
        (e.source.name, e.output, e.target.qualified_name, e.input): e.score
        for n in range(len(tools))
        for e in graph.edges_from(n)
    }
    assert scores[("get_card", "id", "pay::share_card", "original_card")] == 1.0
    assert (
        scores[("get_order", "shipping_methods[].id", "pay::update_order", "selected_shipping_method")] == 1.0
    )
    # "new" and "external" name another object (a Stripe external account is no Connect account)
    assert scores.get(("get_card", "id", "pay::share_card", "new_card"), 0.0) < 1.0
    assert scores.get(("get_card", "account", "pay::payout", "external_account"), 0.0) < 1.0
    assert scores.get(("get_card", "id", "other::share_elsewhere", "original_card"), 0.0) < 1.0
    assert scores.get(("get_order", "shipping_methods[].id", "pay::update_order", "default"), 0.0) < 1.0
    (edge,) = [
        e
        for e in graph.edges_from(0)
        if (e.output, e.target.name, e.input) == ("id", "share_card", "original_card")
    ]
    assert explain(edge).names == "input named for a reference to the card, same namespace"
    assert referred_name("default_tax_rates") == same_name("tax_rate") and referred_name("default") == ""


def test_a_paged_lists_position_is_no_reference_to_an_entity() -> None:
    # ``previous_page`` is a page number, ``current_cursor`` a cursor token: neither takes the id
    # of a page or a cursor object, as ``previous_order`` takes an order's.
    located = {"type": "string", "description": "Unique identifier for the object."}
    tools = [
        Tool("get_page", "wiki", output_parameters=schema(id=located)),
        Tool("get_cursor", "wiki", output_parameters=schema(id=located)),
        Tool("get_order", "wiki", output_parameters=schema(id=located)),
        Tool(
            "list_revisions",
            "wiki",
            parameters=schema(
                previous_page="string",
                current_cursors="string",
                previous_order="string",
                parent_page="string",
            ),
        ),
    ]
    graph = DataflowEnrichment(threshold=0.01).enrich(ToolRegistry(tools))
    scores = {(e.source.name, e.input): e.score for n in range(len(tools)) for e in graph.edges_from(n)}
    assert scores[("get_order", "previous_order")] == 1.0
    assert scores[("get_page", "parent_page")] == 1.0  # a parent page is a page
    assert scores.get(("get_page", "previous_page"), 0.0) < 1.0
    assert scores.get(("get_cursor", "current_cursors"), 0.0) < 1.0
    positions = ("previous_page", "current_pages", "current_page_token")
    assert [referred_name(n) for n in positions] == ["", "", ""]
    assert referred_name("previous_order") == same_name("order")
    assert referred_name("default_page") == same_name("page")  # no position: a default page is a page


def test_envelopes_match_exactly_only_within_one_entity() -> None:
    # JSON:API puts every resource in `data`: Up Banking's category fed its whole `data` into a
    # transaction's tags (`data` too) as an exact name.
    resource = schema(id="string", type="string")
    listing = schema(data={"type": "array", "items": resource})
    tools = [
        rest_tool("get_category", "/categories/{id}", {"id": "string"}, schema(data=resource)),
        rest_tool("get_tags", "/tags", {}, listing),
        rest_tool(
            "add_tags",
            "/transactions/{transactionId}/relationships/tags",
            {"transactionId": "string", "data": {"type": "array", "items": resource}},
        ),
    ]
    assert parse_role(role("data", {}, "object", "category")).place == "category"
    assert role("data", {}, "object") == role("attributes", {}, "object") == ""  # no entity known
    graph = DataflowEnrichment(threshold=0.01).enrich(ToolRegistry(tools))
    score = {
        (e.source.name, e.target.name, e.input): e.score
        for n in range(len(tools))
        for e in graph.edges_from(n)
    }
    assert score[("get_tags", "add_tags", "data")] == 1.0
    assert score.get(("get_category", "add_tags", "data"), 0.0) < 1.0
