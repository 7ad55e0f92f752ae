"""Word lists by which :mod:`_fake_kinds` reads what a name is: its last word (a tally, a rate,
a moment), the tool's path (the words that name no resource) or the words around it (a cipher, a
picture, a handle). Split from ``_fake_kinds`` to keep each module short.
"""

from __future__ import annotations

import re

from fms_dgt.core.tools.enrichments._dataflow_words import ENVELOPES as _WRAPPERS

__all__ = [
    "CIPHERS",
    "ENVELOPES",
    "HANDLE",
    "MOMENT_HEADS",
    "PATH_WORDS",
    "PICTURED",
    "RATES",
    "TALLIES",
    "WORKFLOW",
]

#: An encryption's context: its algorithm is a cipher.
CIPHERS = re.compile(r"encrypt|decrypt|cipher|hash|sign|crypt", re.I)
#: What a rate in percent is of (a heart rate or a frame rate is no percentage).
RATES = frozenset(
    {"tax", "interest", "vat", "discount", "growth", "inflation", "commission", "tip", "return"}
    | {"conversion", "annual", "mortgage", "loan", "savings", "sales", "income", "churn", "success"}
)
#: Things counted by the many (a total of deaths, a video's likes): whole numbers, often large.
TALLIES = frozenset(
    {
        "deaths", "cases", "recoveries", "infections", "hospitalizations", "tests", "likes", "dislikes",
        "views", "followers", "following", "subscribers", "downloads", "votes", "shares", "visits",
        "visitors", "members", "employees", "students", "patients", "retweets", "plays", "clicks",
        "impressions", "installs", "signups", "comments", "reviews", "ratings",
    }
)  # fmt: skip
#: Last words of a name that say it is a moment (occurred_after: the events after it).
MOMENT_HEADS = frozenset(
    {"date", "time", "datetime", "timestamp", "at", "on", "day", "when", "occurred", "happened"}
)
#: Words of a path-like tool name that name no resource.
PATH_WORDS = frozenset({"by", "id", "ids", "relationships", "relationship", "api", "data", "info", "details"})
#: Names of a path that say it is a picture's.
PICTURED = re.compile(r"banner|avatar|thumbnail|preview|image|photo|logo|icon|picture|poster", re.I)
#: A description that says a name is a handle.
HANDLE = re.compile(r"\busername\b|\bhandle\b|used to (?:find|mention|interact)", re.I)
#: Objects that only wrap others: their names say nothing of what a text or an id is about.
ENVELOPES = _WRAPPERS | {"attributes", "item", "result", "value", "values"}
#: Where a task runs and what runs it, in a workflow scheduler's words (Airflow's task instances
#: said "queue signal-5, pool river-7, operator maple-3"; its DAG's orientation is a graph's).
WORKFLOW = re.compile(r"\b(?:tasks?|dags?|workflows?|pipelines?|triggers?|schedul\w*)\b")
