"""Tests of coherent arguments across the calls of a record (fms_dgt/databuilders/tool_calling/values.py)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fms_dgt.core.tools._fake_data import PLACE_INDEX
from fms_dgt.core.tools.data_objects import Tool, ToolCall
from fms_dgt.core.tools.loaders.file import FileToolLoader
from fms_dgt.core.tools.schema import get_validator
from fms_dgt.core.tools.synth import SynthesisError
from fms_dgt.databuilders.tool_calling.plan import PlannedCall, Wire
from fms_dgt.databuilders.tool_calling.values import EntityContext, arguments
from fms_dgt.databuilders.tool_calling.wiring import apart, same_api

REPO = Path(__file__).resolve().parents[3]
STRING = {"type": "string"}


def _tool(name: str, required: bool = True, **props: Any) -> Tool:
    schema = {"type": "object", "properties": props, "required": list(props) if required else []}
    return Tool(name, "t", parameters=schema)


BOOK = _tool(
    "book_hotel",
    user_id=STRING,
    city=STRING,
    country_code={"type": "string", "pattern": "^[A-Z]{2}$"},
    check_in={"type": "string", "format": "date"},
    check_out={"type": "string", "format": "date"},
)
PAY = _tool(
    "charge_card",
    user_id={"type": "integer"},
    email={"type": "string", "format": "email"},
    amount={"type": "number", "minimum": 1},
    currency={"enum": ["USD", "EUR", "GBP", "JPY"]},
    card_number=STRING,
)
NOTIFY = _tool("send_confirmation", email=STRING, customer_name=STRING, amount=STRING, start_date=STRING)
LOOKUP = _tool("geocode", city=STRING, country=STRING)


def _record(index: int, tools: list[Tool]) -> tuple[EntityContext, list[tuple[Tool, dict[str, Any]]]]:
    context = EntityContext.for_record(7, index)
    calls = [(tool, arguments(tool, context, random.Random(f"{index}:{i}"))) for i, tool in enumerate(tools)]
    return context, calls


def test_calls_of_one_record_agree_on_their_entities() -> None:
    users, cities = set(), set()
    for index in range(60):
        context, calls = _record(index, [LOOKUP, BOOK, PAY, NOTIFY, BOOK])
        geo, book, pay, notify, again = (args for _, args in calls)
        assert context.conflicts(calls) == []
        assert book["user_id"] == f"usr-{pay['user_id']}" and again == book
        assert geo["city"] == book["city"] and PLACE_INDEX[book["city"].lower()].code == book["country_code"]
        assert geo["country"] == PLACE_INDEX[geo["city"].lower()].country
        assert book["check_in"] < book["check_out"] and notify["start_date"] == book["check_in"]
        assert pay["email"] == notify["email"]
        assert notify["customer_name"].split()[0].lower() in pay["email"]
        assert float(notify["amount"]) == pay["amount"]
        users.add(pay["user_id"])
        cities.add(geo["city"])
    assert len(users) > 50 and len(cities) > 20, "records differ from one another"


def test_an_enum_takes_the_records_own_value_when_it_can() -> None:
    for index in range(40):
        _, calls = _record(index, [LOOKUP, PAY])
        home = PLACE_INDEX[calls[0][1]["city"].lower()].currency
        if home in ("USD", "EUR", "GBP", "JPY"):
            assert calls[1][1]["currency"] == home


def test_fixed_arguments_win_and_become_the_records_entities() -> None:
    context = EntityContext.for_record(1, 1)
    first = arguments(PAY, context, random.Random(1), fixed={"user_id": 4242, "email": "ada@example.org"})
    assert first["user_id"] == 4242 and first["email"] == "ada@example.org"
    later = arguments(BOOK, context, random.Random(2))
    assert later["user_id"] == "usr-4242"
    assert context.values()["id.user@"] == 4242 and json.dumps(context.values())


def test_a_fixed_value_the_schema_refuses_is_an_error_never_sent() -> None:
    with pytest.raises(SynthesisError, match="wired into user_id"):
        arguments(PAY, EntityContext.for_record(1, 2), random.Random(1), fixed={"user_id": "not a number"})


def test_arguments_always_validate_even_under_constraints_across_properties() -> None:
    tool = Tool(
        "t",
        "x",
        parameters={
            "type": "object",
            "properties": {"city": STRING, "zip": STRING, "email": STRING},
            "required": ["city"],
            "dependentRequired": {"city": ["zip"]},
            "not": {"required": ["email"]},
            "additionalProperties": False,
        },
    )
    validator = get_validator(tool.parameters, tool.fingerprint)
    for index in range(30):
        assert validator.is_valid(arguments(tool, EntityContext.for_record(3, index), random.Random(index)))


def test_results_teach_the_context_their_entities() -> None:
    create = Tool(
        "create_order",
        "shop",
        output_parameters={"type": "object", "properties": {"order_id": STRING}},
    )
    cancel = _tool("cancel_order", order_id=STRING, reason=STRING)
    context = EntityContext.for_record(5, 5)
    context.learn(create, {"order_id": "ord-31337"})
    assert arguments(cancel, context, random.Random(1))["order_id"] == "ord-31337"


def test_conflicts_name_the_calls_and_the_disagreement() -> None:
    context = EntityContext.for_record(1, 1)
    calls = [
        (BOOK, {"user_id": "usr-1", "city": "Nairobi", "country_code": "IS", "check_in": "2026-03-05"}),
        (PAY, {"user_id": 2, "email": "a@example.org"}),
        (BOOK, {"user_id": "usr-1", "check_out": "2026-03-02"}),
    ]
    found = context.conflicts(calls)
    assert len(found) == 3, found
    assert "call 0 (t::book_hotel) and call 1 (t::charge_card): id.user@ is 'usr-1' and 2" in found
    assert any("'Nairobi' is in Kenya (KE), not 'IS'" in c for c in found)
    assert any("the end '2026-03-02' comes before the start '2026-03-05'" in c for c in found)
    planned = [PlannedCall(tool=t, call=ToolCall(t.qualified_name, a)) for t, a in calls]
    assert context.conflicts(planned) == found
    assert context.conflicts([(BOOK, {"user_id": "usr-0001"}), (PAY, {"user_id": 1})]) == [], "one id"


def test_a_value_wired_from_a_result_may_differ_unless_it_names_a_person() -> None:
    context = EntityContext.for_record(1, 1)
    pay = PlannedCall(tool=PAY, call=ToolCall(PAY.qualified_name, {"amount": 12.5, "user_id": 7}))
    charged = PlannedCall(
        tool=PAY,
        call=ToolCall(PAY.qualified_name, {"amount": 69.41, "user_id": 8}),
        wired={"amount": Wire("t::convert", "converted_amount"), "user_id": Wire("t::find_user", "user_id")},
    )
    found = context.conflicts([pay, charged])
    # The amount converted is another amount; a user found is still the record's one user.
    assert found == ["call 0 (t::charge_card) and call 1 (t::charge_card): id.user@ is 7 and 8"], found
    charged.wired.pop("amount")
    assert len(context.conflicts([pay, charged])) == 2  # a stated amount must agree


@pytest.mark.corpus
@pytest.mark.parametrize(
    "relative",
    [
        "bfcl/BFCL_v4_multiple.json",
        "bfcl/BFCL_v4_simple_python.json",
        "bfcl/multi_turn_func_doc",
        "toolbench/G1_query.json",
        "api-bank/tool_catalog.json",
        "api-bank/openai_tools.json",
        "toolmind/APIGen-MT-5k-query_tools.yaml",
        "toolmind/glaive-function-calling-v2-query_tools.yaml",
        "toolmind/When2Call-query_tools.yaml",
    ],
)
def test_every_corpus_tool_gets_valid_arguments(corpus: Path, relative: str) -> None:
    path = corpus / "toolsets" / relative
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    tools = [tool for file in files for tool in FileToolLoader(file).load()]
    assert tools
    context = EntityContext.for_record(0, 0)
    for i, tool in enumerate(tools):
        if i % 3 == 0:
            context = EntityContext.for_record(0, i)  # a record of a few calls
        args = arguments(tool, context, random.Random(i), optional_probability=0.8)
        assert get_validator(tool.parameters, tool.fingerprint).is_valid(args), (tool.qualified_name, args)


def test_the_same_arguments_in_another_process_and_hash_seed() -> None:
    code = (
        "import random, json;"
        "from fms_dgt.core.tools.loaders.file import FileToolLoader;"
        "from fms_dgt.databuilders.tool_calling.values import EntityContext, arguments;"
        "tools = FileToolLoader('data/api_bank_sample.json').load() + "
        "FileToolLoader('data/weather_tools.yaml').load();"
        "out = [];"
        "[out.append([arguments(t, c, random.Random(j)) for j, t in enumerate(tools)]) "
        "for c in (EntityContext.for_record(9, i) for i in range(5))];"
        "print(json.dumps(out))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            cwd=REPO,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("0", "31337")
    }
    assert len(outputs) == 1 and len(outputs.pop()) > 100


def test_a_ranges_lower_bound_is_never_above_its_upper_bound() -> None:
    # Airflow's task instances were listed "with duration gte 99.69, with duration lte 3.31": a
    # filter nothing passes. Stripe nests its bounds (created: {gte, lte}).
    number = {"type": "number", "minimum": 0, "maximum": 100}
    stamp = {"type": "string", "format": "date-time"}
    tool = Tool(
        "get_task_instances",
        "flow",
        parameters={
            "type": "object",
            "properties": {
                "duration_gte": number,
                "duration_lte": number,
                "priceMin": number,
                "priceMax": number,
                "min_rating": number,
                "max_rating": number,
                "created": {"type": "object", "properties": {"gte": stamp, "lte": stamp}},
            },
            "required": ["duration_gte", "duration_lte", "priceMin", "priceMax", "min_rating", "max_rating"],
        },
    )
    swapped = 0
    for seed in range(60):
        args = arguments(
            tool, EntityContext(random.Random(seed)), random.Random(seed), optional_probability=1.0
        )
        assert get_validator(tool.parameters).is_valid(args)
        for low, high in (
            ("duration_gte", "duration_lte"),
            ("priceMin", "priceMax"),
            ("min_rating", "max_rating"),
        ):
            assert args[low] <= args[high], args
        created = args.get("created", {})
        if "gte" in created and "lte" in created:
            assert created["gte"] <= created["lte"], created
            swapped += 1
    assert swapped >= 10  # the nested range was drawn often enough to be checked
    # A wired bound is what an earlier call returned: it stays, whatever the other one is.
    fixed = arguments(tool, EntityContext(random.Random(1)), random.Random(1), fixed={"duration_gte": 100})
    assert fixed["duration_gte"] == 100


def test_values_of_different_kinds_of_thing_are_apart() -> None:
    def tool(name: str, inputs: dict[str, str], outputs: dict[str, str]) -> Tool:
        def props(names: dict[str, str]) -> dict[str, Any]:
            return {"type": "object", "properties": {n: {"type": t} for n, t in names.items()}}

        return Tool(name, "ns", parameters=props(inputs), output_parameters=props(outputs))

    booked = tool("book", {}, {"appointment_id": "string", "date": "string", "email": "string"})
    modify = tool(
        "modify",
        {
            "appointment_id": "string",
            "new_date": "string",
            "doctor": "string",
            "user_id": "string",
            "order_by": "string",
        },
        {},
    )
    context = EntityContext(random.Random(1))
    assert context.apart(booked, "appointment_id", modify, "new_date")  # an id is no date
    assert context.apart(booked, "appointment_id", modify, "doctor")  # nor a doctor's name
    assert context.apart(booked, "date", modify, "appointment_id")
    assert context.apart(booked, "appointment_id", modify, "order_by")  # a field to sort by
    played = tool("play", {}, {"status": "string", "token": "string"})
    register = tool("register", {"password": "string", "api_token": "string"}, {})
    assert context.apart(played, "status", register, "password")  # a player's status: no password
    assert not context.apart(played, "token", register, "api_token")
    assert not context.apart(booked, "appointment_id", modify, "appointment_id")
    assert not context.apart(booked, "date", modify, "new_date")
    assert not context.apart(booked, "email", modify, "user_id")  # an email may be a user's id
    # A result named only as a result is what its tool's words or inputs say it is.
    assert not context.apart(tool("get_doctor", {}, {}), "", modify, "doctor")
    assert context.apart(booked, "", modify, "doctor")  # a booking's whole result is no doctor


def _io(name: str, namespace: str = "ns", *, inputs: str = "", outputs: str = "", **schemas: Any) -> Tool:
    """A tool with one input and one output named so (strings, unless ``schemas`` says otherwise)."""

    def props(prop: str) -> dict[str, Any]:
        return {"type": "object", "properties": {prop: schemas.get(prop, {"type": "string"})}} if prop else {}

    return Tool(name, namespace, parameters=props(inputs), output_parameters=props(outputs))


def test_another_apis_past_moment_is_no_moment_to_schedule() -> None:
    dag = _io("get_dag", "airflow", outputs="last_parsed_time")
    context = EntityContext(random.Random(1))
    assert context.apart(dag, "last_parsed_time", _io("AddAlarm", "apibank", inputs="time"), "time")
    runs = _io("get_dag_runs", "airflow", inputs="start_date_gte")
    assert not context.apart(dag, "last_parsed_time", runs, "start_date_gte")  # one API: a bound


def test_the_sort_of_a_thing_is_no_name_of_one() -> None:
    feed = _io("update_bank_feed", outputs="accountType")
    context = EntityContext(random.Random(1))
    assert context.apart(feed, "accountType", _io("getAccount", inputs="name"), "name")
    listing = _io("list_accounts", inputs="account_type")
    assert not context.apart(feed, "accountType", listing, "account_type")


def test_how_a_call_went_is_no_name_of_anything() -> None:
    funded = _io("fund_account", "bank", outputs="status")
    context = EntityContext(random.Random(1))
    assert context.apart(funded, "status", _io("museum_hours", inputs="museum"), "museum")
    listing = _io("list_orders", "bank", inputs="order_status")
    assert not context.apart(funded, "status", listing, "order_status")
    # glaive: a cancelled order's status became a social media post ("with the status, post a
    # status"); a status filters a listing, it is set by no other action.
    posted = _io("post_social_media_status", "bank", inputs="status")
    assert context.apart(funded, "status", posted, "status")
    # Airflow: a new DAG run's state was set as that run's new state ("take the state and update").
    run = _io("post_dag_run", "airflow", outputs="state")
    assert context.apart(run, "state", _io("update_dag_run_state", "airflow", inputs="state"), "state")
    assert not context.apart(run, "state", _io("get_dag_runs", "airflow", inputs="state"), "state")


def test_a_tool_whose_name_has_no_words_is_no_crash() -> None:
    # A tool file may name a tool "_": reading its first word raised IndexError in the planner.
    funded = _io("fund_account", "bank", outputs="status")
    assert apart(funded, "status", _io("_", "bank", inputs="status"), "status")
    assert not apart(_io("_", "bank", outputs="city"), "city", _io("__", "bank", inputs="city"), "city")


def test_another_apis_value_is_wired_only_when_it_means_the_same_everywhere() -> None:
    # A car's door status went into a video upload's body, a bank account's type into a trade's
    # order type, an Instagram user id into a tweet tool's user id; a customer's city into a
    # distance estimate and an arithmetic answer into another calculator are what people do.
    context = EntityContext(random.Random(1))
    car = _io("displayCarStatus", "vehicle", outputs="lockStatus")
    tickets = _io("get_user_tickets", "ticket", inputs="status")
    assert context.apart(car, "lockStatus", tickets, "status")
    assert not context.apart(car, "lockStatus", _io("list", "vehicle", inputs="status"), "status")
    customer = _io("getCustomer", "voip", outputs="city")
    assert not context.apart(customer, "city", _io("estimate_distance", "car", inputs="cityA"), "cityA")
    user = _io("Instagram_Search_User", "nestful", outputs="user_id")
    assert context.apart(user, "user_id", _io("user_likes", "w2c", inputs="user_id"), "user_id")
    added = _io("add", "w2c", outputs="result", result={"type": "number"})
    root = _io("square_root", "glaive", inputs="number", number={"type": "number"})
    assert not context.apart(added, "result", root, "number")
    link = _io("get_extra_links", "airflow", outputs="name")
    assert context.apart(link, "name", _io("OpenBankAccount", "bank", inputs="name"), "name")
    count = _io("company", "sec", outputs="count", count={"type": "integer"})
    tweets = _io("get_user_tweets", "x", inputs="count", count={"type": "integer"})
    assert context.apart(count, "count", tweets, "count")


def test_a_thing_nothing_says_is_someone_is_no_ones_name() -> None:
    # API-Bank: QueryRegistration's appointments went into AppointmentRegistration's doctor_name.
    listed = _io("QueryRegistration", "bank", outputs="appointments")
    register = _io("AppointmentRegistration", "bank", inputs="doctor_name")
    assert apart(listed, "appointments[]", register, "doctor_name")
    users = _io("list_users", "g", outputs="user_list")
    post = _io("analyze_post", "g", inputs="username")
    assert not apart(users, "user_list[]", post, "username")  # a user list's item is a user
    # nor a place, a moment or a word of the vocabulary: glaive's user list became a recipe's
    # ingredients, a transaction history a route's locations, and Airflow's DAG file location
    # the token its source is read by
    recipes = _io("find_recipe", "g", inputs="ingredients")
    assert apart(users, "user_list[]", recipes, "ingredients")
    route = _io("calculate_route_distance", "g", inputs="locations")
    assert apart(
        _io("get_history", "g", outputs="transaction_history"), "transaction_history", route, "locations"
    )
    source = _io("get_dag_source", "airflow", inputs="file_token")
    assert apart(_io("get_dag", "airflow", outputs="fileloc"), "fileloc", source, "file_token")
    assert not apart(_io("get_dag", "airflow", outputs="file_token"), "file_token", source, "file_token")
    # a code of a closed list takes only its own kind: Tripadvisor's open status was a currency
    details = _io("Tripadvisor_Get_Restaurant_Details", "n", inputs="currencyCode")
    found = _io("Tripadvisor_Search_Restaurants", "n", outputs="currentOpenStatusCategory")
    assert apart(found, "currentOpenStatusCategory", details, "currencyCode")
    # sharing a word, another API's value nothing says the kind of still stays its own: a
    # Canadian province's French name was a Codat bank feed's account name
    province = _io("Province", "holidays", outputs="nameFr")
    feed = _io("update-bank-feed", "codat", inputs="accountName")
    assert apart(province, "province.nameFr", feed, "accountName")
    # a sort word is no shared word: a withdrawal, a transaction's type, was an order's type
    order = _io("place_order", "trading", inputs="order_type")
    assert apart(
        _io("get_history", "trading", outputs="type"), "transaction_history[].type", order, "order_type"
    )


def test_how_many_to_list_takes_no_count_of_something_else() -> None:
    # PeerTube: a video's account.followersCount became the page size of a playlist listing.
    video = _io("getVideo", "tube", outputs="followersCount", followersCount={"type": "integer"})
    listing = _io("getPlaylists", "tube", inputs="count", count={"type": "integer"})
    assert apart(video, "account.followersCount", listing, "count")
    summed = _io("sum", "tube", outputs="result", result={"type": "integer"})
    assert not apart(summed, "result", listing, "count")  # a computed number may be how many


def test_apis_of_a_catalogue_are_told_apart_by_the_names_of_their_tools() -> None:
    # NESTFUL holds many APIs in one namespace and names each tool <API>_<operation>.
    hotels, artist = _io("Tripadvisor_Search_Hotels", "n"), _io("Spotify_Scraper_Get_Artist", "n")
    assert not same_api(hotels, artist)
    assert same_api(hotels, _io("TripadvisorSearchRestaurants", "n"))
    assert same_api(_io("lockDoors", "v"), _io("displayCarStatus", "v"))
    assert same_api(_io("AppointmentRegistration", "b"), _io("ModifyMeeting", "b"))
    assert same_api(_io("GetCharges", "s"), _io("Get_Country_Details", "s"))
    assert not same_api(_io("get", "one"), _io("get", "two"))
    # Beside a tool named for its API, a tool is of that API only when its name starts with it:
    # a Reddit post's domain went into Alpha Vantage's from_currency.
    reddit, rates = _io("RedditTopPostsBySubreddit", "n"), _io("Alpha_Vantage_CURRENCY_EXCHANGE_RATE", "n")
    assert not same_api(reddit, rates) and not same_api(rates, reddit)
    assert same_api(_io("Tripadvisor_Search_Hotels", "n"), _io("TripadvisorLocations", "n"))


def test_a_moment_or_a_cards_detail_takes_no_other_kind() -> None:
    products = {"type": "array", "items": {"type": "string"}}
    posts = _io("posts", outputs="featured_products", featured_products=products)
    described = {"description": "The Gregorian date to be converted to Hijri."}
    hijri = _io("tanggal", inputs="tanggal", tanggal=described)
    context = EntityContext(random.Random(1))
    assert context.apart(posts, "featured_products[]", hijri, "tanggal")  # a product is no date
    country = _io("country", outputs="dial_code")
    assert context.apart(country, "dial_code", _io("make_payment", inputs="cvv"), "cvv")  # no card's code
    assert not context.apart(_io("book", outputs="check_out"), "check_out", hijri, "tanggal")


def test_a_result_named_only_as_a_result_is_what_its_tool_says() -> None:
    def tool(name: str, description: str, *inputs: str) -> Tool:
        schema = {"type": "object", "properties": {n: {"type": "number"} for n in inputs}}
        return Tool(name, "ns", description=description, parameters=schema)

    arithmetic = tool("CalculateAllArithmeticOperations", "Add, subtract, multiply and divide.", "numbers")
    divide = tool("divide", "Divide two numbers.", "a", "b")
    hotels = tool("find_nearby_hotels", "Find hotels near a place.", "latitude", "longitude")
    fitness = tool("calculate_fitness_goal", "Calculate a fitness goal.", "weight", "age")
    context = EntityContext(random.Random(1))
    assert context.apart(arithmetic, "answer", hotels, "longitude")  # an answer is no longitude
    assert context.apart(divide, "result", fitness, "weight")  # a quotient is no one's weight
    assert context.apart(divide, "", fitness, "age")
    assert not context.apart(divide, "result", tool("is_prime", "Check a number.", "number"), "number")
    converter = tool("convert_weight", "Convert a weight from pounds to kilograms.", "pounds")
    assert not context.apart(converter, "result", fitness, "weight")  # its words say weight
    celsius = tool("to_scale", "Convert between scales.", "temperature")
    thermostat = tool("set_thermostat", "Set the thermostat.", "temperature")
    assert not context.apart(celsius, "value", thermostat, "temperature")  # its input is one
    assert context.apart(celsius, "value", hotels, "latitude")
    assert not context.apart(divide, "result", tool("pay", "Pay.", "amount"), "amount")  # any sum


def test_a_tool_with_many_optional_arguments_gets_a_few_of_them() -> None:
    # PeerTube's video search has some thirty optional filters; a person names one or two.
    props = {f"filter_{i}": {"type": "string"} for i in range(30)}
    search = Tool(
        "searchVideos",
        "tube",
        parameters={
            "type": "object",
            "properties": {"search": {"type": "string"}, **props},
            "required": ["search"],
        },
    )
    few = Tool(
        "few",
        "t",
        parameters={"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}},
    )
    given = [
        len(arguments(search, EntityContext(random.Random(i)), random.Random(i))) - 1 for i in range(300)
    ]
    assert 1.5 <= sum(given) / len(given) <= 2.5, sum(given) / len(given)
    both = [len(arguments(few, EntityContext(random.Random(i)), random.Random(i))) for i in range(300)]
    assert 0.8 <= sum(both) / len(both) <= 1.2  # two optional: each as likely as before (one half)


def test_numbers_to_sum_are_a_few() -> None:
    # When2Call's sum_values was asked for "the sum of 6": a list of one number.
    numbers = {"type": "array", "items": {"type": "number"}}
    total = _tool("sum_values", numbers=numbers)
    for seed in range(60):  # (a repeat drawn was dropped: the standard deviation of [5])
        given = arguments(total, EntityContext(random.Random(seed)), random.Random(seed * 7))["numbers"]
        assert 2 <= len(given) <= 5, given
    capped = _tool("pair", numbers={**numbers, "maxItems": 2})
    assert len(arguments(capped, EntityContext(random.Random(1)), random.Random(1))["numbers"]) == 2


def test_every_operand_of_a_computed_tool_is_given() -> None:
    # glaive's multiply (a and b optional) was asked to "multiply two numbers: 99.3".
    multiply = _tool("multiply", required=False, a={"type": "number"}, b={"type": "number"})
    for seed in range(10):
        assert set(arguments(multiply, EntityContext(random.Random(seed)), random.Random(seed))) == {"a", "b"}
    # how to compute stays optional: not every square root names a precision
    root = _tool("square_root", required=False, number={"type": "number"}, precision={"type": "integer"})
    made = [arguments(root, EntityContext(random.Random(s)), random.Random(s)) for s in range(20)]
    assert all("number" in m for m in made) and 0 < sum("precision" in m for m in made) < 20


def test_a_nested_output_is_read_with_its_own_schema_and_parent() -> None:
    # WeatherAPI's location.name is a place: read alone, "name" was a person's, and another
    # API's city never took it; a company's name is a company's.
    from fms_dgt.databuilders.tool_calling.wiring import schema_at

    place = {"type": "object", "properties": {"name": {"type": "string", "description": "City name"}}}
    output = {
        "type": "object",
        "properties": {
            "location": {"$ref": "#/$defs/Place"},
            "news": {"type": "array", "items": {"allOf": [{"$ref": "#/$defs/Article"}]}},
        },
        "$defs": {"Place": place, "Article": {"properties": {"live": {"type": "boolean"}}}},
    }
    assert schema_at(output, "location.name") == (place["properties"]["name"], "location")
    assert schema_at(output, "news[].live") == ({"type": "boolean"}, "news")
    assert schema_at(output, "news[].missing") == ({}, "news")
    assert schema_at(output, "location[") == ({}, "")  # a malformed path says nothing
    weather = Tool("Realtime_Weather", "n", output_parameters=output)
    info = _io("get_location_info", "g", inputs="location")
    assert not apart(weather, "location.name", info, "location")
    deep: dict[str, Any] = {"type": "object"}
    for _ in range(5000):  # a hostile schema nested past any stack
        deep = {"allOf": [deep]}
    assert schema_at({"type": "object", "properties": {"a": deep}}, "a.b") == ({}, "a")
    # a $def whose branches all refer back to it: read once, not 3 ** depth times
    looped = {
        "properties": {"a": {"$ref": "#/$defs/A"}},
        "$defs": {"A": {"allOf": [{"$ref": "#/$defs/A"}] * 3}},
    }
    assert schema_at(looped, "a.b") == ({}, "a")
    assert schema_at(output, ".".join(["location"] * 30)) == ({}, "")  # deeper than any output named


def test_a_number_typed_result_is_no_name() -> None:
    quotient = _io("divide", "w", outputs="result", result={"type": "number"})
    assert apart(quotient, "result", _io("district_detail", "w", inputs="division_name"), "division_name")
    latitude = _io("geocode", "w", outputs="lat", lat={"type": "number"})
    assert not apart(latitude, "lat", _io("get_weather", "w", inputs="latitude"), "latitude")


def test_a_bound_that_was_not_wired_moves_past_the_wired_one() -> None:
    # glaive's get_random_number took a wired minimum of 44.49 and a drawn maximum of 3.
    bounds = _tool("get_random_number", min={"type": "number"}, max={"type": "integer"})
    for seed in range(10):
        made = arguments(
            bounds, EntityContext(random.Random(seed)), random.Random(seed), fixed={"min": 44.49}
        )
        assert made["min"] == 44.49 and isinstance(made["max"], int) and made["max"] >= 44.49, made
    # both wired: what the results said stays
    both = arguments(bounds, EntityContext(random.Random(1)), random.Random(1), fixed={"min": 9.5, "max": 3})
    assert (both["min"], both["max"]) == (9.5, 3)


def test_type_lists_and_boolean_items_are_read_not_fallen_over() -> None:
    # {"type": ["number", "null"]} made the operands hook raise TypeError (unhashable list) on
    # every draw, and "items": true an AttributeError that stopped the run.
    from fms_dgt.core.tools.fakes import classify
    from fms_dgt.databuilders.tool_calling.wiring import worded

    multiply = _tool(
        "multiply", required=False, a={"type": ["number", "null"]}, b={"type": "array", "items": True}
    )
    for seed in range(5):
        assert "a" in arguments(multiply, EntityContext(random.Random(seed)), random.Random(seed))
    assert not worded(classify("division_name"), {"type": ["integer", 3]})


def test_a_titles_subject_does_not_stop_it_being_searched_for() -> None:
    # A news article's title is drawn from news titles (title:news), and is still a title to search.
    news = _io(
        "GetNews",
        "news",
        outputs="title",
        title={"type": "string", "description": "Title of the news article."},
    )
    context = EntityContext(random.Random(1))
    assert not context.apart(news, "title", _io("SearchEngine", "apibank", inputs="query"), "query")
    assert context.apart(news, "title", _io("AddMeeting", "apibank", inputs="location"), "location")


def test_a_currencys_name_is_no_currency_code() -> None:
    convert = _io("convert_currency", "fx", inputs="to_currency")
    assert apart(
        _io("get_rate", "fx", outputs="To_Currency Name"), "To_Currency Name", convert, "to_currency"
    )
    code = _io("get_rate", "fx", outputs="to_currency_code")
    assert not apart(code, "to_currency_code", convert, "to_currency")


def test_a_forecasts_day_is_no_date_a_price_was_recorded_on() -> None:
    # the demo asked for a stock's price on the first day of a weather forecast (14 of 200 records)
    days = {
        "type": "array",
        "items": {"type": "object", "properties": {"date": {"type": "string", "format": "date"}}},
    }
    forecast = _io("get_forecast", "weather_api", outputs="days", days=days)
    stock = Tool(
        "QueryStock",
        "api_bank",
        description="Query the stock price of a given stock code on a date.",
        parameters={"type": "object", "properties": {"date": {"type": "string"}}},
    )
    assert apart(forecast, "days[].date", stock, "date")
    assert not apart(forecast, "days[].date", _io("list_events", "calendar", inputs="date"), "date")


def test_a_conversions_two_units_measure_one_thing_and_its_result_is_computed() -> None:
    # When2Call's si_unit_conversion was asked for pounds in feet, and answered 54.07 km as 30.86 ft
    from fms_dgt.core.tools.engines.implementations import convert, dimension
    from fms_dgt.core.tools.engines.results import mock_result

    unit = {"type": "string", "enum": ["meter", "kilometer", "foot", "mile", "kilogram", "pound", "liter"]}
    tool = Tool(
        "si_unit_conversion",
        "w2c",
        parameters={
            "type": "object",
            "properties": {"value": {"type": "number"}, "unit_in": unit, "unit_out": unit},
            "required": ["value", "unit_in", "unit_out"],
        },
    )
    pairs = set()
    for index in range(40):
        args = arguments(tool, EntityContext.for_record(3, index), random.Random(index))
        assert dimension(args["unit_in"]) == dimension(args["unit_out"]), args
        pairs.add((args["unit_in"], args["unit_out"]))
        value, source = mock_result(tool, args, random.Random(index))
        assert source == "implementation", (args, value)
        assert value["result"] == pytest.approx(
            convert(args["value"], args["unit_in"], args["unit_out"]), rel=1e-3
        )
    assert len(pairs) > 4, pairs
    # a target wired from elsewhere is kept, even of another measure
    fixed = arguments(tool, EntityContext.for_record(3, 1), random.Random(1), fixed={"unit_out": "liter"})
    assert fixed["unit_out"] == "liter"


def test_a_call_whose_every_argument_is_optional_still_says_what_it_is_about() -> None:
    # When2Call's by_city_name({}) fetched weather data for nowhere; a listing may still be bare
    weather = Tool(
        "by_city_name",
        "w2c",
        parameters={
            "type": "object",
            "properties": {
                "units": {"type": "string", "enum": ["metric", "imperial"]},
                "q": {"type": "string"},
            },
        },
    )
    for index in range(20):
        assert "q" in arguments(
            weather, EntityContext.for_record(5, index), random.Random(index), optional_probability=0.0
        )
    listing = Tool(
        "list_webhooks", "up", parameters={"type": "object", "properties": {"page_size": {"type": "integer"}}}
    )
    assert (
        arguments(listing, EntityContext.for_record(5, 1), random.Random(1), optional_probability=0.0) == {}
    )
