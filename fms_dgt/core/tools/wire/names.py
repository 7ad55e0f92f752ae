"""Reversible, collision-free provider names for qualified tool names.

Providers restrict tool names (OpenAI and Anthropic: ``^[a-zA-Z0-9_-]{1,64}$``). :class:`NameCodec`
maps ``weather_api::get_weather`` to ``weather_api__get_weather``; characters outside the pattern
become ``_``; a name that would be too long, or that would collide with another tool's, is
shortened and given a stable hash suffix. The mapping depends only on the set of names (not their
order) and travels with every record (``name_map``), so a call read back from a model decodes to
exactly one registry tool.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable, Mapping

from fms_dgt.errors import WireError

__all__ = ["NameCodec", "codec_of"]

_MAX_LEN = 64
_INVALID = re.compile(r"[^a-zA-Z0-9_-]")
_HASH_LEN = 8


def _sanitise(qualified_name: str) -> str:
    name = _INVALID.sub("_", qualified_name.replace("::", "__"))
    return name if name[:1].isalpha() or name[:1] == "_" else f"_{name}"


def _hashed(qualified_name: str, base: str, length: int) -> str:
    digest = hashlib.sha256(qualified_name.encode()).hexdigest()[:length]
    return f"{base[: _MAX_LEN - length - 1]}_{digest}"


class NameCodec:
    """A reversible, collision-free mapping between qualified names and provider names.

    Args:
        qualified_names: every name the codec must encode (duplicates are ignored).

    Raises:
        WireError: two names cannot be told apart even with long hashes (practically never).
    """

    def __init__(self, qualified_names: Iterable[str]):
        names = sorted(set(qualified_names))
        by_plain: dict[str, list[str]] = {}
        for name in names:
            by_plain.setdefault(_sanitise(name), []).append(name)
        encoded: dict[str, str] = {}
        for plain, group in by_plain.items():
            # Every member of a colliding group gets a hash, so one tool's provider name never
            # depends on which other tools happen to be loaded first.
            for name in group:
                too_long = len(plain) > _MAX_LEN
                encoded[name] = _hashed(name, plain, _HASH_LEN) if too_long or len(group) > 1 else plain
        self._encode = self._resolve_clashes(encoded)
        self._decode = {v: k for k, v in self._encode.items()}

    @staticmethod
    def _resolve_clashes(encoded: dict[str, str]) -> dict[str, str]:
        seen: dict[str, str] = {}
        for name in sorted(encoded):
            wire = encoded[name]
            length = _HASH_LEN
            while wire in seen:
                length += 4
                if length > 40:
                    raise WireError(f"cannot encode {name!r}: it collides with {seen[wire]!r}.")
                wire = _hashed(name, _sanitise(name), length)
            seen[wire] = name
            encoded[name] = wire
        return encoded

    def encode(self, qualified_name: str) -> str:
        """The provider name of a qualified name.

        Raises:
            WireError: the name was not given to the codec.
        """
        try:
            return self._encode[qualified_name]
        except KeyError:
            raise WireError(
                f"unknown tool {qualified_name!r} for this name codec: build the codec over every "
                "tool the record uses."
            ) from None

    def decode(self, provider_name: str) -> str:
        """The qualified name of a provider name.

        Raises:
            WireError: no tool has that provider name (e.g. the model invented one).
        """
        try:
            return self._decode[provider_name]
        except KeyError:
            raise WireError(
                f"unknown provider tool name {provider_name!r}: it maps to no tool of this record "
                "(the model may have invented it)."
            ) from None

    @property
    def name_map(self) -> dict[str, str]:
        """Provider name -> qualified name (what records carry)."""
        return dict(sorted(self._decode.items()))

    @classmethod
    def from_name_map(cls, name_map: Mapping[str, str]) -> NameCodec:
        """Rebuild a codec from a record's ``name_map``."""
        codec = cls.__new__(cls)
        codec._decode = dict(name_map)
        codec._encode = {v: k for k, v in name_map.items()}
        return codec


@functools.lru_cache(maxsize=4096)
def codec_of(qualified_names: frozenset[str]) -> NameCodec:
    """The codec of a set of names, built once per set: a codec depends on the set alone and
    never changes, and a run's records offer the same sets again and again."""
    return NameCodec(qualified_names)
