"""Texts that fit what they are about: a video's title, a DAG run's note, a webhook's description.

A title, description, message or reason is drawn from the texts of its *subject*, the thing it
belongs to, read from the words around it (nearest first): the property's own name
(``blacklistedReason``, ``timetable_description``), the object holding it (``channel`` in
``channel.displayName``; envelopes such as ``data`` say nothing), the first sentence of its
description ("Text of the comment") and the tool's name, last word first (``getVideoChannelVideos``
is about videos). Words that name one kind of thing (a video, a DAG, a webhook) are read before
words that could name many (a note, an event); the first found decides, and a subject without
texts for that field keeps the field's general ones (a webhook's request body is no DAG's note).

Without this, every text came from one list whatever it described: PeerTube's videos were
blacklisted because an "item arrived damaged", Airflow's timetable was described as a "Stainless
steel bottle that keeps drinks cold for 24 hours" and its DAG runs noted "Happy birthday!".
"""

from __future__ import annotations

import functools
import random
import re

from fms_dgt.core.tools import _fake_data as data
from fms_dgt.core.tools._fake_heads import ENVELOPES
from fms_dgt.core.tools._fake_names import Kind, tokens
from fms_dgt.core.tools.enrichments._dataflow_words import singular

__all__ = ["SUBJECT_FIELDS", "drawn", "refine", "texts_of"]

#: Text fields whose values depend on what they are about.
SUBJECT_FIELDS = frozenset({"title", "description", "message", "reason", "work", "tag", "genre"})

#: Words that name one kind of thing.
_STRONG: dict[str, str] = {
    **dict.fromkeys(("video", "live", "replay", "stream", "clip", "episode"), "video"),
    "channel": "channel",
    "playlist": "playlist",
    **dict.fromkeys(("dag", "dagrun", "pipeline", "workflow", "instance", "xcom", "backfill"), "workflow"),
    "sla": "sla",
    **dict.fromkeys(("timetable", "cron"), "schedule"),
    **dict.fromkeys(("webhook", "hook", "integration", "callback"), "webhook"),
    "cashback": "cashback",
    **dict.fromkeys(("transaction", "transfer", "payment"), "transaction"),
    **dict.fromkeys(("ticket", "incident"), "ticket"),
    **dict.fromkeys(("news", "article", "headline", "story"), "news"),
    "comment": "comment",
    **dict.fromkeys(("post", "tweet", "reel"), "post"),
    "review": "review",
    **dict.fromkeys(("bio", "biography", "profile"), "profile"),
    "restaurant": "restaurant",
    **dict.fromkeys(("apartment", "hotel", "property", "rental", "accommodation"), "lodging"),
    **dict.fromkeys(("tour", "excursion"), "tour"),
    "product": "product",
    **dict.fromkeys(("book", "novel", "author"), "book"),
    **dict.fromkeys(("movie", "film", "cinema"), "film"),
    **dict.fromkeys(("song", "album", "track", "music"), "music"),
    "game": "game",
    **dict.fromkeys(
        ("blacklist", "blacklisted", "blocklist", "block", "blocked", "ban", "banned", "abuse"), "moderation"
    ),
    "support": "support",
    **dict.fromkeys(("source", "code", "script"), "code"),
    "page": "page",
    **dict.fromkeys(("pet", "animal"), "pet"),
}
#: Words that could name many kinds of thing: read only when no word above is found.
_WEAK: dict[str, str] = {
    "note": "note",
    **dict.fromkeys(("reminder", "agenda", "todo"), "reminder"),
    **dict.fromkeys(("event", "meeting", "appointment", "calendar"), "event"),
    **dict.fromkeys(("folder", "directory"), "folder"),
    "account": "account",
}
#: Words of a property's name that say which field it is, not what it is about.
_FIELD_WORDS = frozenset(
    {
        "title",
        "name",
        "display",
        "description",
        "desc",
        "text",
        "message",
        "content",
        "reason",
        "body",
        "note",
    }
)
_FIRST_SENTENCE = re.compile(r"^[^.\n]*")
_WORD = re.compile(r"[a-z]+")
#: A transaction's description is its merchant (Up: "Usually the merchant name for purchases").
_MERCHANT = re.compile(r"\bmerchant(?:'s)? name\b|\bname of the merchant\b", re.I)


def refine(found: Kind, name: str, description: str, parent: str, topic: str) -> Kind:
    """``found`` (a text kind) with its subject: ``Kind("text", "title:video")``, or a merchant's
    name for a transaction's description; ``found`` itself when nothing says more."""
    if found.field in ("description", "message") and _MERCHANT.search(description):
        return Kind("company", "name")
    if found.field == "tag" and "tag" not in f"{name} {parent}".lower():
        return found  # a label of a code (PeerTube's privacy label "Public") is no thing's tag
    subject = _subject(found.field, name, parent, topic, description)
    return found._replace(field=f"{found.field}:{subject}") if subject else found


@functools.lru_cache(maxsize=8192)
def _subject(field: str, name: str, parent: str, topic: str, description: str) -> str:
    own = [w for w in tokens(name) if w not in _FIELD_WORDS]
    held = [] if parent.lower() in ENVELOPES else tokens(parent)
    said = _WORD.findall(_FIRST_SENTENCE.match(description.lower()).group(0))  # type: ignore[union-attr]
    places = (own[::-1], held[::-1], said[::-1], list(tokens(topic))[::-1])
    for table in (_STRONG, _WEAK):
        for words in places:
            for word in words:
                subject = table.get(word) or table.get(singular(word))
                if subject is not None:
                    return subject if (field, subject) in _TEXTS else ""
    return ""


def texts_of(kind: Kind) -> tuple[str, ...] | None:
    """The texts of a refined kind (``title:video``), or None for a field with no subject. A
    text may hold slots (``{dish} from scratch``): :func:`drawn` fills them."""
    return _TEXTS.get((kind.base, kind.subject)) if kind.subject else None


def drawn(texts: tuple[str, ...], rng: random.Random) -> str:
    """One of ``texts``, its slots filled from :data:`_SLOTS` (a few templates make many texts,
    so a run of thousands of records does not say one sentence hundreds of times)."""
    text = rng.choice(texts)
    return _SLOT.sub(lambda m: rng.choice(_SLOTS[m.group(1)]), text) if "{" in text else text


#: What fills a slot of a text.
_SLOTS: dict[str, tuple[str, ...]] = {
    "redo": ("Re-ran", "Cleared", "Retried", "Resumed", "Re-triggered"),
    "cause": (
        "the upstream export was fixed",
        "the credentials were rotated",
        "the source file arrived late",
        "the warehouse came back up",
        "a worker ran out of disk",
        "the API rate limit reset",
        "the schema change was deployed",
    ),
    "dish": ("Sourdough bread", "Lemon tart", "Vegetable ramen", "Paneer curry", "Focaccia", "Shakshuka"),
    "task": (
        "fix a flat bike tyre",
        "repot a monstera",
        "descale a kettle",
        "build a floating shelf",
        "sharpen a kitchen knife",
        "patch a hole in drywall",
    ),
    "place": ("the old harbour", "Lisbon's Alfama", "the Cotswolds", "Kyoto's back streets", "the Dolomites"),
    "gear": ("camera", "microphone", "lens", "editing software", "tripod"),
    "part": ("the intro", "the second half", "the last five minutes", "the part about the settings"),
    "topic": (
        "budget travel",
        "home repair",
        "sourdough",
        "trail running",
        "bike maintenance",
        "houseplants",
    ),
}
_SLOT = re.compile(r"\{(" + "|".join(_SLOTS) + r")\}")


#: What a video is called, as its uploader would call it.
_VIDEO_TITLES = (
    "{dish} from scratch",
    "How to {task}",
    "Walking tour of {place}",
    "Sourdough bread from scratch",
    "Beginner yoga: a 20-minute morning flow",
    "Fixing a flat bike tyre at the roadside",
    "Walking tour of the old harbour",
    "Live session: acoustic covers",
    "One year with a solar roof",
    "Three easy weeknight curries",
    "Restoring a 1970s desk lamp",
)

_TEXTS: dict[tuple[str, str], tuple[str, ...]] = {
    ("title", "video"): _VIDEO_TITLES,
    ("title", "channel"): (
        "Kitchen Table Cooking",
        "Trail Running Diaries",
        "The Repair Bench",
        "Open Source Weekly",
        "Quiet Piano Sessions",
        "Garden Notes",
    ),
    ("title", "playlist"): (
        "Watch later",
        "Weekend recipes",
        "Workout mix",
        "Conference talks 2026",
        "Bike maintenance",
        "Favourites",
    ),
    ("title", "ticket"): (
        "Cannot sign in after a password reset",
        "Invoice shows the wrong amount",
        "Order arrived damaged",
        "App crashes when uploading a photo",
        "Refund not received",
        "Change of delivery address",
    ),
    ("title", "note"): (
        "Groceries",
        "Trip ideas",
        "Meeting notes",
        "Books to read",
        "Gift ideas",
        "Weekend plans",
    ),
    ("title", "news"): (
        "City council approves new cycle lanes",
        "Researchers report progress on battery recycling",
        "Local bakery wins national award",
        "Heatwave expected to ease by the weekend",
        "Central bank holds interest rates",
        "New vaccine trial begins enrolment",
    ),
    ("title", "post"): (
        "Our first week in the new studio",
        "Five things I learned training for a marathon",
        "Behind the scenes of the spring collection",
        "A weekend in the mountains",
        "Meet the team",
    ),
    ("title", "folder"): ("Invoices", "Taxes 2026", "Contracts", "Receipts", "Photos", "Project Apollo"),
    **dict.fromkeys((("title", "book"), ("title", "film"), ("title", "music")), data.WORK_TITLES),
    # A book's or a film's genre is no music's (glaive searched for books of genre "hip hop").
    ("genre", "book"): (
        "mystery",
        "science fiction",
        "fantasy",
        "biography",
        "historical fiction",
        "thriller",
    ),
    ("genre", "film"): ("comedy", "drama", "thriller", "documentary", "animation", "science fiction"),
    ("genre", "music"): data.GENRES,
    # What a bank's customer calls an account (Up's displayName was "Weekly one-on-one").
    ("title", "account"): (
        "Spending",
        "Savings",
        "Rainy day fund",
        "Holiday fund",
        "Bills",
        "Emergency fund",
    ),
    ("title", "page"): (
        "Harbor Street Bakery",
        "Northside Climbing Gym",
        "The Daily Sketch",
        "Green Thumb Gardening",
        "Tidewater Coffee Roasters",
    ),
    ("work", "video"): _VIDEO_TITLES,  # a video named like a work is still a video
    ("work", "game"): ("Stardew Valley", "Hollow Knight", "Celeste", "Minecraft", "Rocket League", "Tetris"),
    ("description", "video"): (
        "We show how to {task}, step by step.",
        "A slow walk through {place}, with no music.",
        "A step-by-step walkthrough filmed in our kitchen.",
        "Recorded live at the spring meetup; the slides are linked below.",
        "Everything you need to get started, in under ten minutes.",
        "Part two of the series: over the mountain pass.",
        "Questions from viewers are answered at the end.",
    ),
    ("description", "channel"): (
        "Weekly videos about {topic}.",
        "Tutorials and live sessions on {topic}.",
        "Weekly videos about cooking on a budget.",
        "Tutorials and live sessions from our community.",
        "Trail runs, race reports and gear reviews.",
        "Repairs and restorations, start to finish.",
    ),
    ("description", "playlist"): (
        "Videos to watch this weekend.",
        "Every talk from the 2026 conference in one place.",
        "Short recipes for busy evenings.",
        "Our favourite tutorials, in the order we recommend them.",
    ),
    ("description", "workflow"): (
        "Nightly ETL of the day's orders into the warehouse.",
        "Hourly refresh of the sales dashboard.",
        "Weekly export of invoices to the finance bucket.",
        "Daily backup of the customer database.",
        "Retrains the churn model every Monday.",
    ),
    ("description", "sla"): (
        "The task finished 25 minutes after its SLA.",
        "The run was still queued when its 06:00 SLA passed.",
        "The load step missed its one-hour SLA.",
    ),
    # How Airflow describes a schedule (the cron expressions of the vocabulary, said in words).
    ("description", "schedule"): (
        "At 06:00",
        "Every 15 minutes",
        "At 00:00, only on Monday",
        "At 02:30",
        "At 09:00, Monday through Friday",
        "At 00:00, on day 1 of the month",
    ),
    ("description", "webhook"): (
        "Sends new transactions to the budgeting spreadsheet.",
        "Notifies the accounting system when a payment settles.",
        "Posts card purchases to the family chat.",
        "Forwards transfers to the expense tracker.",
    ),
    ("description", "cashback"): (
        "Cashback on the weekly grocery shop",
        "Welcome offer for a new card",
        "Referral bonus",
    ),
    ("description", "ticket"): (
        "The reset email arrives, but its link has expired by the time it is opened.",
        "The March invoice charges for two seats; the account has one.",
        "The box was crushed and the screen is cracked.",
        "The app closes as soon as a photo is chosen from the gallery.",
    ),
    ("description", "profile"): (
        "Amateur baker and weekend cyclist.",
        "Making videos about home repair since 2019.",
        "Software developer, coffee enthusiast, dog person.",
        "Photographer based by the sea.",
    ),
    ("description", "restaurant"): (
        "Family-run trattoria serving fresh pasta and wood-fired pizza.",
        "Small plates, natural wine and a garden terrace.",
        "Noodle bar with counter seating and an open kitchen.",
    ),
    ("description", "lodging"): (
        "Cozy two-bedroom apartment close to the city centre.",
        "Quiet rooms with a view of the harbour, breakfast included.",
        "Studio with a kitchenette, ten minutes from the station.",
    ),
    ("description", "tour"): (
        "Guided tour of the old town and its historic landmarks.",
        "Half-day boat trip along the coast with a swim stop.",
        "Evening food walk through the market district.",
    ),
    ("description", "product"): (
        "A lightweight, water-resistant jacket for everyday use.",
        "Stainless steel bottle that keeps drinks cold for 24 hours.",
        "Wireless earbuds with eight hours of battery life.",
        "Cast-iron pan, pre-seasoned and oven-safe.",
    ),
    ("description", "event"): (
        "Weekly sync to review progress and plan the next sprint.",
        "Follow-up appointment to review test results.",
        "Hands-on workshop covering the basics of data visualisation.",
    ),
    ("message", "news"): (
        "The council voted on Tuesday to add 12 kilometres of protected cycle lanes by next summer.",
        "Officials said the new rules take effect at the start of next month.",
        "The study followed 2,000 participants over three years.",
        "Forecasters expect temperatures to drop by the weekend.",
    ),
    ("message", "comment"): (
        "Which {gear} did you use for this?",
        "I got lost in {part}, could you go over it again?",
        "Tried this at home and it worked first time!",
        "Great explanation, thanks for sharing!",
        "Which camera did you use for this?",
        "This saved me hours, thank you.",
        "Could you do a follow-up on the advanced settings?",
        "The audio drops out around the middle.",
    ),
    ("message", "post"): (
        "Just finished my first half marathon!",
        "Trying a new sourdough recipe this weekend.",
        "We're hiring: come build with us.",
        "The sunset from the pier tonight was unreal.",
        "Big news: the shop opens on Saturday!",
    ),
    ("message", "review"): data.REVIEWS,
    ("message", "workflow"): (
        "{redo} after {cause}.",
        "{redo} once {cause}.",
        "Re-ran after the upstream export was fixed.",
        "Marked failed by hand: the source file was empty.",
        "Backfill for the March outage.",
        "Paused while the warehouse is migrated.",
        "Cleared after the credentials were rotated.",
    ),
    ("message", "transaction"): (
        "Rent for March",
        "Thanks for dinner!",
        "Concert tickets",
        "Half of the electricity bill",
        "Birthday present",
    ),
    ("message", "reminder"): (
        "Pick up the dry cleaning",
        "Call the dentist to confirm the appointment",
        "Renew the car insurance",
        "Submit the expense report",
        "Buy a birthday card for Mum",
    ),
    ("message", "note"): (
        "Ask about parking at the venue.",
        "Ideas for the offsite: a cooking class or a hike.",
        "Call the landlord about the boiler.",
        "Milk, eggs, coffee and lemons.",
    ),
    # A DAG file's source (Airflow's get_dag_source was "Cleared after the credentials were rotated.").
    ("message", "code"): (
        "from airflow import DAG\nfrom airflow.operators.bash import BashOperator\n\n"
        'with DAG("orders_etl", schedule="0 6 * * *") as dag:\n'
        '    BashOperator(task_id="load", bash_command="python load.py")\n',
        "from airflow.decorators import dag, task\n\n\n"
        '@dag(schedule="@daily", catchup=False)\ndef sales_report():\n'
        "    @task\n    def build():\n        return 42\n\n    build()\n\n\nsales_report()\n",
    ),
    ("message", "support"): (
        "You can support this channel at https://donate.example.com/",
        "Like what we make? Become a member at https://members.example.com/",
    ),
    # A pet's tag is what it is (petstore's pets were tagged "finance" and "follow-up").
    ("tag", "pet"): ("dog", "cat", "puppy", "kitten", "rescue", "senior", "indoor", "rabbit"),
    ("tag", "video"): ("tutorial", "cooking", "diy", "travel", "music", "live", "beginners"),
    ("tag", "workflow"): ("etl", "reporting", "finance", "daily", "ml", "backup"),
    ("tag", "transaction"): ("Holiday", "Groceries", "Pizza Night", "Work Expenses", "Gifts"),
    ("reason", "moderation"): (
        "Spam",
        "Copyright claim from the rights holder",
        "Harassment in the comments",
        "Misleading medical claims",
        "Duplicate upload",
    ),
    ("reason", "product"): (
        "item arrived damaged",
        "ordered the wrong size",
        "found a better price elsewhere",
    ),
    ("reason", "event"): ("schedule conflict", "change of plans", "no longer needed"),
}
