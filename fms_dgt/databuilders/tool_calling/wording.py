"""How a tool's purpose reads as a person's request: the words the offline text writer builds on.

A tool description says what the tool does for a *model* ("Retrieves current weather information
based on the provided coordinates using the X API. Note: other cities get a default."). A person
asks for the outcome ("what's the weather at 38.72, -9.14?"). This module keeps the first sentence
that is about the purpose, drops implementation notes (:func:`implementation_notes` finds them),
splits it into a verb and its object (:class:`Purpose`), and turns identifiers into words
(:func:`humanize`). Everything here is pure and cached per tool: a turn costs microseconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from fms_dgt.core.tools.data_objects import Tool
from fms_dgt.core.tools.enrichments._dataflow_words import singular as one
from fms_dgt.databuilders.tool_calling._notes import implementation_notes
from fms_dgt.databuilders.tool_calling._segments import segmented

__all__ = [
    "ACTION",
    "ASK",
    "GET",
    "Purpose",
    "article",
    "described",
    "humanize",
    "implementation_notes",
    "join_facts",
    "join_words",
    "label",
    "past",
    "plain_name",
    "plural",
    "purpose_of",
    "singular",
    "unstopped",
    "word_set",
]

#: Kinds of purpose: fetch information (phrased freely), ask for a specific operation (the verb is
#: kept), change something (approvals, "done" answers).
GET, ASK, ACTION = "get", "ask", "action"

# ---------------------------------------------------------------------------------------------- verbs


def word_set(*names: str) -> frozenset[str]:
    """A set of words written as text."""
    return frozenset(" ".join(names).split())


# Verbs that fetch information: a person says "what's X", "look up X", "show me X" for all of them.
_GET_VERBS = word_set(
    "get fetch retrieve obtain provide give show display gather pull load download read view lookup "
    "acquire extract"
)
_ASK_VERBS = word_set(
    "find search list query check verify validate identify detect determine estimate calculate compute "
    "convert count measure analyze analyse evaluate assess predict compare rank sort filter summarize "
    "summarise translate generate recommend suggest locate geocode track monitor explain describe define "
    "parse format encode decode solve simulate match classify transcribe test ping inspect look scan "
    "explore discover browse crawl resolve shorten interpret tell answer rate review roll flip draw pick "
    "choose select watch forecast sum multiply divide subtract split merge combine round normalize aggregate"
)
_ACTION_VERBS = word_set(
    "create make build add insert post publish send submit upload share book reserve schedule register "
    "record log store save set update modify edit change rename replace move transfer cancel delete "
    "remove clear close open start stop play pause resume enable disable block unblock follow unfollow "
    "like subscribe unsubscribe order buy purchase pay refund exchange apply assign approve reject invite "
    "notify remind plan optimize encrypt decrypt hash run execute perform trigger fill reset initialize "
    "login logout authenticate connect disconnect compress resize crop lock unlock turn toggle adjust "
    "mark archive restore backup sync import export print sell trade withdraw deposit borrow lend rent "
    "hire call email message contact invest write reply respond request confirm tag return upgrade "
    "downgrade activate deactivate categorize categorise attach detach associate disassociate mute unmute"
)
_VERBS = _GET_VERBS | _ASK_VERBS | _ACTION_VERBS
_IRREGULAR_PAST = {
    "get": "got", "send": "sent", "make": "made", "find": "found", "set": "set", "pay": "paid",
    "buy": "bought", "sell": "sold", "run": "ran", "put": "put", "write": "wrote", "read": "read",
    "give": "gave", "build": "built", "tell": "told", "choose": "chose", "draw": "drew", "lend": "lent",
    "hold": "held", "take": "took", "begin": "began", "shut": "shut", "split": "split", "hit": "hit",
}  # fmt: skip
_DOUBLED = word_set(
    "stop plan ship log tag drop submit map zip pin chat scan flip transfer commit admit refer prefer"
)
_DOUBLED |= word_set("occur control regret rob tap")


def _base_verb(word: str) -> str | None:
    """The base form of an inflected verb ("Retrieves" -> "retrieve"), or None for a non-verb."""
    word = word.lower()
    candidates = [word]
    if word.endswith("ies"):
        candidates.append(word[:-3] + "y")
    if word.endswith("es"):
        candidates.append(word[:-2])
    if word.endswith("s"):
        candidates.append(word[:-1])
    if word.endswith("ing"):
        stem = word[:-3]
        candidates += [stem, stem + "e", stem[:-1]]
    return next((c for c in candidates if c in _VERBS), None)


def past(verb: str) -> str:
    """The past participle of a base verb ("book" -> "booked", "send" -> "sent")."""
    if " " in verb:
        return " ".join(w if w in ("and", "or", "up") else past(w) for w in verb.split(" "))
    if verb in _IRREGULAR_PAST:
        return _IRREGULAR_PAST[verb]
    if verb in _DOUBLED:
        return verb + verb[-1] + "ed"
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and verb[-2:-1] not in tuple("aeiou"):
        return verb[:-1] + "ied"
    return verb + "ed"


# --------------------------------------------------------------------------------------------- purpose


@dataclass(slots=True, frozen=True)
class Purpose:
    """What a tool does, as a verb and its object.

    Attributes:
        verb: base form ("get", "book", "search").
        obj: the object phrase as described ("the current weather at a coordinate").
        core: ``obj`` without trailing slot phrases ("the current weather"), used when the request
            states the values itself.
        kind: :data:`GET`, :data:`ASK` or :data:`ACTION`.
    """

    verb: str
    obj: str
    core: str
    kind: str

    def phrase(self, *, core: bool = False) -> str:
        """``verb obj`` ("book a flight"), with the core object when ``core``."""
        return f"{self.verb} {self.core if core else self.obj}".strip()


_PREAMBLES = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"^(?:this|the)\s+(?:api|tool|function|endpoint|method|service|operation)\s+"
        r"(?:is\s+used\s+(?:to|for)|allows\s+(?:the\s+)?(?:users?|you|clients?)\s+to|lets\s+(?:users?|you)|"
        r"can\s+be\s+used\s+to|is\s+for|is\s+designed\s+to|will|for|to|that|which)?\s*",
        r"^(?:this\s+is\s+)?an?\s+(?:api|tool|function|endpoint|method|service)\s+(?:for|to|that|which)\s+",
        r"^(?:api|tool|function|endpoint|method|service|operation)\s+(?:for|to|that|which)\s+",
        r"^use\s+(?:this\s+)?(?:tool|function|api|endpoint)?\s*to\s+",
        r"^(?:allows?|lets?|enables?|helps?)\s+(?:the\s+)?(?:users?|you|clients?)\s+(?:to\s+)?",
        r"^(?:used|designed)\s+to\s+",
        r"^(?:api|tool|function|method|endpoint)\s+(?=\w+s\s)",
    )
)
# Where a sentence stops being about the purpose: notes, examples, how the result is returned.
_CLAUSE_CUT = re.compile(
    r"\s*(?:;|:|\s[-\u2013\u2014]\s|,\s*(?:e\.g\.|i\.e\.|such as|for example|optionally|which|if|allowing|"
    r"(?:to )?helps? (?:the )?users?|"
    r"and returns?|returning|and (?:then )?(?:stores?|returns?|outputs?|limits?))\b|\s+and\s+returns?\b|"
    r"\s+returning\b|\s+e\.g\.|\s+including\b|\s+includes?\b|\s+optionally\b|\s+if\s+(?:the|it|any|a|no)\b).*$",
    re.IGNORECASE,
)
_PROVIDER_TAIL = re.compile(
    r"\s+(?:using|from|via|through|with|on|in|of|by|to)\s+(?:the\s+|an?\s+)?(?:[\w.\-']+\s+){0,5}"
    r"(?:api|apis|service|endpoint|rapidapi|database)\b.*$",
    re.IGNORECASE,
)
_DANGLING = re.compile(r"(?:\s+(?:and|or|with|for|of|to|by|using|from|in|on|at|the|a|an))+\s*$", re.I)
_ABBREVIATIONS = re.compile(r"\b(e\.g|i\.e|etc|vs|approx|U\.S|No|Dr|Mr|Ms|St)\.", re.IGNORECASE)
# A line break ends a sentence unless the next line goes on with it in lower case (a wrapped line:
# "This is useful to verify that\nauthentication is functioning correctly").
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(*])|\n+(?![ \t]*[a-z])|\n(?=[ \t]*[a-z])(?<=[.!?:]\n)")
_DETERMINERS = word_set(
    "a an the every all any each some my your our their this these that those its his her today's tomorrow's"
)


def _sentences(description: str) -> list[str]:
    text = re.sub(r"[*_`#]{2,}|`", "", description)
    text = re.split(r"\btool description:\s*", text, flags=re.IGNORECASE)[-1]
    text = _ABBREVIATIONS.sub(lambda m: m.group(1).replace(".", "\x00") + "\x00", text)
    parts = (re.sub(r"\s*\n\s*", " ", s) for s in _SENTENCE_END.split(text))
    return [s.replace("\x00", ".").strip() for s in parts if s.strip()]


def _clean(sentence: str) -> str:
    text = re.sub(r"\s*[(\[][^()\[\]]*[)\]]", "", sentence)
    for preamble in _PREAMBLES:
        text = preamble.sub("", text, count=1)
    text = re.sub(r",?\s+(?:and\s+)?then\s+", " and ", _CLAUSE_CUT.sub("", text))
    text = _PROVIDER_TAIL.sub("", text)
    text = re.sub(r"\ba (?=[aeio]\w)", "an ", re.sub(r"\s+", " ", text))
    return _DANGLING.sub("", text).strip(" .,;:!?")


_API_WORD = re.compile(r"\b(?:api|apis|v\d+|endpoint|rapidapi)\b", re.IGNORECASE)


def _name_words(name: str) -> str:
    """``get_weather`` / ``QueryStock`` / ``sculptor_info.get`` as words ("get sculptor info")."""
    parts = [_API_WORD.sub("", humanize(p)).strip() for p in re.split(r"[./]", name) if p]
    parts = [p for p in parts if p] or ["tool"]
    if len(parts) > 1 and _base_verb(parts[-1].split(" ")[0]):
        parts = [parts[-1], *parts[:-1]]
    return " ".join(parts)


_NOTE_OPENING = re.compile(
    r"^\W*(?:(?:notes?|important|warning|caution|tips?|examples?|remarks?|it|they|these|you|we|there|if|"
    r"when|only|do|don't|never|always|please|make sure)\b"
    # "This is useful to verify that ...": a remark on the sentence before (not "This is an API for").
    r"|this (?:is|can|will|may|should|must|does|was)\b"
    r"(?!\s+(?:an?|the)\s+(?:api|tool|function|endpoint|method|service)\b)"
    r"|(?:returns?|raises?|output|response|args|arguments|parameters?|usage)\s*:)",
    re.IGNORECASE,
)


def _usable(text: str) -> bool:
    words = text.split()
    return 2 <= len(words) <= 30 and not implementation_notes(text)


def _purpose_text(name: str, description: str) -> tuple[str, bool]:
    """The first sentence about the purpose, and whether it came from the name."""
    for sentence in _sentences(description):
        if _NOTE_OPENING.match(sentence):
            continue
        text = _clean(sentence)
        if _usable(text):
            return text, False
    return _name_words(name), True


def _split(text: str, third_person: bool) -> tuple[str, str, str]:
    first, _, rest = text.partition(" ")
    base = _base_verb(first) or _unknown_verb(first, rest) or _imperative(first, rest)
    if first.lower() in ("look", "looks", "looking") and rest.lower().startswith("up "):
        return "look up", rest[3:], GET
    if base is None or rest.lower().startswith("of "):  # "List of cities" names a thing
        obj = text if first.lower() in _DETERMINERS else f"the {_lower_first(text)}"
        return "get", _lower_first(obj), GET
    if base in ("represent", "model"):  # SureVoIP's "Represents a customer" fetches one
        return "get", rest, GET
    if base == "return" and not (third_person or first.lower().endswith("s")):
        return "return", rest, ACTION  # "Return some items of an order" is a return, not a lookup
    if not rest.strip():
        return "get", "the results", GET
    kind = _kind(base)
    joined, _, after = rest.partition(" ")
    second, _, remainder = after.partition(" ")
    other = _base_verb(second) if joined.lower() in ("and", "or") else None
    if other is not None and remainder:  # "retrieving and updating user information"
        kinds = {kind, _kind(other)}
        return f"{base} {joined.lower()} {other}", remainder, ACTION if ACTION in kinds else ASK
    return base, _SECOND_VERB.sub(_base_second, rest), kind


#: A second verb in the third person after the object, before an object of its own ("a full grid
#: search and retrieves the ranking"; not "books and posts").
_SECOND_VERB = re.compile(
    r"(?<= and )([a-z]+s)(?= (?:the|a|an|its|their|all|any|each|every|this|these|those)\b)"
)


def _base_second(match: re.Match[str]) -> str:
    word = match.group(1)
    return _base_verb(word) or word


def _kind(verb: str) -> str:
    return GET if verb in _GET_VERBS else ASK if verb in _ASK_VERBS else ACTION


def _unknown_verb(first: str, rest: str) -> str | None:
    """A verb the lexicon lacks, in the third person before an object ("Communicates with ...")."""
    word = first.lower()
    if not word.endswith("s") or word.endswith("ss") or word in ("uses", "takes"):
        return None
    if rest.split(" ", 1)[0].lower() not in _OBJECT_STARTS:
        return None
    return word[:-2] if re.search(r"(?:sh|ch|x|ss|zz)es$", word) else word[:-1]


_OBJECT_STARTS = word_set("a an the with all any every some one two multiple several")
_IMPERATIVE_OBJECTS = word_set("a an the all every my your several multiple")


def _imperative(first: str, rest: str) -> str | None:
    """A verb the lexicon lacks, in the imperative before its object ("Reorder a playlist")."""
    word = first.lower()
    if not word.isalpha() or len(word) < 3 or word in _DETERMINERS:
        return None
    return word if rest.split(" ", 1)[0].lower() in _IMPERATIVE_OBJECTS else None


def _lower_first(text: str) -> str:
    first = text.split(" ", 1)[0]
    if len(first) > 1 and (first.isupper() or any(c.isupper() for c in first[1:])):
        return text  # an acronym or a proper name keeps its case
    return text[:1].lower() + text[1:]


_SLOT = re.compile(
    r"\s+(?:for|of|at|in|on|from|to|with|within|between|about|into|by|near|across|under|over|per|"
    r"based on|given|using|according to|matching|that match(?:es)?)\s+"
    r"(?:(?:a|an|the given|a given|the specified|a specified|specified|given|specific|a specific|the "
    r"provided|provided|certain|a certain|particular|a particular|one|some|any|two|multiple|several|its|the|"
    r"their|his|her|the user's|a user's)\b.*|(?:the |its |their )?(?:id|name|query|keyword|parameters?|"
    r"criteria|input|coordinates?|date|location)\b.*)$",
    re.IGNORECASE,
)
_GIVEN_TAIL = re.compile(r"\s+(?:based on|given|using|according to|by)\s+.*$", re.IGNORECASE)


def _core(obj: str) -> str:
    """``obj`` without the trailing phrases that stand for values ("at a coordinate")."""
    core = _DANGLING.sub("", _SLOT.sub("", _GIVEN_TAIL.sub("", obj))).strip(" ,;:")
    words = core.split()
    if not words or (len(words) == 1 and words[0].lower() in _DETERMINERS | {"for", "of", "to"}):
        return obj
    return core


@lru_cache(maxsize=8192)
def _purpose(name: str, description: str, parameters: frozenset[str]) -> Purpose:
    text, from_name = _purpose_text(name, description)
    third_person = bool(re.match(r"^\w+s\b", text)) and not from_name
    verb, obj, kind = _split(text, third_person)
    named = _base_verb(_name_words(name).partition(" ")[0]) or "" if not from_name else ""
    if {named, verb} <= _CHANGES.keys() and _CHANGES[named] != _CHANGES[verb]:
        verb = named  # the name is what is called: API-Bank's ModifyReminder is described "The API
        # for deleting a reminder item" (DeleteReminder's words); it modifies, it does not delete

    obj = _determined(_definite(obj.strip()), verb)
    return Purpose(verb=verb, obj=obj, core=_parameter_tail(_core(obj), parameters), kind=kind)


#: What an action does to a thing, by its verb (a name and a description saying two disagree).
_CHANGES = {
    **dict.fromkeys(("add", "create", "insert", "register", "new"), "create"),
    **dict.fromkeys(("delete", "remove", "cancel", "destroy", "drop", "erase"), "delete"),
    **dict.fromkeys(("modify", "update", "edit", "change", "patch", "rename"), "update"),
}
_TAIL = re.compile(
    r"^(.+?)\s+(?:with|by|for|from|using|given|including|of|on|in|at|via)\s+([\w\s,'-]+)$", re.I
)
_FILLERS = word_set("and or the a an its their his her given specified provided its own")


def _parameter_tail(core: str, parameters: frozenset[str]) -> str:
    """``core`` without a trailing phrase that lists the tool's arguments ("with content and time")."""
    match = _TAIL.match(core)
    if match is None or not parameters:
        return core
    words = [w for w in re.split(r"[\s,]+", match.group(2).lower()) if w and w not in _FILLERS]
    named = sum(1 for w in words if w in parameters or w.rstrip("s") in parameters)
    return match.group(1) if words and named * 3 >= len(words) * 2 else core


def _determined(obj: str, verb: str) -> str:
    """A bare singular noun with its article, as a person says it: OpenAPI's "Delete webhook"
    deletes the webhook ("I've deleted webhook" read badly), "Create webhook" makes a webhook."""
    words = obj.split()
    if not 1 <= len(words) <= 3 or not all(w.isalpha() for w in words) or set(map(str.lower, words)) & _BARE:
        return obj
    last = words[-1].lower()
    if last.endswith("s") and not last.endswith(("ss", "us", "is")):
        return obj  # "List webhooks"
    return article(obj) if verb in _MAKES else f"the {obj}"


#: Words that keep a phrase as written: determiners, particles ("Sign up"), pronouns, quantities,
#: and nouns of no number ("Send money").
_BARE = _DETERMINERS | word_set("in up out on off to for with by from of about into over it them more new")
_BARE |= word_set("money cash data information info help advice feedback traffic content media mail")
#: Verbs that make what they name: "Create webhook" makes a webhook, it acts on no webhook known.
_MAKES = word_set("add create insert register make build book open post publish upload generate")


def _definite(text: str) -> str:
    """ "a given city" -> "the city": the request names it right after."""
    return re.sub(r"\b(?:an?|the) (?:given|specified|provided|particular|specific) ", "the ", text)


def described(tool: Tool) -> str:
    """``tool``'s description without its implementation-note sentences (what a model writing a
    request may see: it cannot repeat a note it never saw)."""
    kept = [
        s
        for s in _sentences(tool.description or "")
        if not _NOTE_OPENING.match(s) and not implementation_notes(s)
    ]
    return " ".join(kept) or purpose_of(tool).phrase()


def purpose_of(tool: Tool) -> Purpose:
    """The purpose of ``tool`` (cached by name, description and argument names)."""
    properties = tool.parameters.get("properties") or {}
    return _purpose(tool.name, tool.description or "", _parameter_words(tuple(properties)))


@lru_cache(maxsize=8192)
def _parameter_words(names: tuple[str, ...]) -> frozenset[str]:
    return frozenset(w.lower() for name in names for w in humanize(name).split())


# ----------------------------------------------------------------------------------------------- words

_ABBREVIATED = {
    "id": "ID", "ids": "IDs", "url": "URL", "urls": "URLs", "uri": "URI", "api": "API", "ip": "IP",
    "num": "number", "no": "number", "qty": "quantity", "q": "query", "lang": "language", "loc": "location",
    "src": "source", "dst": "destination", "desc": "description", "addr": "address", "info": "information",
    "dob": "date of birth", "dt": "date", "img": "image", "msg": "message", "cnt": "count", "amt": "amount",
    "pwd": "password", "tz": "time zone", "lat": "latitude", "lng": "longitude", "lon": "longitude",
    "iata": "IATA", "icao": "ICAO",
    "sku": "SKU", "isbn": "ISBN", "iso": "ISO", "snp": "SNP", "dna": "DNA", "cik": "CIK", "vin": "VIN",
}  # fmt: skip
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


@lru_cache(maxsize=16384)
def label(name: str) -> str:
    """How a person names an argument: its words without transport prefixes ("X-Api-Key" -> "key")."""
    words = _API_WORD.sub("", humanize(name)).split()
    if len(words) > 1 and words[0] == "x":
        words = words[1:]
    if len(words) > 2 and words[-1] == "of" and words[-2] in ("one", "any", "all"):
        words = words[:-2]  # PeerTube's privacyOneOf, tagsAllOf: the filter's values say the rest
    return " ".join(words) or humanize(name)


@lru_cache(maxsize=16384)
def humanize(name: str) -> str:
    """An identifier as words: ``city_name`` -> "city name", ``petId`` -> "pet ID", ``is_id`` -> "ID",
    and a bracketed query name as what it names (JSON:API's ``page[size]`` -> "page size",
    ``filter[status]`` -> "status": the value filters by it)."""
    words = [w for w in re.split(r"[_\-\s.\[\]]+", _CAMEL.sub(" ", name)) if w]
    words = [part for w in words for part in segmented(w)]  # listid, pagesize: "list ID", "page size"
    lead = words[0].lower() if len(words) > 1 else ""
    if lead in ("is", "has") or ("[" in name and lead in _FILTERS):
        words = words[1:]
    return " ".join(
        _ABBREVIATED.get(w.lower(), w if w.isupper() and len(w) > 1 else w.lower()) for w in words
    )


#: The first word of a bracketed query name that only says its value is a filter.
_FILTERS = frozenset({"filter", "filters", "where"})


def article(phrase: str) -> str:
    """``phrase`` with "a" or "an" before it ("an upload", "a user", "a unit", "a URL", "an hour")."""
    lower = phrase.lower()
    vowel = (
        lower[:1] in "aeio"
        or (lower[:1] == "u" and lower[1:2] not in "aeiou" and not lower.startswith(_YOU_SOUNDS))
        or lower.startswith(("hour", "honest", "honor", "honour", "heir"))  # a silent h
    )
    return ("an " if vowel else "a ") + phrase


#: Words that open with a "u" said as "you" ("a user", "a unit", "a URL").
_YOU_SOUNDS = (
    "uni",
    "use",
    "usa",
    "usu",
    "uti",
    "uto",
    "ura",
    "uri",
    "uro",
    "ure",
    "url",
    "uk",
    "us ",
    "ubi",
)


def join_words(items: list[str], conjunction: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} {conjunction} {items[-1]}"


def join_facts(items: list[str]) -> str:
    """Facts of an answer joined, each without its closing full stop (a sentence said as a value:
    "the description is Weekly export of invoices., the fileloc is ..."). A request keeps its
    values whole: they are what its calls use."""
    return join_words([unstopped(item) for item in items])


def unstopped(fact: str) -> str:
    """``fact`` without its closing full stop (not an ellipsis's), to go before a comma."""
    return _STOP.sub("", fact)


_STOP = re.compile(r"(?<=[^\W_])\.$")


def plain_name(name: str) -> str:
    """A name without case or separators: ``pet_id``, ``petId`` and ``Pet-ID`` are ``petid``."""
    return "".join(ch for ch in name.lower() if ch.isalnum())


def plural(noun: str) -> str:
    """``noun`` of one thing as of several ("adult" -> "adults", "child" -> "children")."""
    if noun in _PLURAL_OF:
        return _PLURAL_OF[noun]
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return noun[:-1] + "ies"
    return noun + "s"


def singular(noun: str) -> str:
    """``noun`` of several things as of one ("pets" -> "pet", "children" -> "child")."""
    head, _, last = noun.rpartition(" ")
    capitals = len(last) > 1 and last.endswith("s") and last[:-1].isupper()  # "post IDs", "URLs"
    made = _SINGULAR_OF.get(last) or (last[:-1] if capitals else one(last))
    return f"{head} {made}".lstrip()


_SINGULAR_OF = {"people": "person", "children": "child", "kids": "kid", "men": "man", "women": "woman"}
_PLURAL_OF = {one: several for several, one in _SINGULAR_OF.items() if several != "kids"}
