"""Run-together names read as their words (fms_dgt/databuilders/tool_calling/_segments.py)."""

from __future__ import annotations

import pytest

from fms_dgt.databuilders.tool_calling._segments import segmented
from fms_dgt.databuilders.tool_calling.wording import label


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("listid", "list ID"),  # When2Call: "with listid the-78926 and a pagesize of 5"
        ("pagesize", "page size"),
        ("thumbnailfile", "thumbnail file"),  # PeerTube's upload
        ("airportiatacode", "airport IATA code"),
        ("filingorder", "filing order"),  # SEC
        ("getstatsbymonth", "get stats by month"),
        ("url_embed_safe", "URL embed safe"),
    ],
)
def test_a_run_together_name_is_said_as_its_words(name: str, said: str) -> None:
    assert label(name) == said


@pytest.mark.parametrize(
    "word",
    # words of their own, words no list covers whole, and what is not one lower-case run
    [
        "keyword",
        "username",
        "together",
        "dataset",
        "piquantmin",
        "stations",
        "information",
        "Listid",
        "page2",
    ],
)
def test_a_word_of_its_own_or_one_not_covered_whole_stays_whole(word: str) -> None:
    assert segmented(word) == (word,)


def test_a_hostile_name_is_read_in_bounded_time() -> None:
    # no split of more than four parts, and a long run costs a window per position, not more
    assert segmented("id" * 5_000) == ("id" * 5_000,)
    assert segmented("listidpagesize") == ("list", "id", "page", "size")
