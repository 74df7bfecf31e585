"""The JSON Schemas of protocol v1 and of transcripts, loaded once, with their $refs resolved."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]
from jsonschema.exceptions import best_match  # type: ignore[import-untyped,unused-ignore]
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from spec import PROTOCOL_SCHEMA_DIR, SCHEMA_DIR

COMMANDS = ("start", "match", "deal", "legal", "apply", "state", "stop")
EXTENSION_COMMANDS = ("batch",)  # commands an implementation offers only where it declares them


def _load(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as handle:
        document: dict[str, Any] = json.load(handle)
    return document


@functools.cache
def registry() -> Registry:  # type: ignore[type-arg,unused-ignore]
    """Every protocol schema and the transcript schema, by their $id."""
    paths = sorted(PROTOCOL_SCHEMA_DIR.glob("*.json")) + [SCHEMA_DIR / "transcript.schema.json"]
    resources = []
    for path in paths:
        document = _load(path)
        resources.append((document["$id"], Resource.from_contents(document, default_specification=DRAFT202012)))
    return Registry().with_resources(resources)  # type: ignore[no-any-return,unused-ignore]


_ANNOTATIONS = {"description", "title", "$comment"}


def _inline(node: Any, resolver: Any) -> Any:
    """``node`` with every $ref replaced by what it points to.

    The schemas have no recursion, so this ends; it makes validation several times faster,
    as jsonschema otherwise looks each reference up again for every item of every list.
    """
    if isinstance(node, list):
        return [_inline(item, resolver) for item in node]
    if not isinstance(node, dict):
        return node
    if isinstance(node.get("$ref"), str):
        resolved = resolver.lookup(node["$ref"])
        target = _inline(resolved.contents, resolved.resolver)
        rest = {key: _inline(value, resolver) for key, value in node.items() if key != "$ref"}
        if not set(rest) - _ANNOTATIONS:
            return {**target, **rest} if isinstance(target, dict) else target
        return {**rest, "allOf": [target]}
    return {key: _inline(value, resolver) for key, value in node.items()}


@functools.cache
def _validator(path: Path) -> Draft202012Validator:
    document = _load(path)
    inlined = _inline(document, registry().resolver(document["$id"]))
    return Draft202012Validator(inlined, registry=registry())


def command_validator(command: str) -> Draft202012Validator:
    """The validator of the request ``command`` (one of COMMANDS or EXTENSION_COMMANDS)."""
    return _validator(PROTOCOL_SCHEMA_DIR / f"{command}.command.json")


def reply_validator(command: str) -> Draft202012Validator:
    """The validator of a reply to ``command`` (one of COMMANDS or EXTENSION_COMMANDS)."""
    return _validator(PROTOCOL_SCHEMA_DIR / f"{command}.reply.json")


def transcript_validator() -> Draft202012Validator:
    return _validator(SCHEMA_DIR / "transcript.schema.json")


def first_problem(validator: Draft202012Validator, instance: Any) -> str | None:
    """A one-line description of the first schema violation, or None when valid."""
    error = best_match(validator.iter_errors(instance))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path) or "(top level)"
    return f"{where}: {error.message}"


@functools.cache
def _answer_validator(command: str) -> Draft202012Validator:
    """The validator of the ordinary (neither skipped nor errored) reply to ``command``."""
    document = _load(PROTOCOL_SCHEMA_DIR / f"{command}.reply.json")
    answer = _inline(document["oneOf"][0], registry().resolver(document["$id"]))
    return Draft202012Validator(answer, registry=registry())


def reply_problem(command: str, reply: Any, absent: frozenset[str] = frozenset(), events_derived: bool = False,
                  give_cards: bool = False) -> str | None:
    """The first schema violation of a reply to ``command``, or None.

    A reply that says it is skipped or errored is checked against those forms only, so that
    the message names what is wrong with the ordinary answer instead of "no branch matched".
    ``absent``: the state fields the implementation declares unsupported, which its state
    replies may leave out (or send in any form); ``events_derived``: it sends no events;
    ``give_cards``: its legal sets list ``give X``, one card, which the runner makes pairs of.
    """
    if isinstance(reply, dict) and ("skipped" in reply or "errored" in reply):
        return first_problem(reply_validator(command), reply)
    validator = _answer_validator(command)
    if not absent and not events_derived and not give_cards:
        return first_problem(validator, reply)
    excused = {("state", name) for name in absent} | ({((), "events")} if events_derived else set())
    errors = [error for error in validator.iter_errors(reply) if not _excused(error, excused)
              and not (give_cards and command == "legal" and _one_card_give(error))]
    error = best_match(errors)
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path) or "(top level)"
    return f"{where}: {error.message}"


def _one_card_give(error: Any) -> bool:
    """A legal set's ``give X`` (one card) under ``"give": "cards"``."""
    path = tuple(error.absolute_path)
    return len(path) == 2 and path[0] == "actions" and isinstance(error.instance, str) and bool(ONE_CARD_GIVE.fullmatch(error.instance))


ONE_CARD_GIVE = re.compile(r"give (A|10|K|Q|J|9)[SCDH]")


def _excused(error: Any, excused: set[Any]) -> bool:
    """A missing (or any) value of a state field declared absent; missing events where they are derived."""
    path = tuple(error.absolute_path)
    if len(path) >= 2 and (path[0], path[1]) in excused:
        return True
    if error.validator == "required" and isinstance(error.instance, dict):
        missing = [name for name in error.validator_value if name not in error.instance]
        where = path[0] if path else ()
        return bool(missing) and all((where, name) in excused for name in missing)
    return False


@functools.cache
def report_validator() -> Draft202012Validator:
    """The validator of a report written by ``thousand verify --report`` (or ``fit --report``)."""
    return Draft202012Validator(_load(SCHEMA_DIR / "report.schema.json"))


REPORT_BYTES = 256 * 1024 * 1024  # bytes of a report read back: a whole corpus with every mismatch fits


class ReportFileError(ValueError):
    """A report file that cannot be read as one; the message names the file."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def read_report_json(path: Path) -> Any:
    """The JSON of a report file (``thousand report``, ``--known``), read by every reader the
    same way: a regular file (never a FIFO or a device) of at most REPORT_BYTES, UTF-8, strict
    JSON (no NaN or Infinity, no nesting past the parser's depth). ReportFileError otherwise."""
    from variants.errors import FileProblem
    from variants.loader import read_bytes

    try:
        text = read_bytes(path, str(path), REPORT_BYTES).decode("utf-8")
    except FileProblem as exc:
        raise ReportFileError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise ReportFileError(f"{path}: not UTF-8 (byte {exc.start})") from None
    try:
        return json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise ReportFileError(f"{path}: not a report (JSON nested too deeply)") from None
    except ValueError as exc:
        raise ReportFileError(f"{path}: not JSON ({exc})") from None
