"""Safe YAML loading that keeps the line and column of every node.

Only plain data is accepted: mappings with string keys, lists, strings, integers,
floats, booleans and null. Anchors and aliases are refused outright (profiles need none,
and refusing them rules out alias bombs); nesting is limited; a file over 1 MiB is refused
before it is read; tabs in indentation and duplicate keys are reported with their lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from variants.errors import ProfileError

MAX_BYTES = 1024 * 1024
MAX_DEPTH = 64

# A path into the document: mapping keys and list indices, outermost first.
DocPath = tuple[str | int, ...]

_SCALAR_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
}


@dataclass(frozen=True)
class Position:
    """1-based line and column."""

    line: int
    column: int


@dataclass
class Marks:
    """Where each node of a document sits: the value's position and, for a mapping
    entry, its key's position."""

    values: dict[DocPath, Position] = field(default_factory=dict)
    keys: dict[DocPath, Position] = field(default_factory=dict)

    def of_value(self, path: DocPath) -> Position:
        """The position of the value at ``path``, or of its nearest recorded ancestor."""
        return self._nearest(self.values, path)

    def of_key(self, path: DocPath) -> Position:
        """The position of the key naming ``path`` (the value's, for list items)."""
        if path in self.keys:
            return self.keys[path]
        return self._nearest(self.values, path)

    @staticmethod
    def _nearest(table: dict[DocPath, Position], path: DocPath) -> Position:
        while path and path not in table:
            path = path[:-1]
        return table.get(path, Position(1, 1))


class _Refusal(Exception):
    def __init__(self, message: str, mark: Any) -> None:
        super().__init__(message)
        self.message = message
        self.mark = mark


class _GuardedLoader(yaml.SafeLoader):
    """SafeLoader whose composer refuses anchors, aliases and deep nesting."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.depth = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent):
            raise _Refusal("aliases (*name) are not allowed in a profile", event.start_mark)
        if getattr(event, "anchor", None) is not None:
            raise _Refusal("anchors (&name) are not allowed in a profile", event.start_mark)
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Refusal(f"nesting deeper than {MAX_DEPTH} levels", event.start_mark)
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def _position(mark: Any) -> Position:
    if mark is None:
        return Position(1, 1)
    return Position(mark.line + 1, mark.column + 1)


def read_text(path: Path) -> str:
    """The file's text, refusing large, unreadable or non-UTF-8 files."""
    name = str(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ProfileError(name, f"cannot read the file: {exc.strerror or exc}") from None
    if not path.is_file():
        raise ProfileError(name, "not a file")
    if size > MAX_BYTES:
        raise ProfileError(name, f"file too large: {size} bytes, the limit is {MAX_BYTES} bytes (1 MiB)")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ProfileError(name, f"cannot read the file: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:  # the file grew after stat
        raise ProfileError(name, f"file too large: the limit is {MAX_BYTES} bytes (1 MiB)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ProfileError(name, f"not UTF-8 text: byte 0x{data[exc.start]:02x}", line=line, column=column) from None


def _check_indentation(text: str, name: str) -> None:
    for number, line in enumerate(text.splitlines(), start=1):
        indent = len(line) - len(line.lstrip(" \t"))
        if "\t" in line[:indent]:
            raise ProfileError(
                name,
                "tab character in indentation: YAML indentation must use spaces",
                line=number,
                column=line.index("\t") + 1,
            )


def parse_text(text: str, name: str) -> tuple[Any, Marks]:
    """Parse YAML text into plain data and the marks of its nodes."""
    _check_indentation(text, name)
    loader = _GuardedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise ProfileError(name, "the file is empty: expected a mapping", line=1, column=1)
        marks = Marks()
        data = _build(node, (), marks, loader, name)
    except _Refusal as exc:
        pos = _position(exc.mark)
        raise ProfileError(name, exc.message, line=pos.line, column=pos.column) from None
    except yaml.MarkedYAMLError as exc:
        raise _parse_error(exc, name) from None
    except yaml.YAMLError as exc:
        raise ProfileError(name, f"malformed YAML: {exc}") from None
    finally:
        loader.dispose()
    return data, marks


def _parse_error(exc: yaml.MarkedYAMLError, name: str) -> ProfileError:
    pos = _position(exc.problem_mark or exc.context_mark)
    parts = [p for p in (exc.context, exc.problem) if p]
    return ProfileError(name, "malformed YAML: " + ", ".join(parts), line=pos.line, column=pos.column)


def _build(node: Node, path: DocPath, marks: Marks, loader: _GuardedLoader, name: str) -> Any:
    marks.values[path] = _position(node.start_mark)
    if isinstance(node, MappingNode):
        return _build_mapping(node, path, marks, loader, name)
    if isinstance(node, SequenceNode):
        if node.tag != "tag:yaml.org,2002:seq":
            raise _Refusal(f"tag {node.tag!r} is not allowed in a profile", node.start_mark)
        return [_build(item, path + (i,), marks, loader, name) for i, item in enumerate(node.value)]
    assert isinstance(node, ScalarNode)
    if node.tag not in _SCALAR_TAGS:
        raise _Refusal(f"tag {node.tag!r} is not allowed in a profile", node.start_mark)
    return loader.construct_object(node, deep=True)


def _build_mapping(node: MappingNode, path: DocPath, marks: Marks, loader: _GuardedLoader, name: str) -> dict[str, Any]:
    if node.tag != "tag:yaml.org,2002:map":
        raise _Refusal(f"tag {node.tag!r} is not allowed in a profile", node.start_mark)
    result: dict[str, Any] = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, ScalarNode):
            raise _Refusal("a mapping key must be a plain name, not a list or a mapping", key_node.start_mark)
        # The raw text is the key: 'on' or 'no' stay names, not booleans.
        key = str(key_node.value)
        key_pos = _position(key_node.start_mark)
        child = path + (key,)
        if key in result:
            first = marks.keys[child]
            raise ProfileError(
                name,
                f"duplicate key {key!r}: first at line {first.line}, again at line {key_pos.line}",
                line=key_pos.line,
                column=key_pos.column,
                path=dotted(child),
            )
        marks.keys[child] = key_pos
        result[key] = _build(value_node, child, marks, loader, name)
    return result


def dotted(path: DocPath) -> str:
    """``('rules', 'redeals', 'rules', 'value', 0)`` -> ``rules.redeals.rules.value[0]``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + part
    return text


def load_yaml_file(path: Path) -> tuple[Any, Marks]:
    """Read and parse one YAML file safely."""
    return parse_text(read_text(path), str(path))
