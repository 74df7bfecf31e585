"""The resolved profile and the profile listing: small frozen value types."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from spec.vocabulary import RuleValues


def freeze(value: Any) -> Any:
    """A read-only copy: mappings become MappingProxyType, lists become tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({key: freeze(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(item) for item in value)
    return value


def thaw(value: Any) -> Any:
    """A plain, JSON-serialisable copy of a frozen value."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [thaw(item) for item in value]
    return value


@dataclass(frozen=True)
class ResolvedProfile:
    """A profile with its parents and options applied: every knob has a plain value.

    ``rules`` maps section -> knob -> value; ``provenance`` maps "section.knob" to
    ``{"source": ...}`` or ``{"ruling": ...}``, plus ``"unverified": True`` when set, and
    ``"from"``: the profile (or ``profile+option``) that set the value.
    """

    name: str
    title: str
    status: str
    summary: str
    profile: str
    options: tuple[str, ...]
    rules: RuleValues
    provenance: Mapping[str, Mapping[str, Any]]
    rulings: tuple[Mapping[str, Any], ...] = ()
    sources: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: MappingProxyType({}))
    lineage: tuple[str, ...] = ()  # the profiles ``profile`` extends, nearest first

    def value(self, knob: str) -> Any:
        """The value of ``"section.knob"``."""
        section, _, name = knob.partition(".")
        return self.rules[section][name]

    def to_document(self) -> dict[str, Any]:
        """The JSON document sent to implementations that accept any profile."""
        return {
            "profile": self.name,
            "title": self.title,
            "status": self.status,
            "rules": thaw(self.rules),
            "provenance": thaw(self.provenance),
        }


@dataclass(frozen=True)
class OptionInfo:
    name: str
    title: str
    summary: str


@dataclass(frozen=True)
class ProfileInfo:
    """One bundled profile as listed by ``list_profiles()``."""

    name: str
    title: str
    status: str
    summary: str
    extends: str | None
    options: tuple[OptionInfo, ...]
