"""Identifiers and the entities they name, for the ``dataflow`` enrichment.

An *identifier* is a parameter whose value names one thing: ``ticket_id``, ``petId``, ``id``,
``cache_key``, ``cik``, ``uuid``, ``accessionNumber`` (a ``*_number`` that names an entity, unlike
``page_number`` or ``phone_number``). An identifier carries the *entity* it names, read from:

1. its own name (``event_id`` -> ``event``, ``originSkyId`` -> ``sky``);
2. its description (``"User ID of the user to send the message to"`` -> ``user``,
   ``"Unique identifier for the location"`` -> ``location``, ``"Hotel ID"`` -> ``hotel``);
3. when the name has none (a bare ``id``): the nearest object it sits in that names something
   (its schema ``title`` or ``$ref`` name, else the property holding it: ``author[].id`` ->
   ``author``; ``children[].comment.id`` -> ``comment``), else the tool's name (``createPet``: pet).

The name gives slot ``a``, the rest slot ``b``. Two identifiers name *different* entities when both
have a known entity and no slot of one equals a slot of the other; the scorer then gives their edge
0, so an event's id never feeds a pet's id. :func:`role` packs this into a short string stored with
each parameter signature; :func:`parse_role` reads it back.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fms_dgt.core.tools.enrichments._dataflow_words import (
    ABBREVIATIONS,
    ENVELOPES,
    WORD,
    name_text,
    singular,
    words,
)

__all__ = [
    "CHOICES",
    "MAX_VARIANTS",
    "Role",
    "api_name",
    "api_prefix",
    "bare_label",
    "compound_name",
    "context_entity",
    "entity_key",
    "in_space",
    "name_entity",
    "name_text",
    "parse_role",
    "path_entity",
    "role",
    "schema_entity",
    "singular",
    "with_variants",
    "words",
]

_SENTENCE = re.compile(r"[.;:!?](?:\s|$)")
#: A Markdown link (``[invoice item](https://...)``): its text is what the description says.
_LINK = re.compile(r"\[([^\]\n]{0,200})\]\([^)\s]{0,500}\)")
#: How much of a description is read for an entity (its first sentence is well within).
_READ = 2000
#: A possessive ending ("The person's ID number" names a person, not "s").
_POSSESSIVE = re.compile(r"['\u2019]s\b")
#: Marks that end a clause inside a sentence ("an external account - only return payouts ...").
_CLAUSE = re.compile(r"\s[-\u2013\u2014]+\s|[,(]")

#: Last words that make a parameter an identifier.
_ID_WORDS = frozenset(
    {"id", "ids", "uid", "uids", "uuid", "uuids", "guid", "key", "keys", "identifier", "identifiers"}
)
#: Identifier words that are no entity (``key`` is: a deploy key, an API key).
_ID_NOT_NOUNS = _ID_WORDS - {"key", "keys"}
#: Identifier schemes that are themselves the entity's name (``cik``: a company in SEC filings).
_SCHEMES = frozenset({"cik", "isbn", "asin", "sku", "ein", "vin", "iban", "imdb", "ean", "upc", "doi"})
#: Words before ``number`` that make it a quantity or a contact detail, not an entity's identifier.
_NOT_ENTITY_NUMBER = frozenset(
    {
        "page", "phone", "fax", "mobile", "contact", "street", "house", "building", "floor", "apartment",
        "max", "min", "maximum", "minimum", "total", "decimal", "random", "lucky", "version", "line",
        "port", "week", "day", "month", "year", "count", "the", "a", "of", "any", "prime", "whole",
        "try", "attempt", "retry", "atomic",
    }
)  # fmt: skip
#: Words that qualify an entity rather than name it (``originSkyId`` names a sky id).
_MODIFIERS = frozenset(
    {
        "origin", "destination", "source", "target", "parent", "child", "new", "old", "current", "primary",
        "secondary", "from", "to", "the", "a", "an", "of", "unique", "external", "internal", "main",
        "default", "my", "your", "its", "their", "this", "that", "each", "any", "given", "specific",
        "selected", "first", "last", "next", "previous", "other", "same", "own", "public", "private",
        "short", "original", "foreign",
    }
)  # fmt: skip
#: Qualifying words that are nouns too: alone, as a schema's name or a description's only noun
#: ("The ID of a source to transfer funds from"), they name the entity.
_NOUN_MODIFIERS = frozenset({"source", "destination", "target", "origin"})
#: Container words that name no entity (``results[].id``, ``data.id``), and schema-name suffixes
#: (``MovieFull``, ``StaffHeader``, ``ObjectMeta``, ``LocalObjectReference``: a reference is about
#: another object), wherever they appear.
_GENERIC = frozenset(
    {
        "result", "results", "data", "item", "items", "response", "output", "value", "values", "list",
        "record", "records", "entry", "entries", "payload", "body", "content", "info", "information",
        "detail", "details", "attribute", "attributes", "object", "node", "nodes", "api", "scraper",
        "get", "by", "name", "all", "overview", "status", "service", "request", "entity", "metadata",
        "full", "base", "dto", "model", "schema", "header", "summary", "meta", "reference", "ref",
        "constant", "spec", "param",
    }
)  # fmt: skip
#: Generic words that, after a noun, make a compound entity (a subscription's items, a zone's
#: records): ``subscription item`` is not the subscription.
_COMPOUND_HEADS = frozenset({"item", "entry", "record"})
#: Verbs that start a tool name (``get_pet``, ``SearchLocation``): the entity follows them.
_VERBS = frozenset(
    {
        "get", "list", "search", "find", "fetch", "retrieve", "create", "add", "update", "delete",
        "remove", "set", "post", "put", "patch", "query", "lookup", "look", "check", "show", "view",
        "display", "read", "write", "make", "run", "compute", "calculate", "estimate", "upload",
        "download", "send", "book", "cancel", "edit", "close", "open", "resolve", "register", "place",
        "purchase", "modify", "replace", "save", "load", "submit", "start", "stop", "track", "verify",
    }
)  # fmt: skip
#: Nouns ending in "ed" (an embed's id is an embed's).
_NOT_PARTICIPLES = frozenset({"embed", "shed", "sled", "hundred", "kindred", "bred", "sped"})
#: Words that end the noun phrase after "id of the ..." in a description.
_PHRASE_END = frozenset(
    {
        "for", "to", "of", "in", "on", "at", "by", "with", "from", "that", "which", "who", "whose",
        "is", "are", "was", "be", "if", "or", "and", "as", "when", "where", "e", "g", "eg", "ie",
        "you", "we", "it", "can", "will", "should", "must", "may", "used", "into", "this",
        "once", "only", "also", "previously", "currently", "already", "still", "now", "not",
    }
)  # fmt: skip
#: Words with which a description declares an identifier ("The ID of the origin station").
_DECLARING = frozenset({"id", "identifier", "uuid", "guid"})
#: Types an identifier declared only by its description may have.
_ID_TYPES = frozenset({"string", "integer", "string?", "integer?"})
_ARTICLES = frozenset({"the", "a", "an", "any", "each", "this", "that", "given", "specific", "one"})
#: Last words of a search input: any text may be searched for.
_QUERY_WORDS = frozenset({"query", "q", "keyword", "keywords", "search", "term", "terms", "phrase"})
#: Last words of an output that is a label of something (what a person would search for) or a
#: piece of text (what a person would pass on as text).
_LABEL_WORDS = frozenset(
    {
        "title", "name", "text", "label", "headline", "subject", "topic", "caption", "keyword",
        "keywords", "query", "city", "country", "location", "place", "address", "region", "phrase",
        "transcript", "answer", "summary", "translation", "sentence", "comment",
    }
)  # fmt: skip
#: First nouns of the description of an input that takes any text ("The text to be translated").
_TEXT_HEADS = frozenset({"text", "query", "keyword", "keywords", "search", "phrase", "sentence"})
#: Names that say what kind of value a parameter is but not of what (``name``, ``code``): they
#: read with the entity where they sit (``location.name`` reads ``location name``).
_BARE_LABELS = frozenset({"name", "title", "code", "label"})
#: One envelope's name on both sides (JSON:API's ``data``) says nothing of whether they hold the
#: same thing.
_ENVELOPES = ENVELOPES


def bare_label(name: str) -> bool:
    """Whether a name is only a kind of value (``name``, ``title``, ``code``), not of what."""
    tokens = words(name)
    return len(tokens) == 1 and tokens[0] in _BARE_LABELS


#: Separate a role from its tool's namespace (:func:`in_space`) and its values (:mod:`._dataflow_choices`).
_SPACE, CHOICES = "\x1e", "\x1f"


def in_space(text: str, namespace: str | None) -> str:
    """A role string with the namespace of its tool when it is a label or a search input.

    Any label can be searched for, so a label feeds a search input of its own namespace however
    few words they share; across namespaces only their texts decide. Without this, every name,
    title and caption of a pool fed every search input of every other API (a pet photo's caption
    into an unrelated document search).
    """
    if parse_role(text).kind not in ("label", "query"):
        return text
    return f"{text}{_SPACE}{namespace or ''}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Role:
    """What :func:`parse_role` reads from a role string.

    Attributes:
        identifier: the parameter names one thing.
        a, b: the entity from the name, and from the description or context ("" when unknown).
        kind: ``"id"``, ``"label"``, ``"query"`` or ``""`` (a plain value).
        place: for a bare label (``name``, ``title``), the entity it sits in ("" when unknown):
            a pool's ``name`` is not a role's ``name``.
        whole: for a bare identifier, the whole name of the object it identifies when that is a
            compound its entity shortens (``payment method`` for the ``id`` of a
            ``payment_method``, whose entity is ``method``); ``""`` otherwise.
        space: for a label or a search input, the namespace of its tool (:func:`in_space`): a
            label feeds any search input of its own namespace, whatever words they share.
        variants: for a polymorphic identifier, the entities it may name (a balance
            transaction's ``source`` is a charge's, a refund's or a top-up's id): an identifier
            of any of them feeds it and is fed by it.
    """

    identifier: bool
    a: str = ""
    b: str = ""
    kind: str = ""
    place: str = ""
    whole: str = ""
    space: str = ""
    variants: tuple[str, ...] = ()


def _id_word(tokens: Sequence[str]) -> str | None:
    """The word that makes ``tokens`` (a parameter name) an identifier, or None."""
    if not tokens:
        return None
    last = tokens[-1]
    if last in _ID_WORDS or last in _SCHEMES:
        return last
    if last == "number" and len(tokens) > 1 and tokens[-2] not in _NOT_ENTITY_NUMBER:
        return last
    return None


def _name_entity(tokens: Sequence[str]) -> str:
    """The entity a name's words give before its identifier word (``""`` when none)."""
    if tokens[-1] in _SCHEMES:
        return tokens[-1]
    for word in reversed(tokens[:-1]):
        if word not in _MODIFIERS and word not in _ID_WORDS and not word.isdigit() and not _participle(word):
            return singular(word)
    return ""


def _phrase_entity(tokens: Sequence[str], start: int) -> str:
    """The head noun of the phrase starting at ``start`` ("the posted tweet to ..." -> tweet;
    "the subscription item this ..." -> the compound ``subscription item``, as in names)."""
    head = before = qualifier = ""
    for word in tokens[start : start + 6]:
        if word in _ARTICLES and not head:
            if qualifier:
                break  # "the source this transaction is attached to": a clause follows the noun
            continue
        if word in _PHRASE_END or word in _ID_WORDS:
            break
        if word in _MODIFIERS and not head:
            qualifier = word if word in _NOUN_MODIFIERS else qualifier
            continue  # "the original expired Checkout Session": what qualifies the noun comes first
        if _participle(word):
            if head:
                break
            continue  # "the posted tweet": a participle before the noun
        if head and word.endswith("ing") and len(word) > 4:
            break  # "object containing objects": a participle after the noun ends its phrase
        head, before = word, head
    if before and singular(head) in _COMPOUND_HEADS:
        return _named_entity([before, head])
    if not head:
        return qualifier  # "a source to transfer funds from": the qualifier was the noun
    return "" if head in _GENERIC or head in _MODIFIERS else singular(head)


def _clauses(description: str) -> list[list[str]]:
    """The words of each clause of a description's first sentence, Markdown links read as their
    text: "The ID of an external account - only return payouts ..." has two clauses, so the
    account's phrase ends before "only return"."""
    head = description.strip()[:_READ]  # a first sentence is short; a hostile description is not
    first = _SENTENCE.split(_POSSESSIVE.sub("", _LINK.sub(r"\1", head)), 1)[0]
    return [tokens for part in _CLAUSE.split(first) if (tokens := words(part))]


def _participle(word: str) -> bool:
    """Whether a word reads as a past participle ("posted", "tied", "exposed"; not "feed")."""
    return word.endswith("ed") and not word.endswith("eed") and len(word) > 3 and word not in _NOT_PARTICIPLES


def _description_entity(description: str, id_word: str) -> str:
    """The entity the first sentence of a description names ("ID of the ticket", "Hotel ID")."""
    for tokens in _clauses(description):
        found = _clause_entity(tokens, _ID_WORDS | {id_word})
        if found:
            return found
    return ""


def _clause_entity(tokens: Sequence[str], marks: frozenset[str] | set[str]) -> str:
    """The entity one clause names around an identifier word (one of ``marks``)."""
    for i, word in enumerate(tokens):
        if word not in marks:
            continue
        if i + 1 < len(tokens) and tokens[i + 1] in ("of", "for"):
            found = _phrase_entity(tokens, i + 2)
            if found:
                return found
        if i > 0 and tokens[i - 1] not in _MODIFIERS and tokens[i - 1] not in _GENERIC:
            previous = tokens[i - 1]
            # "The object id, uuid or short uuid": an id word before another names no entity.
            if previous not in _PHRASE_END and previous not in marks and not previous.isdigit():
                return singular(previous)
    return ""


def context_entity(
    tool_name: str, places: Sequence[str] = (), path: str = "", titles: Sequence[str] = ()
) -> str:
    """The entity an identifier without one in its name belongs to, from where it sits.

    The nearest object that names something gives it: a leaf of ``children[].comment`` in a
    ``VideoCommentThreadTree`` belongs to the comment, not to the tree.

    Args:
        tool_name: the tool's name (``getPet``, ``Spotify_Scraper_Get_Artist_Overview``).
        places: the names of the properties holding it and the ``title`` or ``$ref`` names of
            the objects holding it, outermost first (``("author", "Person")`` for
            ``author[].id``: a field's ``places``).
        path: the tool's REST path, if any: what its result is about (:func:`path_entity`) says
            more than a name made from the path (``get_api_v1_videos_by_id_comment_threads``).
        titles: which of ``places`` are schema names: one that is a word which otherwise only
            qualifies (Stripe's ``source`` object) names that entity.
    """
    _, found = _naming_place(places, titles)
    return found or (path_entity(path) if path else "") or _tool_entity(words(tool_name))


def _naming_place(places: Sequence[str], titles: Sequence[str] = ()) -> tuple[str, str]:
    """The nearest of ``places`` (outermost first) that names an entity, and that entity
    (``("", "")`` when none does); see :func:`context_entity` for ``titles``."""
    for name in reversed(places):
        found = name_entity(name) or (
            name.lower() if name in titles and name.lower() in _NOUN_MODIFIERS else ""
        )
        if found:
            return name, found
    return "", ""


def compound_name(places: Sequence[str]) -> str:
    """The whole name of the nearest of ``places`` (outermost first) that names an entity, as
    words, when it has more than one noun (``payment_method`` -> ``payment method``; its entity is
    ``method``), else ``""`` (``author``, or a qualified schema name)."""
    name, _ = _naming_place(places)
    nouns = [singular(w) for w in words(name) if _noun(w)] if "." not in name else []
    return " ".join(nouns) if len(nouns) > 1 else ""


def name_entity(name: str) -> str:
    """The entity one name gives: a property or schema name (``subscription_items`` ->
    ``subscription item``, ``io.k8s.api.apps.v1.StatefulSet`` -> ``statefulset``), ``""`` when
    it names nothing (``data``)."""
    return _type_entity(name) if "." in name else _named_entity(words(name))


def schema_entity(name: str) -> str:
    """The entity a schema's name gives: as :func:`name_entity`, and a qualifying word alone
    names its entity (Stripe's ``source`` object)."""
    return name_entity(name) or (name.lower() if name.lower() in _NOUN_MODIFIERS else "")


def path_entity(path: str, param: str = "") -> str:
    """The entity a REST path names for ``{param}``, or for its result when ``param`` is empty.

    A path parameter belongs to the collection before it (``/videos/{id}/comments`` gives ``video``
    for ``id``); a result is what the path's last collection holds (``comment``). Version and
    generic segments (``/api/v1``) name nothing.
    """
    segments = [s for s in path.split("/") if s]
    if param:
        where = f"{{{param}}}"
        segments = segments[: segments.index(where)] if where in segments else []
    for segment in reversed(segments):
        if segment.startswith("{"):
            continue
        tokens = words(segment)
        while tokens and tokens[0] in _VERBS:  # /payouts/{payout}/cancel; /tradingCardSet keeps "set"
            tokens = tokens[1:]
        found = _named_entity(tokens)
        if found:
            return found
    return ""


def _type_entity(name: str) -> str:
    """The entity a qualified schema name gives: its last part as one word, as a REST path
    writes it (``io.k8s.api.apps.v1.StatefulSet`` and ``/statefulsets`` both give
    ``statefulset``); ``""`` when that names nothing (``...v1.Service``: a generic word)."""
    last = name.rsplit(".", 1)[-1]
    tokens = words(last)
    if not tokens or not _noun(tokens[-1]):  # ObjectMeta, LocalObjectReference: about another
        return ""
    word = singular(last.lower())
    return word if _noun(word) and word.isalnum() else ""


def _named_entity(tokens: Sequence[str]) -> str:
    """The entity one name's words give: its last noun, or a compound whose head names no
    entity alone (``subscription_items`` -> ``subscription item``, not ``subscription``)."""
    if len(tokens) > 1 and singular(tokens[-1]) in _COMPOUND_HEADS and _noun(tokens[-2]):
        return f"{singular(tokens[-2])} {singular(tokens[-1])}"
    nouns = [w for w in tokens if _noun(w)]
    return singular(nouns[-1]) if nouns else ""


def api_prefix(tool_name: str) -> str:
    """The first word of a tool's name when it may name an API, else ``""``.

    Catalogues that put many APIs in one namespace name their tools ``<API>_<operation>``
    (``Tripadvisor_Search_Hotels``, ``SkyScrapperSearchAirport``); a verb (``get_ticket``) or a
    generic word starts an operation's name, not an API's.
    """
    found = WORD.search(tool_name)
    word = found.group().lower() if found else ""
    if word in _VERBS or word in _GENERIC or word in _MODIFIERS or word.isdigit():
        return ""
    return word


def api_name(tool_name: str) -> str:
    """The API a tool's name surely names, else ``""``: its :func:`api_prefix` when the name is
    written ``<API>_<operation>`` or ``<Api><Verb>...`` with a capital first letter
    (``Spotify_Scraper_Get_Artist``, ``TripadvisorSearchHotels``, ``SEC_Filings``), not for a
    name that is an operation alone (``get_weather``, ``lockDoors``, ``GetCharges``, API-Bank's
    ``AppointmentRegistration``). Unlike :func:`api_prefix`, it needs no other tool of the
    namespace to tell two tools' APIs apart."""
    if not tool_name[:1].isupper():
        return ""
    prefix = api_prefix(tool_name)
    head = _API_SEPARATOR.split(tool_name, maxsplit=1)[0]
    if not prefix or head != tool_name:
        return prefix
    named = words(head)
    return prefix if len(named) > 1 and named[1] in _VERBS else ""


_API_SEPARATOR = re.compile(r"[_.]")


def _tool_entity(tokens: Sequence[str]) -> str:
    """The entity a tool's name is about: the first noun after its verb, else its last noun."""
    nouns = [w for w in tokens if _noun(w)]
    for i, word in enumerate(tokens):
        if word in _VERBS:
            after = [w for w in tokens[i + 1 :] if w in nouns and w not in _VERBS and w not in _ID_WORDS]
            if after:
                return singular(after[0])
    rest = [w for w in nouns if w not in _VERBS and w not in _ID_WORDS]
    return singular(rest[-1]) if rest else ""


def _noun(word: str) -> bool:
    """Whether a word of a tool's name may be its entity (not ``v`` of ``get_api_v1_videos``, nor
    a generic word such as ``data``)."""
    if len(word) < 2 or word in _GENERIC or word in _MODIFIERS or word in _ID_NOT_NOUNS:
        return False
    return not word.isdigit()  # and an id word names no entity: /tax_ids and a TaxId are a tax's


def role(
    name: str,
    schema: Mapping[str, Any],
    type_key: str,
    context: Callable[[], str] | str = "",
    output: bool = True,
    holder: Callable[[], str] | str = "",
    whole: Callable[[], str] | str = "",
) -> str:
    """The role string of a parameter.

    ``"id:<a>|<b>"`` for an identifier; ``"label"`` for a text output that labels something (a
    title, a name, a city); ``"query"`` for a search input (``query``, ``q``, ``keyword``); else
    ``""``. A bare label (:func:`bare_label`) adds the entity it sits in: ``"label@pool"`` for a
    pool's ``name`` output, ``"@role"`` for the ``name`` input of a tool creating a role; so does
    an object that only wraps others (JSON:API's ``data``: ``"@category"``, ``"@tag"``).

    Args:
        name: the parameter's own name (the last step of an output path).
        schema: its schema (the description is read).
        type_key: its type key; objects and booleans are never identifiers.
        context: the entity where it sits (:func:`context_entity`), or a function giving it,
            used when neither the name nor the description names one, and for bare labels.
        output: whether the parameter is an output (labels) or an input (queries).
        holder: for an identifier that names no entity itself, the entity of the property
            holding it when the object there has a schema name of its own (``mainDirector`` in
            a ``StaffHeader``), or a function giving it: it fills slot ``a`` when it differs
            from the context's.
        whole: for an identifier that names no entity itself, the compound name of the object
            it sits in (:func:`compound_name`), or a function giving it: ``"id:|method#payment
            method"`` (an input named ``payment_method`` takes it, see :mod:`._dataflow_exact`).
    """
    if type_key.startswith(("object", "array<object")) and name.lower() in _ENVELOPES:
        # JSON:API's ``data``: what it holds is the entity it sits in (a category's, a tag's).
        place = context() if callable(context) else context
        return f"@{place}" if place else ""
    if type_key.startswith(("object", "boolean", "array<object")):
        return ""
    tokens = words(name)
    id_word = _id_word(tokens)
    if id_word is None and type_key in _ID_TYPES:
        declared = _declared_entity(str(schema.get("description", "")))
        if declared:
            return f"id:|{declared}"
    if id_word is None:
        kind = _plain_kind(tokens, type_key, output, str(schema.get("description", "")))
        if not bare_label(name):
            return kind
        place = context() if callable(context) else context
        return f"{kind}@{place}" if place else kind
    a = _name_entity(tokens)
    b = _description_entity(str(schema.get("description", "")), id_word)
    if not a and not b:
        b = context() if callable(context) else context
        also = holder() if callable(holder) else holder
        a = also if also != b else ""
        full = (whole() if callable(whole) else whole) if b else ""
        if full and entity_key(full) != entity_key(b) and entity_key(full).endswith(entity_key(b)):
            return f"id:{a}|{b}#{full}"
    return f"id:{a}|{b}"


def _declared_entity(description: str) -> str:
    """The entity a description says a parameter identifies, when it starts by saying so ("The
    ID of the origin station" -> station, "Unique station identifier" -> station, "A tax code ID"
    -> code), else ``""``."""
    clauses = _clauses(description)
    tokens = clauses[0][:8] if clauses else []
    while tokens and (tokens[0] in _ARTICLES or tokens[0] in _MODIFIERS):
        tokens = tokens[1:]
    if len(tokens) > 2 and tokens[0] in _DECLARING and tokens[1] in ("of", "for"):
        return _phrase_entity(tokens, 2)
    for end in range(1, min(len(tokens), 4)):
        if not _noun(tokens[end - 1]) or tokens[end - 1] in _VERBS or tokens[end - 1] in _PHRASE_END:
            break
        if tokens[end] in _DECLARING:
            return _named_entity(tokens[:end])
    return ""


def entity_key(entity: str) -> str:
    """An entity as compared: ``invoice item`` (from a description) and ``invoiceitem`` (from
    the path ``/v1/invoiceitems``) are one entity."""
    return entity.replace(" ", "")


def _plain_kind(tokens: Sequence[str], type_key: str, output: bool, description: str) -> str:
    if not tokens or type_key not in ("string", "string?"):
        return ""
    if output:
        return "label" if tokens[-1] in _LABEL_WORDS else ""
    if ABBREVIATIONS.get(tokens[-1], tokens[-1]) in _QUERY_WORDS:
        return "query"
    return "query" if _first_noun(description) in _TEXT_HEADS else ""


def _first_noun(description: str) -> str:
    """The first word of a description after its articles ("The text to be translated" -> text)."""
    for word in words(_SENTENCE.split(description.strip(), 1)[0])[:3]:
        if word not in _ARTICLES:
            return word
    return ""


def parse_role(text: str) -> Role:
    """The :class:`Role` of a role string made by :func:`role` (and :func:`in_space`)."""
    text = text.partition(CHOICES)[0]
    if not text.startswith("id:"):
        text, _, space = text.partition(_SPACE)
        kind, _, place = text.partition("@")
        return Role(identifier=False, kind=kind, place=place, space=space)
    text, _, variants = text.partition(_VARIANTS)
    a, _, rest = text[3:].partition("|")
    b, _, whole = rest.partition("#")
    named = tuple(v for v in variants.split(",") if v)
    return Role(identifier=True, a=a, b=b, kind="id", whole=whole, variants=named)


#: Separates an identifier's role from the entities it may name when it is polymorphic; at most
#: :data:`MAX_VARIANTS` of them (one that may be any of more objects names none).
_VARIANTS, MAX_VARIANTS = "~", 32


def with_variants(text: str, variants: Sequence[str]) -> str:
    """An identifier's role string that also names ``variants`` (2 to :data:`MAX_VARIANTS`,
    else unchanged)."""
    found = sorted({v for v in variants if v})
    if not text.startswith("id:") or not 2 <= len(found) <= MAX_VARIANTS:
        return text
    return f"{text.partition(_VARIANTS)[0]}{_VARIANTS}{','.join(found)}"
