"""The one safe YAML reader of the project: profiles and transcripts are read by it.

A file is read as plain data (mappings with text keys, lists, text, integers, finite
floats, booleans, null) under the YAML 1.2 core schema, with the position of every node.
Whatever the bytes, the result is that data or one ``YamlError`` naming the file, line,
column, field and what was expected; nothing else escapes. What is refused, and why:

- files that are not regular files (FIFOs, devices, sockets, directories; a symlink is
  followed and judged by its target) are never opened for reading, so nothing blocks;
  at most ``limit + 1`` bytes are read, so /dev/zero-like files cannot exhaust memory;
- anchors and aliases (no alias bombs, no recursive data), nesting deeper than MAX_DEPTH;
- explicit tags other than the core ones, and core tags whose text does not fit them
  (``!!int abc``, ``!!bool maybe``); keys that are lists or mappings (``? [a, b]``);
- plain scalars that YAML 1.1 reads differently from YAML 1.2 (``yes``, ``on``, ``01000``,
  ``14:40``, ``0x384``, ``1_000``, ``1e3``), so a file written with either in mind cannot
  silently mean something else: the message says how to write the value;
- integers beyond +/-(2**53 - 1) (every JSON reader keeps those exact), infinities and NaN;
- control characters, NUL and lone surrogates in text (escapes such as ``"\\0"``).

A message quotes at most EXCERPT characters of the file, so a symlink pointing at a
secret is never copied into a report.
"""

from __future__ import annotations

import math
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from variants.errors import FileProblem, ProfileError

MAX_BYTES = 1024 * 1024  # profiles; transcripts pass their own limit
MAX_TRANSCRIPT_BYTES = 2 * 1024 * 1024  # far above any real transcript; guards against a runaway file
MAX_DEPTH = 64
MAX_INT = 2**53 - 1
EXCERPT = 60

# A path into the document: mapping keys and list indices, outermost first.
DocPath = tuple[str | int, ...]

_Parser: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: much faster

_CORE = "tag:yaml.org,2002:"
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"[-+]?[0-9]+\Z")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_SPECIAL_FLOAT = re.compile(r"[-+]?\.(?:inf|Inf|INF)\Z|\.(?:nan|NaN|NAN)\Z")
_YAML11_BOOL = frozenset("y Y yes Yes YES n N no No NO on On ON off Off OFF".split())
_YAML11_NUMBER = re.compile(
    r"[-+]?(?:0[0-9]+|0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+"  # octal-looking, hex, octal, binary
    r"|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?"  # sexagesimal 14:40
    r"|[0-9.][0-9_.]*_[0-9_.]*(?:[eE][-+]?[0-9]+)?"  # digits with underscores
    r"|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+)\Z"  # exponents (1.1 needs a dot and a sign)
)
_SURROGATE = re.compile("[\ud800-\udfff]")
_BAD_CHARACTER = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


class YamlError(FileProblem):
    """A file that cannot be read as plain data; the caller turns it into its own error."""


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


def clip(text: str, limit: int = EXCERPT) -> str:
    """``text`` cut to ``limit`` characters, marked with "..." when cut."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def excerpt(value: Any, limit: int = EXCERPT) -> str:
    """``repr(value)`` cut to ``limit`` characters: the most of a file a message may quote."""
    return clip(repr(value), limit)


def dotted(path: DocPath) -> str:
    """``('rules', 'redeals', 'rules', 'value', 0)`` -> ``rules.redeals.rules.value[0]``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + part
    return text


# --- reading the bytes ------------------------------------------------------------------

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _size(limit: int) -> str:
    return f"{limit} bytes" + (f" ({limit >> 20} MiB)" if limit % (1 << 20) == 0 else "")


def read_bytes(path: Path, name: str, limit: int = MAX_BYTES) -> bytes:
    """At most ``limit`` bytes of a regular file; anything else is a YamlError.

    The file is judged by ``os.stat`` before it is opened, and opened non-blocking and
    checked again, so a FIFO or a device swapped in meanwhile cannot make the read hang.
    """
    try:
        status = os.stat(path)
        if not stat.S_ISREG(status.st_mode):
            raise YamlError(name, f"{_kind(status.st_mode)}, not a regular file: not read")
        if status.st_size > limit:
            raise YamlError(name, f"file too large: {status.st_size} bytes, the limit is {_size(limit)}")
        handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
        try:
            mode = os.fstat(handle).st_mode
            if not stat.S_ISREG(mode):
                raise YamlError(name, f"{_kind(mode)}, not a regular file: not read")
            chunks: list[bytes] = []
            size = 0
            while size <= limit:
                chunk = os.read(handle, min(1 << 20, limit + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        finally:
            os.close(handle)
    except OSError as exc:
        raise YamlError(name, f"cannot read the file: {exc.strerror or type(exc).__name__}") from None
    if size > limit:
        raise YamlError(name, f"file too large: more than {limit} bytes read, the limit is {_size(limit)}")
    return b"".join(chunks)


def decode(data: bytes, name: str) -> str:
    """UTF-8 text (a byte-order mark is dropped); the error gives the line and column."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise YamlError(name, f"not UTF-8 text: byte 0x{data[exc.start]:02x}", line=line, column=column) from None


def _check_indentation(text: str, name: str) -> None:
    """Tabs in indentation get a clearer message than the parser's."""
    for number, line in enumerate(text.splitlines(), start=1):
        indent = len(line) - len(line.lstrip(" \t"))
        if "\t" in line[:indent]:
            raise YamlError(name, "tab character in indentation: YAML indentation must use spaces",
                            line=number, column=line.index("\t") + 1)


# --- building the data from the parser's events ----------------------------------------

class _Refusal(Exception):
    def __init__(self, message: str, mark: Any, path: DocPath = ()) -> None:
        super().__init__(message)
        self.message = message
        self.mark = mark
        self.path = path


def _position(mark: Any) -> Position:
    if mark is None:
        return Position(1, 1)
    return Position(mark.line + 1, mark.column + 1)


def _check_text(text: str, what: str, mark: Any, path: DocPath) -> str:
    bad = _BAD_CHARACTER.search(text)
    if bad:
        code = f"U+{ord(bad.group()):04X}"
        raise _Refusal(f"{what} holds the control character or lone surrogate {code}: not allowed in text", mark, path)
    return text


def _plain(text: str, mark: Any, path: DocPath) -> Any:
    """A plain (unquoted, untagged) scalar under the YAML 1.2 core schema."""
    if text in _NULLS:
        return None
    if text in _BOOLS:
        return _BOOLS[text]
    if text in _YAML11_BOOL:
        raise _Refusal(f"{text!r} is true/false in YAML 1.1 but text in YAML 1.2: write true, false or quote it",
                       mark, path)
    if _YAML11_NUMBER.match(text):
        raise _Refusal(f"{excerpt(text)} is read differently by YAML 1.1 and 1.2: write the number in plain "
                       "decimal (e.g. 1000, 2.5) or quote it as text", mark, path)
    if _INT.match(text):
        return _integer(text, mark, path)
    if _FLOAT.match(text):
        return _finite(text, mark, path)
    if _SPECIAL_FLOAT.match(text):
        raise _Refusal(f"{text!r} is not a finite number: JSON cannot carry it", mark, path)
    return _check_text(text, "the value", mark, path)


def _integer(text: str, mark: Any, path: DocPath) -> int:
    digits = len(text.lstrip("+-"))
    if digits > len(str(MAX_INT)) or abs(int(text)) > MAX_INT:
        raise _Refusal(f"an integer of {digits} digits is out of range: expected at most {MAX_INT} "
                       "in absolute value (2**53 - 1)", mark, path)
    return int(text)


def _finite(text: str, mark: Any, path: DocPath) -> float:
    value = float(text) if len(text) <= 400 else math.inf
    if not math.isfinite(value):
        raise _Refusal(f"the number {excerpt(text)} is out of range: expected a finite number", mark, path)
    return value


def _tagged(tag: str, text: str, mark: Any, path: DocPath) -> Any:
    """A scalar with an explicit core tag: the text must fit the tag."""
    kind = tag[len(_CORE):] if tag.startswith(_CORE) else ""
    if tag == "!" or kind == "str":
        return _check_text(text, "the value", mark, path)
    if kind == "int" and _INT.match(text):
        return _integer(text, mark, path)
    if kind == "float" and (_FLOAT.match(text)):
        return _finite(text, mark, path)
    if kind == "bool" and text in _BOOLS:
        return _BOOLS[text]
    if kind == "null" and text in _NULLS:
        return None
    if kind in ("int", "float", "bool", "null"):
        raise _Refusal(f"!!{kind} {excerpt(text)}: the text is not a YAML 1.2 {kind}", mark, path)
    raise _Refusal(f"tag {excerpt(tag)} is not allowed: only plain data (text, numbers, true/false, null, "
                   "lists, mappings)", mark, path)


def _scalar(event: Any, path: DocPath) -> Any:
    if event.tag is not None:
        return _tagged(event.tag, event.value, event.start_mark, path)
    if not event.style:  # plain: resolved by the core schema; quoted and block scalars are text
        return _plain(event.value, event.start_mark, path)
    return _check_text(event.value, "the value", event.start_mark, path)


@dataclass
class _Open:
    """A mapping or list being built: where it is and, in a mapping, the key just read."""

    value: dict[str, Any] | list[Any]
    path: DocPath
    key: str | None = None


def _compose(parser: Any, name: str, marks: Marks) -> Any:
    """The data of the single document, built from the events without recursion."""
    parser.get_event()  # stream start
    if parser.check_event(yaml.StreamEndEvent):
        raise YamlError(name, "the file is empty: expected a mapping", line=1, column=1)
    parser.get_event()  # document start
    stack: list[_Open] = []
    root: Any = None
    while True:
        event = parser.get_event()
        top = stack[-1] if stack else None
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            stack.pop()
            if not stack:
                break
            continue
        if top is not None and isinstance(top.value, dict) and top.key is None:
            _refuse_anchors(event, top.path)
            top.key = _key(event, top, marks)
            continue
        path: DocPath = () if top is None else top.path + ((top.key,) if isinstance(top.value, dict) else (len(top.value),))  # type: ignore[operator]
        _refuse_anchors(event, path)
        marks.values[path] = _position(event.start_mark)
        if isinstance(event, yaml.ScalarEvent):
            value: Any = _scalar(event, path)
        else:
            value = _container(event, path)
            if len(stack) >= MAX_DEPTH:
                raise _Refusal(f"nesting deeper than {MAX_DEPTH} levels", event.start_mark, path)
        if top is None:
            root = value
        elif isinstance(top.value, dict):
            top.value[top.key] = value  # type: ignore[index]
            top.key = None
        else:
            top.value.append(value)
        if isinstance(value, (dict, list)) and not isinstance(event, yaml.ScalarEvent):
            stack.append(_Open(value, path))
        elif top is None:
            break
    parser.get_event()  # document end
    if not parser.check_event(yaml.StreamEndEvent):
        raise _Refusal("more than one document: expected exactly one", parser.peek_event().start_mark)
    return root


def _refuse_anchors(event: Any, path: DocPath) -> None:
    """No anchors, no aliases: so no alias bombs and no recursive data."""
    if isinstance(event, yaml.AliasEvent):
        raise _Refusal("aliases (*name) are not allowed: write the value out", event.start_mark, path)
    if event.anchor is not None:
        raise _Refusal("anchors (&name) are not allowed: write each value out", event.start_mark, path)


def _container(event: Any, path: DocPath) -> dict[str, Any] | list[Any]:
    is_map = isinstance(event, yaml.MappingStartEvent)
    want = _CORE + ("map" if is_map else "seq")
    if event.tag not in (None, "!", want):
        raise _Refusal(f"tag {excerpt(event.tag)} is not allowed: only plain data (text, numbers, true/false, "
                       "null, lists, mappings)", event.start_mark, path)
    return {} if is_map else []


def _key(event: Any, top: _Open, marks: Marks) -> str:
    """A mapping key: its raw text (so ``on:`` stays a name), never a list or a mapping."""
    if not isinstance(event, yaml.ScalarEvent) or event.tag not in (None, "!", _CORE + "str"):
        raise _Refusal("a mapping key must be a plain name, not a list, a mapping or a tagged value",
                       event.start_mark, top.path)
    key = _check_text(event.value, "the key", event.start_mark, top.path)
    if key == "<<" and not event.style:
        raise _Refusal("merge keys (<<) are not supported: write the entries out", event.start_mark, top.path)
    child = top.path + (key,)
    pos = _position(event.start_mark)
    assert isinstance(top.value, dict)
    if key in top.value:
        first = marks.keys[child]
        raise _Refusal(f"duplicate key {excerpt(key)}: first at line {first.line}, again at line {pos.line}",
                       event.start_mark, child)
    marks.keys[child] = pos
    return key


def parse_document(text: str, name: str) -> tuple[Any, Marks]:
    """Parse YAML text into plain data and the marks of its nodes, or raise YamlError."""
    _check_indentation(text, name)
    surrogate = _SURROGATE.search(text)
    if surrogate:  # only text handed in directly can hold one: files are decoded strictly
        at = surrogate.start()
        raise YamlError(name, f"lone surrogate U+{ord(surrogate.group()):04X} is not allowed in YAML text",
                        line=text.count("\n", 0, at) + 1, column=at - (text.rfind("\n", 0, at) + 1) + 1)
    try:
        return _parse_with(_Parser, text, name)
    except YamlError as error:
        # libyaml (bundled with pyyaml from 6.0.4) stops at its own nesting limit before the
        # events reach our MAX_DEPTH check; the pure-Python parser has none, so the file is read
        # again with it and refused at our limit, at the node where our limit is passed.
        if _Parser is yaml.SafeLoader or "maximum nesting depth" not in error.message:
            raise
        return _parse_with(yaml.SafeLoader, text, name)


def _parse_with(loader: Any, text: str, name: str) -> tuple[Any, Marks]:
    parser = loader(text)
    marks = Marks()
    try:
        data = _compose(parser, name, marks)
    except _Refusal as exc:
        pos = _position(exc.mark)
        raise YamlError(name, exc.message, line=pos.line, column=pos.column, path=dotted(exc.path)) from None
    except yaml.MarkedYAMLError as exc:
        pos = _position(exc.problem_mark or exc.context_mark)
        parts = [p for p in (exc.context, exc.problem) if p]
        raise YamlError(name, "malformed YAML: " + ", ".join(parts), line=pos.line, column=pos.column) from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        raise YamlError(name, f"character U+{exc.character:04X} is not allowed in YAML text"
                        if isinstance(exc.character, int) else f"malformed YAML: {exc.reason}",
                        line=line, column=column) from None
    except yaml.YAMLError as exc:
        raise YamlError(name, f"malformed YAML: {type(exc).__name__}") from None
    finally:
        parser.dispose()
    return data, marks


def read_document(path: Path, name: str | None = None, limit: int = MAX_BYTES) -> tuple[Any, Marks]:
    """Read and parse one YAML file safely; YamlError says what is wrong."""
    display = name or str(path)
    return parse_document(decode(read_bytes(path, display, limit), display), display)


# --- the profile side: the same reading, reported as ProfileError ----------------------

def _profile_error(exc: YamlError) -> ProfileError:
    return ProfileError(exc.file, exc.message, line=exc.line, column=exc.column, path=exc.path)


def read_text(path: Path) -> str:
    """The file's text, refusing large, unreadable, non-regular or non-UTF-8 files."""
    try:
        return decode(read_bytes(path, str(path)), str(path))
    except YamlError as exc:
        raise _profile_error(exc) from None


def parse_text(text: str, name: str) -> tuple[Any, Marks]:
    """Parse YAML text into plain data and the marks of its nodes (ProfileError on failure)."""
    try:
        return parse_document(text, name)
    except YamlError as exc:
        raise _profile_error(exc) from None


def load_yaml_file(path: Path) -> tuple[Any, Marks]:
    """Read and parse one YAML file safely (ProfileError on failure)."""
    try:
        return read_document(path)
    except YamlError as exc:
        raise _profile_error(exc) from None
