"""Read, validate and resolve variant profiles.

Public API (other packages import only these names):

- ``resolve(name) -> ResolvedProfile``: ``name`` is ``profile`` or ``profile+option+option``.
- ``ResolvedProfile``: frozen; ``name``, ``rules`` (section -> knob -> value),
  ``provenance`` ("section.knob" -> {"source": ...} or {"ruling": ...}),
  ``to_document()`` (the JSON document sent to implementations that accept ``any``).
- ``list_profiles()``: the profile names and their option names.
- ``ProfileError``: the only exception this package raises for bad input.
"""
