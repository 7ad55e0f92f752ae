"""A spec's one example of an id or a moment lends its shape, not its value (``_fake_moulds``)."""

from __future__ import annotations

import random
import re

from fms_dgt.core.tools._fake_moulds import moment_like, redrawn, reshaped
from fms_dgt.core.tools.fakes import Scope, fake


def _classes(text: str) -> str:
    return re.sub(r"[A-Z]", "A", re.sub(r"[a-z]", "a", re.sub(r"\d", "9", text)))


def test_an_ids_random_looking_part_is_drawn_again_and_its_fixed_parts_stay() -> None:
    token = "2y84q2MQUMWPbiEcxNXMgC"
    made = reshaped(token, 48213, "entity-1")
    assert made != token and _classes(made) == _classes(token)
    assert reshaped(token, 48213, "entity-1") == made  # one entity, one id
    assert reshaped(token, 48213, "entity-2") != made
    assert reshaped("ORD-2024-0001", 48213, "e") == "ORD-0004-8213"  # a person's parts are kept
    hexed = reshaped("a65bc12f-9383", 1, "e")
    assert re.fullmatch(r"[0-9a-f]{8}-\d{4}", hexed) and hexed != "a65bc12f-9383"


def test_a_paths_random_looking_parts_are_drawn_again_and_a_written_path_stays() -> None:
    path = "/videos/embed/a65bc12f-9383-462e-81ae-8207e8b434ee"
    made = redrawn(path, "1")
    assert made is not None and made.startswith("/videos/embed/") and made != path
    assert re.fullmatch(r"/videos/embed/[0-9a-f]{8}-\d{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", made), made
    assert redrawn("/api/v1/videos/42", "1") is None
    assert redrawn("https://github.com/OpenAPITools", "1") is None  # a name a person wrote


def test_a_moment_takes_the_shape_of_the_example() -> None:
    assert (
        moment_like("2025-10-15T13:51:39Z", ["2026-05-17", "2026-05-17T07:00:00Z"]) == "2026-05-17T07:00:00Z"
    )
    assert moment_like("15/10/2025", ["2026-05-17", "2026-05-17T07:00:00Z"]) is None
    assert moment_like("2025-10-15T13:51:39.993Z", ["2026-05-17T07:00:00Z"]) == "2026-05-17T07:00:00Z"


_VIDEO = {
    "type": "object",
    "properties": {
        "id": {"type": "integer", "examples": [42]},
        "shortUUID": {"type": "string", "examples": ["2y84q2MQUMWPbiEcxNXMgC"]},
        "publishedAt": {"type": "string", "format": "date-time", "examples": ["2025-10-15T13:51:39Z"]},
        "orderId": {"type": "string", "examples": ["ORD-2024-0001"]},
        "likes": {"type": "integer", "examples": [42]},
    },
    "required": ["id", "shortUUID", "publishedAt", "orderId", "likes"],
}


def test_every_record_has_its_own_ids_and_moments_where_the_spec_gives_one_example() -> None:
    # PeerTube: every record's playlist was 42 and 2y84q2MQUMWPbiEcxNXMgC, published at one second
    values = [fake(_VIDEO, random.Random(seed), topic="getVideo") for seed in range(12)]
    for field in ("id", "shortUUID", "publishedAt", "orderId", "likes"):
        seen = [v[field] for v in values]
        assert len(set(seen)) >= 10, (field, seen)
        assert _VIDEO["properties"][field]["examples"][0] not in seen  # type: ignore[index]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", v["publishedAt"]) for v in values)
    # a shape the vocabulary lacks: the example is kept
    created = {"type": "object", "properties": {"createdOn": {"type": "string", "examples": ["15/10/2025"]}}}
    created["required"] = ["createdOn"]
    assert fake(created, random.Random(1), topic="getVideo") == {"createdOn": "15/10/2025"}


def test_one_entity_keeps_one_reshaped_id_within_a_record() -> None:
    scope = Scope(random.Random(5))
    first = fake(_VIDEO, scope.rng, topic="getVideo", scope=scope)
    again = fake(_VIDEO, scope.rng, topic="getVideo", scope=scope)
    assert first["shortUUID"] == again["shortUUID"] and first["id"] == again["id"]


def test_every_listed_item_has_its_own_id_in_the_examples_shape() -> None:
    # PeerTube's listed videos had shortUUIDs shor-43928 after the first
    listed = {"type": "array", "items": _VIDEO, "minItems": 4, "maxItems": 4}
    items = fake(listed, random.Random(3), topic="getVideos")
    shorts = [v["shortUUID"] for v in items]
    assert len(set(shorts)) == 4 and all(_classes(s) == _classes("2y84q2MQUMWPbiEcxNXMgC") for s in shorts), (
        shorts
    )


def test_a_huge_example_is_not_drawn_again_character_by_character() -> None:
    # a hostile spec's example of a megabyte: drawing it again cost a second per value
    huge = "a1" * 500_000
    assert redrawn(huge, "1") is None
    assert len(reshaped(huge, 48213, "1")) == len(huge)  # its digits filled: linear, no draws
