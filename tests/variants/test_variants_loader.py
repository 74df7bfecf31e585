"""The safe YAML loader: plain data only, with the position of every node."""

from __future__ import annotations

import pytest

from variants import ProfileError
from variants.loader import parse_text


def test_keys_are_their_raw_text() -> None:
    """YAML 1.1 would read the key 'on' as true; a profile key is always a name."""
    data, _ = parse_text("on: 1\nno: true\n", "f.yaml")
    assert data == {"on": 1, "no": True}


def test_positions_of_keys_and_values() -> None:
    data, marks = parse_text("a:\n  b: [1, {c: 2}]\n", "f.yaml")
    assert data == {"a": {"b": [1, {"c": 2}]}}
    assert (marks.of_key(("a", "b")).line, marks.of_key(("a", "b")).column) == (2, 3)
    assert (marks.of_value(("a", "b", 1, "c")).line, marks.of_value(("a", "b", 1, "c")).column) == (2, 14)
    # An unknown path falls back to its nearest known ancestor.
    assert marks.of_value(("a", "b", 7)).line == 2


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("a: !!binary aGVsbG8=\n", "tag 'tag:yaml.org,2002:binary' is not allowed", 1),
        ("a: !custom 1\n", "tag '!custom' is not allowed", 1),
        ("? [a, b]\n: 1\n", "a mapping key must be a plain name, not a list, a mapping", 1),
        ("a: 1\nb:\n  c: 2\n  c: 3\n", "duplicate key 'c': first at line 3, again at line 4", 4),
        ("a: [1, 2\n", "malformed YAML", 2),
        ("a: 1\n\tb: 2\n", "tab character in indentation", 2),
    ],
)
def test_refusals(text: str, message: str, line: int) -> None:
    with pytest.raises(ProfileError) as caught:
        parse_text(text, "f.yaml")
    assert message in caught.value.message
    assert caught.value.line == line
