"""Exact matches of the ``dataflow`` enrichment: same name and type within one namespace.

Within one namespace (every API of a catalogue namespace included), an output and an input of
two tools that have the same name (``product_id`` and ``product_id``; ``artistId`` and
``artist_id`` count as the same, and so do ``lat`` and ``latitude``: abbreviations are spelled
out) and fitting types (type compatibility at least :data:`EXACT_FIT`; two identifiers of the
same entity always fit) are the wiring the tool set's author meant. Such a pair scores 1.0 and
ranks before every other candidate of its output, whatever the text similarity of the
descriptions says. Identifiers of different entities never match, even under one name (a pet's
``id`` and a thing's ``id``), nor do bare labels of different entities (a pool's ``name`` and
the ``name`` of a new role). An input named for the entity an output identifies (Stripe's
``location`` of a reader and a location's ``id``; ``file`` and a file's ``id``) matches too, and
so does an input named for a bare label with the entity it sits in (a channel's ``name`` and
``channelName``, or PeerTube's ``channelHandle``: a handle reads as a name), and an input named
for the entity with a word that makes it a reference to one (:data:`REFERENCES`: Stripe's
``original_source``, ``selected_shipping_method``, ``default_tax_rates``).

Exact pairs depend on the namespace, so they are found per parameter *instance* at every run
(a sorted join, linear in the number of parameters plus the pairs found), not cached with the
signature-level candidates; merging them keeps cold, cached and incremental runs identical.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import numpy.typing as npt

from fms_dgt.core.tools.artifacts import split_path
from fms_dgt.core.tools.enrichments._dataflow_entities import name_text, parse_role, singular, words

if TYPE_CHECKING:
    from fms_dgt.core.tools.enrichments._dataflow_params import Side
    from fms_dgt.core.tools.enrichments._dataflow_scoring import Scorer

__all__ = [
    "EXACT_FIT",
    "PAGING",
    "POSITIONS",
    "REFERENCES",
    "exact_pairs",
    "leaf_keys",
    "list_name",
    "placed_names",
    "referred_name",
    "same_name",
]

IntArray = npt.NDArray[np.int64]


class Keys(NamedTuple):
    """What :func:`leaf_keys` gives: per name id, its last step's key and its list's; per role
    id, the keys of its identifier's two entities (-1 where none); per name id its last step, per
    role id the entity a bare label sits in (``""`` if none), the key of every normalised
    name (``location`` + ``name`` is ``locationName``), and per name id the key of its last step
    without the words that make it a reference (``original_source``: ``source``; -1 for none)."""

    leaf: IntArray
    holder: IntArray
    entity_a: IntArray
    entity_b: IntArray
    whole: IntArray
    last: Sequence[str]
    place: Sequence[str]
    table: Mapping[str, int]
    referred: IntArray


_SEPARATORS = re.compile(r"[\W_]+")

#: The least type compatibility of an exact match (``integer`` into ``number`` is 0.9).
EXACT_FIT = 0.9
#: First words that make an input named for an entity a reference to one of that kind
#: (``original_source``, ``selected_shipping_method``, ``default_tax_rates``, ``parent_folder``);
#: not ``external`` nor ``new`` (a Stripe ``external_account`` is no Connect account).
REFERENCES = frozenset({"original", "selected", "default", "parent", "previous", "current", "primary"})
#: Reference words that also say where in a paged list a request is, and the words for such a
#: place right after them: ``previous_page`` or ``current_cursor`` is a page's number or a cursor's
#: token, not a reference to a page or cursor object.
POSITIONS = frozenset({"previous", "current"})
PAGING = frozenset({"page", "cursor", "offset", "marker"})


def same_name(name: str) -> str:
    """``name`` without case and separators, abbreviations spelled out: ``artistId``,
    ``artist_id`` and ``ArtistID`` agree, and so do ``lat`` and ``latitude``."""
    return _SEPARATORS.sub("", singular(name_text(name, synonyms=False).lower()))


def _last_name(path: str) -> str | None:
    """The last property name of a path (None for the whole result or a malformed path)."""
    if "\\" not in path and "[" not in path:  # the common case: plain dotted names
        return path.rsplit(".", 1)[-1] if path else None
    try:
        steps = [s for s in split_path(path) if isinstance(s, str)]
    except ValueError:
        return None
    return steps[-1] if steps else None


def leaf_keys(names: Sequence[str], roles: Sequence[str]) -> Keys:
    """The names under which outputs and inputs meet, as ids of one table.

    Per parameter name id: an id of its normalised last step (-1 for the whole result), and for
    the ``id`` or ``name`` of a list's items (``tax_rates[].id``, ``tags[].name``) an id of the
    list's name (else -1): the ids or names of listed objects are what an input named for the
    list takes (``tax_rates``, ``tags``). Per role id, for an identifier, ids of the two
    entities it names (else -1): an input named for an entity takes its identifier (Stripe's
    ``location`` of a reader, "The location to assign the reader to", takes a location's ``id``).
    """
    ids: dict[str, int] = {}
    keys = np.full(max(len(names), 1), -1, dtype=np.int64)
    holders = np.full(max(len(names), 1), -1, dtype=np.int64)
    for number, path in enumerate(names):
        leaf = _last_name(path)
        if leaf is not None:
            keys[number] = ids.setdefault(same_name(leaf), len(ids))
        holder = list_name(path)
        if holder is not None:
            holders[number] = ids.setdefault(same_name(holder), len(ids))
    entities = np.full((3, max(len(roles), 1)), -1, dtype=np.int64)
    places: list[str] = []
    for number, text in enumerate(roles):
        parsed = parse_role(text)
        places.append(parsed.place)
        for slot, entity in enumerate((parsed.a, parsed.b, parsed.whole) if parsed.identifier else ()):
            if entity:
                entities[slot, number] = ids.setdefault(same_name(entity), len(ids))
    lasts = [_last_name(path) or "" for path in names]
    referred = np.full(max(len(names), 1), -1, dtype=np.int64)
    for number, last in enumerate(lasts):
        if found := referred_name(last):
            referred[number] = ids.setdefault(found, len(ids))
    return Keys(keys, holders, entities[0], entities[1], entities[2], lasts, places, ids, referred)


def referred_name(name: str) -> str:
    """A name without the first words that make it a reference (:data:`REFERENCES`), as
    :func:`same_name` gives it (``original_source``: ``source``), or ``""`` when it has none or
    names a paged list's position (``previous_page``, ``current_cursors``: see :data:`PAGING`)."""
    tokens = words(name)
    start = next((n for n, word in enumerate(tokens) if word not in REFERENCES), len(tokens))
    if not 0 < start < len(tokens):
        return ""
    if tokens[start - 1] in POSITIONS and singular(tokens[start]) in PAGING:
        return ""
    return same_name("_".join(tokens[start:]))


def list_name(path: str) -> str | None:
    """The name of the list whose items' ``id`` or ``name`` the path reads (``a.tags[].name`` -> tags)."""
    if not path.endswith(("[].id", "[].name")):
        return None
    try:
        steps = split_path(path)
    except ValueError:
        return None
    return steps[-3] if len(steps) >= 3 and steps[-2] == 0 and isinstance(steps[-3], str) else None


def exact_pairs(
    outs: Side,
    ins: Side,
    keys: Keys,
    places: tuple[IntArray, IntArray],
    scorer: Scorer,
) -> tuple[IntArray, IntArray]:
    """Every (output instance, input instance) pair that is an exact match.

    Args:
        outs, ins: the two sides.
        keys: :func:`leaf_keys` of the pool's parameter names (last steps, lists of ids) and
            roles (entities of identifiers).
        places: per tool, its namespace id (not its API's: the APIs of a catalogue namespace
            were put together to be used together) and its qualified-name id (overloads share one).
        scorer: gives the type classes and entities of the signatures.
    """
    namespace, qid = places
    leaf = keys.leaf
    if len(outs) == 0 or len(ins) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    span = len(keys.table) + 2  # every key is an id of the table
    in_key = np.where(leaf[ins.name] >= 0, namespace[ins.tool] * span + leaf[ins.name] + 1, -2)
    order = np.argsort(in_key, kind="stable")
    referred = keys.referred[ins.name]
    ref_key = np.where(referred >= 0, namespace[ins.tool] * span + referred + 1, -2)
    ref_order = np.argsort(ref_key, kind="stable")
    out_role = outs.roles[outs.sig]
    # (key per output instance, whether the input's own name must say it): a search input takes
    # any text, never by its name alone an entity's id or label (a saved query's ``query_id`` is
    # no ``q``).
    entity_keys = [
        (keys.entity_a[out_role], True),
        (keys.entity_b[out_role], True),
        (keys.whole[out_role], True),
    ]
    out_keys = [(leaf[outs.name], False), (keys.holder[outs.name], False), *entity_keys]
    out_keys += [(placed, True) for placed in _placed_keys(keys, out_role, outs.name)]
    pairs = [
        _join(np.where(k >= 0, namespace[outs.tool] * span + k + 1, -1), in_key, order) for k, _ in out_keys
    ]
    # An input named for an entity as a reference to one (``original_source``) takes its id.
    pairs += [
        _join(np.where(k >= 0, namespace[outs.tool] * span + k + 1, -1), ref_key, ref_order)
        for k, _ in entity_keys
    ]
    out_keys += entity_keys
    out_inst = np.concatenate([p[0] for p in pairs])
    in_inst = np.concatenate([p[1] for p in pairs])
    keep = qid[outs.tool[out_inst]] != qid[ins.tool[in_inst]]
    named = np.concatenate([np.full(len(p[0]), not kin) for p, (_, kin) in zip(pairs, out_keys, strict=True)])
    keep &= named | ~scorer.in_query[ins.sig[in_inst]]
    out_sig, in_sig = outs.sig[out_inst], ins.sig[in_inst]
    # Under one name, a plain value and an identifier are the same thing (a listed object's
    # ``namespace`` and the ``{namespace}`` of a path): the types alone must fit.
    fit = scorer.table[scorer.out_type[out_sig], scorer.in_type[in_sig]]
    keep &= np.maximum(fit, scorer.table[scorer.out_base[out_sig], scorer.in_base[in_sig]]) >= EXACT_FIT
    keep &= _entities_agree(scorer, out_sig, in_sig)
    keep &= _places_agree(scorer, out_sig, in_sig)
    keep &= scorer.values_fit(out_sig, in_sig)
    return out_inst[keep], in_inst[keep]


def _placed_keys(keys: Keys, role: IntArray, name: IntArray) -> tuple[IntArray, IntArray]:
    """Per output instance, the key of its bare label read with the entity it sits in (a
    channel's ``name`` is a ``channelName``), and of a ``name`` read as a handle (a channel's
    ``name`` is its ``channelHandle``: a handle is the name a person gives), -1 where none."""
    found = np.full((2, len(role)), -1, dtype=np.int64)
    if not any(keys.place):
        return found[0], found[1]
    rows = np.flatnonzero(np.array([bool(p) for p in keys.place], dtype=bool)[role])
    pairs, inverse = np.unique(np.stack([role[rows], name[rows]]), axis=1, return_inverse=True)
    read = [placed_names(keys.place[r], keys.last[n]) for r, n in pairs.T]
    labels = [keys.table.get(names[0], -1) for names in read]
    handles = [keys.table.get(names[1], -1) if len(names) > 1 else -1 for names in read]
    for known, looked in zip(found, (labels, handles), strict=True):
        known[rows] = np.array(looked, dtype=np.int64)[inverse.reshape(-1)] if looked else -1
    return found[0], found[1]


def placed_names(place: str, last: str) -> list[str]:
    """The names (as :func:`same_name` gives them) of the inputs that take a bare label ``last``
    read with the entity ``place`` it sits in: ``channelName`` for a channel's ``name``, and
    ``channelHandle`` too (a handle is the name a person gives)."""
    names = [same_name(f"{place}_{last}")]
    if last == "name":
        names.append(same_name(f"{place}_handle"))
    return names


def _join(out_key: IntArray, in_key: IntArray, order: IntArray) -> tuple[IntArray, IntArray]:
    """Every (output instance, input instance) pair with equal keys (``order`` sorts ``in_key``)."""
    sorted_keys = in_key[order]
    lo = np.searchsorted(sorted_keys, out_key, side="left")
    counts = np.searchsorted(sorted_keys, out_key, side="right") - lo
    out_inst = np.repeat(np.arange(len(out_key), dtype=np.int64), counts)
    offsets = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    return out_inst, order[np.repeat(lo, counts) + offsets]


def _entities_agree(scorer: Scorer, out_sig: IntArray, in_sig: IntArray) -> npt.NDArray[np.bool_]:
    out = tuple(e[out_sig] for e in scorer.out_entity)
    into = tuple(e[in_sig] for e in scorer.in_entity)
    unknown = np.all([e < 0 for e in out], axis=0) | np.all([e < 0 for e in into], axis=0)
    agree: npt.NDArray[np.bool_] = unknown | scorer.kin(out_sig, in_sig)
    return agree


def _places_agree(scorer: Scorer, out_sig: IntArray, in_sig: IntArray) -> npt.NDArray[np.bool_]:
    """Whether two bare labels sit in the same entity (or either's is unknown)."""
    mine, theirs = scorer.out_place[out_sig], scorer.in_place[in_sig]
    agree: npt.NDArray[np.bool_] = (mine < 0) | (theirs < 0) | (mine == theirs)
    return agree
