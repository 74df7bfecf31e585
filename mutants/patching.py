"""How a mutant changes the reference engine: reversible attribute patches.

A mutant is a list of ``Patch`` values (an object, an attribute, the new value). They are
applied inside the mutant's own process (``python -m mutants.serve``) or, for the tests,
inside a ``with mutant.applied():`` block that puts every original back afterwards. The
files of ``reference_impl`` are never edited.
"""

from __future__ import annotations

import dataclasses
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from reference_impl.rules import Rules


@dataclass(frozen=True)
class Patch:
    """Set ``owner.attribute`` to ``make(current value)`` when applied.

    The new value is built at apply time, so patches of the same attribute stack.
    """

    owner: Any
    attribute: str
    make: Callable[[Any], Any]


def setting(owner: Any, attribute: str, value: Any) -> Patch:
    """A patch that sets a plain value (a class attribute, a module global, a card field)."""
    return Patch(owner, attribute, lambda _current: value)


def _raw(owner: Any, attribute: str) -> Any:
    """The attribute as stored (a staticmethod stays a staticmethod when put back)."""
    if isinstance(owner, type) and attribute in owner.__dict__:
        return owner.__dict__[attribute]
    return getattr(owner, attribute)


@contextmanager
def applied(patches: list[Patch]) -> Iterator[None]:
    """Apply the patches in order, and undo them in reverse order on the way out."""
    saved: list[tuple[Any, str, Any]] = []
    try:
        for patch in patches:
            saved.append((patch.owner, patch.attribute, _raw(patch.owner, patch.attribute)))
            setattr(patch.owner, patch.attribute, patch.make(getattr(patch.owner, patch.attribute)))
        yield
    finally:
        for owner, attribute, value in reversed(saved):
            setattr(owner, attribute, value)


def wrap(owner: Any, attribute: str, make: Callable[[Any], Any]) -> Patch:
    """A patch whose new value is built from the current one (``make(original)``)."""
    return Patch(owner, attribute, make)


def rules_tweak(change: Callable[[Rules], Rules]) -> Patch:
    """Alter what the engine reads: ``Rules.from_document`` returns ``change(rules)``."""
    def make(original: Callable[[Any], Rules]) -> Any:
        def from_document(document: Any) -> Rules:
            return change(original(document))

        return staticmethod(from_document)

    return Patch(Rules, "from_document", make)


def knob(section: str, **changes: Any) -> Patch:
    """Set knobs of one rule section; a value may be a function of the profile's value."""
    def change(rules: Rules) -> Rules:
        current = getattr(rules, section)
        values = {name: (new(getattr(current, name)) if callable(new) else new) for name, new in changes.items()}
        return dataclasses.replace(rules, **{section: dataclasses.replace(current, **values)})

    return rules_tweak(change)
