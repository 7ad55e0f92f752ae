"""Tests for fms_dgt/core/tools/enrichments/_dataflow_entities.py: identifiers and their entities."""

from __future__ import annotations

import pytest

from fms_dgt.core.tools.enrichments._dataflow_entities import (
    api_name,
    bare_label,
    context_entity,
    entity_key,
    name_entity,
    name_text,
    parse_role,
    path_entity,
    role,
    singular,
    words,
)
from fms_dgt.core.tools.enrichments._dataflow_scoring import entity_table


def test_words_split_snake_camel_acronyms_and_digits() -> None:
    assert words("originSkyId") == ["origin", "sky", "id"]
    assert words("authorID") == ["author", "id"]
    assert words("HTMLFileName") == ["html", "file", "name"]
    assert words("From_Currency Code") == ["from", "currency", "code"]
    assert name_text("artistId") == name_text("artist_id") == "artist id"
    assert [singular(w) for w in ("tickets", "categories", "status", "address")] == [
        "ticket",
        "category",
        "status",
        "address",
    ]


@pytest.mark.parametrize(
    ("name", "description", "expected"),
    [
        ("event_id", "", "id:event|"),
        ("petId", "", "id:pet|"),
        ("originSkyId", "", "id:sky|"),
        ("geoId", "The unique identifier for the location", "id:geo|location"),
        ("receiver_id", "User ID of the user to send the message to.", "id:receiver|user"),
        ("id", "ID of the posted tweet.", "id:|tweet"),
        ("id", "Unique Spotify ID of the album or single.", "id:|album"),
        ("id", "Hotel ID", "id:|hotel"),
        ("accessionNumber", "SEC Filing Identifier", "id:accession|filing"),
        ("cik", "Central Index Key (CIK)", "id:cik|index"),
        ("user_ids", "", "id:user|"),
        ("key", "The key under which the value is stored. The key must be case-sensitive.", "id:|CTX"),
        # a list of id forms names no entity: the context decides
        ("id", "The object id, uuid or short uuid", "id:|CTX"),
    ],
)
def test_identifiers_carry_the_entity_they_name(name: str, description: str, expected: str) -> None:
    assert role(name, {"description": description}, "string", "CTX") == expected


@pytest.mark.parametrize("name", ["page_number", "phone_number", "username", "title", "order_history"])
def test_other_names_are_not_identifiers(name: str) -> None:
    assert not parse_role(role(name, {}, "string")).identifier


def test_objects_and_booleans_are_never_identifiers() -> None:
    assert role("user_id", {}, "object") == role("is_id", {}, "boolean") == ""


def test_labels_and_search_inputs() -> None:
    assert role("title", {}, "string", output=True) == "label"
    assert role("quoteText", {}, "string", output=True) == "label"
    assert role("query", {}, "string", output=False) == "query"
    assert role("keyword", {}, "string", output=True) == "label"
    assert role("title", {}, "integer", output=True) == ""
    assert role("query", {}, "string", output=True) == "label"


def test_context_entity_from_holders_titles_and_tool_names() -> None:
    assert context_entity("Goodreads_Search_Book", ("author",)) == "author"
    assert context_entity("x", ("matching_tweets",)) == "tweet"
    assert context_entity("x", ("Forecast",)) == "forecast"
    # The nearest holder that names something wins: the tree's comment, not the tree.
    tree = ("VideoCommentThreadTree", "children", "VideoCommentThreadTree", "comment")
    assert context_entity("x", tree) == "comment"
    assert context_entity("x", ("Forecast", "data")) == "forecast"  # "data" names nothing
    assert context_entity("getPet") == context_entity("listPets") == "pet"
    assert context_entity("TripadvisorSearchLocation") == "location"
    assert context_entity("Spotify_Scraper_Get_Artist_Overview") == "artist"
    # The context is only asked for when neither the name nor the description names an entity.
    asked: list[int] = []
    role("ticket_id", {}, "string", lambda: asked.append(1) or "x")
    assert asked == []
    assert role("id", {}, "string", lambda: "pet") == "id:|pet"


def test_parse_role_reads_what_role_writes() -> None:
    parsed = parse_role("id:user|contact")
    assert parsed.identifier and (parsed.a, parsed.b, parsed.kind) == ("user", "contact", "id")
    assert not parse_role("label").identifier


def test_bare_labels_carry_the_entity_they_sit_in() -> None:
    assert role("name", {}, "string", "pool", output=True) == "label@pool"
    assert role("name", {}, "string", lambda: "role", output=False) == "@role"
    assert role("pool_name", {}, "string", "x", output=True) == "label"  # not bare: no entity
    assert role("name", {}, "string", "", output=True) == "label"
    parsed = parse_role("label@pool")
    assert not parsed.identifier and (parsed.kind, parsed.place) == ("label", "pool")


def test_abbreviations_read_as_the_words_they_stand_for() -> None:
    assert name_text("lat") == "latitude" and name_text("lng") == name_text("lon") == "longitude"
    assert name_text("src_lang") == "source language"
    assert name_text("latitude") == "latitude"
    # a handle is the name a person gives (PeerTube's channelHandle takes a channel's name): its
    # text reads so; an exact name does not (an opaque job_handle is no job_name)
    assert name_text("channelHandle") == "channel name"
    assert name_text("channelHandle", synonyms=False) == "channel handle"


def test_bare_labels_and_text_inputs() -> None:
    assert bare_label("name") and bare_label("Title") and not bare_label("user_name")
    text = {"description": "The text to be translated."}
    assert role("src", text, "string", output=False) == "query"
    assert role("src", {"description": "The source file."}, "string", output=False) == ""
    assert role("transcript", {}, "string") == "label"


def test_path_entity_reads_the_collection_a_parameter_or_result_belongs_to() -> None:
    path = "/api/v1/videos/{id}/comment-threads/{threadId}"
    assert path_entity(path, "id") == "video"
    assert path_entity(path, "threadId") == "thread"
    assert path_entity(path) == "thread"  # the result: what the last collection holds
    assert path_entity("/pools/{pool_name}", "pool_name") == "pool"
    assert path_entity("/api/v1/videos") == "video"
    assert path_entity("/pets/{petId}", "other") == ""  # not a parameter of the path
    assert path_entity("/{id}", "id") == path_entity("/api/v1") == ""


def test_version_words_name_no_entity_of_a_tool() -> None:
    assert context_entity("get_api_v1_videos_by_id_comment_threads") == "video"
    # a REST path says what the result is about better than a name made from it
    assert (
        context_entity("get_api_v1_videos_by_id_comment_threads", path="/api/v1/videos/{id}/comment-threads")
        == "thread"
    )
    assert context_entity("x", ("account",), path="/videos") == "account"  # where it sits comes first


def test_generic_words_name_no_entity_so_the_context_does() -> None:
    # PeerTube describes its user path parameter as "Entity id": it names no entity, so the id
    # takes the user of its path; Kubernetes keeps names in a `metadata` object.
    assert role("id", {"description": "Entity id"}, "integer", "user", output=False) == "id:|user"
    assert context_entity(
        "readNamespacedConfigMap", ("metadata",), "/namespaces/{namespace}/configmaps/{name}"
    ) == ("configmap")


@pytest.mark.parametrize(
    ("name", "description", "expected"),
    [
        # Train Travel's trip search: the names say nothing, the descriptions say what they hold.
        ("origin", "The ID of the origin station", "id:|station"),
        ("source", "Unique station identifier.", "id:|station"),
        ("home", "Station ID", "id:|station"),
        # a description that does not start by declaring an identifier leaves a plain value
        ("date", "The date of the trip", ""),
        ("filter", "Filter by ID", ""),
        ("ref", "The unique identifier for the object.", ""),
    ],
)
def test_a_description_that_declares_an_identifier_makes_one(
    name: str, description: str, expected: str
) -> None:
    assert role(name, {"description": description}, "string", output=False) == expected


def test_a_participle_after_its_noun_ends_the_phrase_of_a_description() -> None:
    found = role(
        "within", {"description": "Unique ID of the planet containing objects being searched"}, "string"
    )
    assert found == "id:|planet"  # the phrase names a planet, not "being"
    assert role("place", {"description": "ID of the planet containing moons"}, "string") == "id:|planet"


def test_a_declared_identifiers_phrase_keeps_its_inner_articles() -> None:
    # "this" ends the phrase: the summary is not what the id names.
    described = {"description": "The ID of the subscription item this summary is describing."}
    # a compound in a description reads as in a name: the subscription item of /subscription_items
    assert role("subscription_item", described, "string") == "id:|subscription item"
    assert path_entity("/v1/subscription_items/{item}", "item") == "subscription item"
    assert role("origin", {"description": "The ID of this station"}, "string") == "id:|station"


def test_a_compound_whose_head_names_no_entity_alone_is_one_entity() -> None:
    # Stripe's subscription items are not subscriptions: their ids must not feed a subscription's.
    assert path_entity("/v1/subscription_items/{item}", "item") == "subscription item"
    assert context_entity("GetSubscriptionItems", ("data", "subscription_item")) == "subscription item"
    assert context_entity("op", ("zone_records",)) == "zone record"
    assert (
        path_entity("/v1/subscriptions/{subscription}/items") == "subscription"
    )  # "items" alone: a container
    # a dotted schema name reads its last part as one word, as a path writes it (Kubernetes)
    assert context_entity("readPod", ("io.k8s.api.core.v1.Pod",)) == "pod"
    assert (
        context_entity("op", ("io.k8s.api.apps.v1.StatefulSet",))
        == path_entity("/statefulsets")
        == "statefulset"
    )
    assert context_entity("op", ("v1",), "/api/v1/namespaces/{namespace}/services") == "service"


def test_plurals_schema_suffixes_and_path_segments_read_as_their_entity() -> None:
    assert [singular(w) for w in ("movies", "classes", "series", "species", "cities")] == [
        "movie",
        "class",
        "series",
        "species",
        "city",
    ]
    # Stripe's /v1/skus/{id} is a SKU's: an acronym ending in u takes an s; Latin words keep theirs.
    assert [singular(w) for w in ("skus", "cpus", "status", "campus", "bus", "plus")] == [
        "sku",
        "cpu",
        "status",
        "campus",
        "bus",
        "plus",
    ]
    assert path_entity("/v1/skus/{id}", "id") == "sku"
    # Star Trek: schema names end in Full or Base; /tradingCardSet is a set, not a verb.
    assert context_entity("get_movie", ("MovieFullResponse", "movie", "MovieFull")) == "movie"
    assert context_entity("get_staff", ("StaffBase",)) == "staff"
    assert path_entity("/tradingCardSet") == "set"
    assert path_entity("/v1/payouts/{payout}/cancel") == "payout"


def test_uid_is_an_identifier_word() -> None:
    assert role("tradingCardSetUid", {"description": "UID of trading card set"}, "string") == "id:set|set"
    assert role("uid", {"description": "Movie unique ID"}, "string", "movie") == "id:|movie"


def test_schema_names_that_are_about_another_object_name_no_entity() -> None:
    # Header and Summary are schema-name suffixes, as Full and Base are (Star Trek, PeerTube).
    assert context_entity("get_movie", ("movies", "MovieBase", "mainDirector", "StaffHeader")) == "staff"
    assert context_entity("getVideos", ("data", "Video", "channel", "VideoChannelSummary")) == "channel"
    # Kubernetes: metadata (an ObjectMeta) and references to other objects name nothing, so the
    # resource the path names owns a metadata.name.
    object_meta = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    meta = ("items", "io.k8s.api.core.v1.Secret", "metadata", object_meta)
    assert context_entity("listSecret", meta) == "secret"
    assert name_entity("io.k8s.api.core.v1.LocalObjectReference") == ""
    assert name_entity("io.k8s.api.apps.v1.StatefulSet") == "statefulset"


def test_a_bare_identifier_in_a_named_object_names_its_holder_and_its_schema() -> None:
    # A movie's mainDirector is a StaffHeader: its uid is a director's and a staff member's.
    assert role("uid", {}, "string", "staff", holder="director") == "id:director|staff"
    assert role("uid", {}, "string", "staff", holder="staff") == "id:|staff"
    # the identifier's own name or description still decides first
    assert role("staffUid", {}, "string", "staff", holder="director") == "id:staff|"


def test_a_markdown_link_reads_as_its_text() -> None:
    # Stripe links its entities; the address is not what the id names ("stripe", "docs").
    described = {
        "description": "The ID of the [invoice item](https://stripe.com/docs/api/invoiceitems) of this line."
    }
    assert role("invoice_item", described, "string") == "id:|invoice item"
    linked = {"description": "A [tax code](https://stripe.com/docs/tax/tax-codes) ID. Shipping is `txcd_1`."}
    assert role("tax_code", linked, "string", output=False) == "id:|code"


def test_a_dash_or_comma_ends_the_phrase_an_identifier_names() -> None:
    dashed = {"description": "The ID of an external account - only return payouts sent to it."}
    assert role("destination", dashed, "string", output=False) == "id:|account"
    comma = {"description": "ID of the customer, if any, that owns the card."}
    assert role("owner", comma, "string", output=False) == "id:|customer"
    # without the dash the phrase runs on and its head is another word
    assert role("destination", {"description": "The ID of an account payout"}, "string") == "id:|payout"


def test_qualifiers_before_the_noun_are_skipped() -> None:
    described = {"description": "The ID of the original expired Checkout Session that triggered it."}
    assert role("recovered_from", described, "string") == "id:|session"
    # a word that ends a phrase ends it even where it may qualify a noun ("to", "from"); a
    # qualifier that is the phrase's only noun is the entity (Stripe's sources)
    funds = {"description": "The ID of a source to transfer funds from."}
    assert role("source", funds, "string", output=False) == "id:|source"
    assert role("station", {"description": "The ID of the origin station"}, "string") == "id:|station"


def test_a_schema_named_by_a_qualifying_word_names_that_entity() -> None:
    # a top-up's `source` is a Source object: its id is a source's, not the top-up's
    assert (
        context_entity("GetTopupsTopup", ("topup", "source", "source"), titles=("topup", "source"))
        == "source"
    )
    # a property so named, without a schema name, says only where the object sits
    assert context_entity("getFolder", ("folder", "parent"), titles=("folder",)) == "folder"


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        ("ID of the invoice line item being credited", "id:|line item"),
        ("ID of the subscription once managed by the schedule", "id:|subscription"),
        ("The person's ID number, as appropriate for their country.", "id:|person"),
        ("The person\u2019s ID", "id:|person"),
    ],
)
def test_adverbs_participles_and_possessives_end_or_leave_the_phrase(description: str, expected: str) -> None:
    assert role("ref_number", {"description": description}, "string").replace("id:ref|", "id:|") == expected


@pytest.mark.parametrize(
    ("description", "expected"),
    [("Shipping rate ID.", "id:|rate"), ("A tax code ID", "id:|code"), ("Get ID of the pet", "")],
)
def test_a_description_may_declare_an_identifier_after_a_noun_phrase(description: str, expected: str) -> None:
    assert role("ref", {"description": description}, "string", output=False) == expected


def test_entities_compare_without_spaces() -> None:
    assert entity_key("invoice item") == entity_key("invoiceitem") == "invoiceitem"
    table = entity_table(["id:invoice item|", "id:|invoiceitem", "id:|invoice"])
    first, second = table.first, table.second
    assert first[0] == second[1] >= 0  # one entity, from a description and from a path
    assert second[2] not in (first[0], -1)


def test_words_found_by_reading_whole_unlabelled_specs() -> None:
    # PeerTube: "object id for the user tied to this account" names a user, not "tied".
    tied = {"description": "object id for the user tied to this account"}
    assert role("userId", tied, "integer") == "id:user|user"
    assert role("ref", {"description": "ID of the feed"}, "string") == "id:|feed"  # "feed" is no participle
    assert role("embed_id", {}, "string") == "id:embed|"  # nor is "embed"
    # "key" names an entity (a deploy key, an API key); "id" does not
    assert path_entity("/repos/{owner}/{repo}/keys/{key_id}", "key_id") == "key"
    # a schema suffix names no entity: a PeerTube AbuseStateConstant is an abuse state
    assert context_entity("getAbuses", ("state", "AbuseStateConstant")) == "state"
    assert context_entity("listNode", ("io.k8s.api.core.v1.NodeSpec",)) == ""
    # Airflow: a try number counts attempts; a foreign key names no "foreign" entity
    assert role("try_number", {}, "integer") == ""
    assert (
        role("pickle_id", {"description": "Foreign key to the latest pickle_id"}, "integer")
        == "id:pickle|pickle"
    )
    # an id word names no entity: Stripe's /tax_ids/{id} and its TaxId objects are a tax's
    assert path_entity("/v1/customers/{customer}/tax_ids/{id}", "id") == "tax"
    assert context_entity("GetCustomersCustomerTaxIdsId", ("tax_id",)) == "tax"


def test_a_hostile_description_is_read_only_as_far_as_a_first_sentence_goes() -> None:
    # 200,000 unclosed "[" (the link pattern tried 200 characters at each one) read as nothing
    assert role("ref_id", {"description": "[" * 200_000}, "string") == "id:ref|"
    late = {"description": "x " * 2_000 + "The ID of the pet"}  # past what is read: no entity from it
    assert role("ref_id", late, "string") == "id:ref|"


@pytest.mark.parametrize(
    ("tool_name", "api"),
    [
        ("Spotify_Scraper_Get_Artist", "spotify"),
        ("Tripadvisor_Search_Hotels", "tripadvisor"),
        ("TripadvisorSearchHotels", "tripadvisor"),  # one API however it is written
        ("SEC_Filings", "sec"),
        ("get_weather", ""),  # an operation alone names no API
        ("lockDoors", ""),
        ("GetCharges", ""),
        ("AppointmentRegistration", ""),  # API-Bank: no verb after its first word
        ("_", ""),
        ("", ""),
    ],
)
def test_an_api_name_is_read_only_from_a_name_that_surely_holds_one(tool_name: str, api: str) -> None:
    assert api_name(tool_name) == api
