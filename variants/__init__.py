"""Read, validate and resolve variant profiles.

Public API (other packages import only these names):

- ``resolve(name) -> ResolvedProfile``: ``name`` is ``profile`` or ``profile+option+option``.
- ``ResolvedProfile``: frozen; ``name``, ``rules`` (section -> knob -> value),
  ``provenance`` ("section.knob" -> {"source": ...} or {"ruling": ...}),
  ``to_document()`` (the JSON document sent to implementations that accept ``any``).
- ``list_profiles()``: the profile names and their option names; ``all_names()``: every
  profile and ``profile+option``.
- ``load_profile_file(path)``: validate a profile file anywhere; returns it resolved.
- ``load_axes()`` / ``Axis``: the table of variant axes (spec/unsupported.yaml).
- ``load_equivalents()`` / ``Equivalent``: knob values that play as a profile's own on every
  deal (spec/equivalent-values.yaml).
- ``inert_knobs(profile)``: the knobs that cannot change an outcome under that profile, with why;
  ``controlling_knobs(section, knob)``: the knobs that decide whether it applies.
- ``thaw(value)``: a plain JSON copy of a resolved (frozen) value.
- ``ProfileError``: the only exception this package raises for bad input.
"""

from __future__ import annotations

from variants.applicability import controlling_knobs, inert_knobs
from variants.equivalents import Equivalent, load_equivalents
from variants.errors import ProfileError
from variants.model import OptionInfo, ProfileInfo, ResolvedProfile, thaw
from variants.resolve import all_names, list_profiles, load_profile_file, resolve
from variants.unsupported import Axis, load_axes

__all__ = [
    "Axis",
    "Equivalent",
    "all_names",
    "OptionInfo",
    "ProfileError",
    "ProfileInfo",
    "ResolvedProfile",
    "list_profiles",
    "controlling_knobs",
    "inert_knobs",
    "load_axes",
    "load_equivalents",
    "load_profile_file",
    "resolve",
    "thaw",
]
