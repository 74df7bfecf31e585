"""What a verify run tells its reader: JSON and JUnit reports (written atomically), the
expected-failures list, the root-cause groups, the honest counts and the progress line.

The JSON report's shape is spec/schema/report.schema.json.
"""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence, TextIO

from conformance.harness import outputs
from conformance.harness import diagnosis
from conformance.harness.runner import STORED_LIMIT, VALUE_LIMIT, Result, clip_value
from spec.vocabulary import OUTCOMES, ExitCode, Outcome

SUITE_VERSION = 1  # protocol and transcript format version
FAILING = frozenset({"fail", "error", "timeout"})  # outcomes an expected-failures list may excuse
NOT_CHECKED = frozenset({Outcome.SKIPPED, Outcome.NOT_DECLARED})
# Exit codes of thousand verify (also in its --help and docs/verify.md, "Exit codes").
_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


LIST_LIMIT = 16 * 1024 * 1024  # bytes of a list file (--case-list, --expected-failures)


def read_list(path: Path) -> str:
    """A list file's text, read as every file of the project is: a regular file (never a FIFO
    or a device: no hang) of at most LIST_LIMIT bytes, UTF-8; ValueError naming the file
    and the problem otherwise."""
    from variants.loader import YamlError, decode, read_bytes

    try:
        return decode(read_bytes(path, str(path), LIST_LIMIT), str(path))
    except YamlError as exc:
        raise ValueError(str(exc)) from None


class ExpectedFailuresError(Exception):
    """An expected-failures file that cannot be read; the message names file and line."""


@dataclass
class ExpectedFailures:
    """Case ids (optionally ``id@profile``) expected to fail, read from a file."""

    entries: dict[str, int] = field(default_factory=dict)  # entry -> line
    path: str = ""

    @classmethod
    def read(cls, path: Path) -> ExpectedFailures:
        try:
            text = read_list(path)
        except ValueError as exc:
            raise ExpectedFailuresError(f"cannot read the expected-failures file: {exc}") from None
        entries: dict[str, int] = {}
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            if " " in line or "\t" in line:
                raise ExpectedFailuresError(f"{path}:{number}: expected one case id (or id@profile) per line, got {line!r}")
            entries[line] = number
        return cls(entries, str(path))

    def covers(self, result: Result) -> bool:
        return result.case_id in self.entries or f"{result.case_id}@{result.profile}" in self.entries

    def stale(self, known_ids: Iterable[str]) -> list[str]:
        """Entries that name no case of the corpus (a list that cannot go stale says so)."""
        known = set(known_ids)
        return [f"{self.path}:{line}: {entry!r} names no case" for entry, line in self.entries.items()
                if entry.split("@", 1)[0] not in known]


def write_expected_failures(path: Path, results: Sequence[Result]) -> None:
    """Today's failures as an expected-failures file (one id, or id@profile when the case
    fails under only some of its profiles)."""
    by_case: dict[str, list[Result]] = {}
    for result in results:
        by_case.setdefault(result.case_id, []).append(result)
    lines = ["# Cases expected to fail (written by thousand verify --write-expected-failures)."]
    for case_id, case_results in sorted(by_case.items()):
        failing = [r for r in case_results if r.outcome in FAILING]
        if not failing:
            continue
        if len(failing) == len(case_results):
            lines.append(case_id)
        else:
            lines.extend(f"{case_id}@{r.profile}" for r in failing)
    write_atomically(path, "\n".join(lines) + "\n")


def write_atomically(path: Path, text: str) -> None:
    """A report written whole or not at all (conformance.outputs)."""
    outputs.write_atomically(path, text)


def folder_problem(path: Path) -> str | None:
    """Why a report could not be written at ``path`` (checked before the run), or None."""
    return outputs.output_problem(path)


@dataclass
class Verdict:
    """Which results are unexpected, and the run's exit code."""

    unexpected: list[Result]
    unexpected_passes: list[Result]
    stale_entries: list[str]
    nothing_checked: bool = False  # every selected pair was skipped or not declared

    @property
    def exit_code(self) -> int:
        if self.unexpected or self.unexpected_passes or self.stale_entries:
            return ExitCode.FAILED
        return ExitCode.NOTHING_CHECKED if self.nothing_checked else ExitCode.PASSED


def judge(results: Sequence[Result], expected: ExpectedFailures | None, known_ids: Iterable[str]) -> Verdict:
    unexpected, passes = [], []
    for result in results:
        listed = expected is not None and expected.covers(result)
        if listed and result.outcome in FAILING:
            result.expected_failure = True
        elif listed and result.outcome == "pass":
            passes.append(result)
        elif result.outcome in FAILING or result.outcome == "case_bug":
            unexpected.append(result)
    stale = expected.stale(known_ids) if expected is not None else []
    nothing = all(result.outcome in NOT_CHECKED for result in results)
    return Verdict(unexpected, passes, stale, nothing)


def counts(results: Sequence[Result]) -> dict[str, int]:
    tally = Counter(result.outcome for result in results)
    return {outcome.value: tally.get(outcome, 0) for outcome in OUTCOMES}


def sections_summary(results: Iterable[Result]) -> dict[str, int]:
    """Failing (case, profile) pairs per rule section of the knobs that decide their first
    failed check (from spec/diagnosis.yaml, not the case's own labels)."""
    tally: Counter[str] = Counter()
    for result in results:
        knobs = result.findings[0].knobs if result.findings else ()
        for section in sorted({knob.split(".")[0] for knob in knobs}) or ["(no finding)"]:
            tally[section] += 1
    return dict(sorted(tally.items(), key=lambda item: (-item[1], item[0])))


def _failures(results: Iterable[Result]) -> list[diagnosis.Failure]:
    return [diagnosis.Failure(f"{r.case_id}@{r.profile}", list(r.findings),
                              diagnosis.outcome_signature(r.outcome, r.message), r.message, tuple(r.knobs))
            for r in results]


def diagnose(unexpected: Sequence[Result], results: Sequence[Result] = ()) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The root causes of the unexpected results, and the further differences the root
    causes do not explain; the passing ``results`` tell which knobs are less likely broken."""
    failures = _failures(unexpected)
    passed = Counter(k for r in results if r.outcome == "pass" for k in set(r.knobs))
    causes = diagnosis.groups(failures, passed)
    return causes, diagnosis.further(failures, causes, passed)


def not_declared(results: Sequence[Result]) -> dict[str, Any]:
    """The pairs whose profile the implementation does not declare: one line, not skips."""
    profiles = sorted({r.profile for r in results if r.outcome == "not_declared"})
    return {"pairs": sum(r.outcome == "not_declared" for r in results), "profiles": profiles}


def skipped_by_reason(results: Sequence[Result]) -> dict[str, int]:
    """Skips the implementation asked for, by its reason (the most frequent first)."""
    tally = Counter(r.message for r in results if r.outcome == "skipped")
    return dict(tally.most_common())


@dataclass
class RunInfo:
    """How the run went, beyond its results."""

    command: Sequence[str]
    profiles: Sequence[str] = ()
    start_reply: dict[str, Any] | None = None
    interrupted: str | None = None  # the signal's name (SIGINT, SIGTERM, SIGHUP)
    internal_error: str | None = None
    start_failure: str | None = None
    exit_code: int = 0
    repaired_strings: int = 0  # strings of the implementation's replies that held a lone surrogate
    fuzz: dict[str, Any] | None = None  # a fuzz run's counts (``thousand fuzz --report``)


NAME_LIMIT = 200  # characters of each field of the implementation's self-description kept
IMPLEMENTATION_FIELDS = ("name", "version", "language", "homepage")  # protocol/start.reply.json


def implementation_info(value: Any) -> dict[str, str | bool] | None:
    """The implementation's self-description as a report holds it, whatever was sent: the
    protocol's string fields only, each a string of at most NAME_LIMIT characters on one line
    (a number, an object or a huge text turned into one), ``coerced: true`` when anything
    was changed or dropped; so that every reader of the report can read it."""
    if value is None:
        return None
    source = value if isinstance(value, dict) else {"name": value}
    coerced = not isinstance(value, dict) or bool(set(source) - set(IMPLEMENTATION_FIELDS))
    info: dict[str, str | bool] = {}
    for key in IMPLEMENTATION_FIELDS:
        if key not in source:
            continue
        raw = source[key]
        text = raw if isinstance(raw, str) else json.dumps(clip_value(raw)[0], ensure_ascii=False, default=str)
        text = " ".join(text.split())
        if len(text) > NAME_LIMIT:
            text = text[:NAME_LIMIT - 3] + "..."
        coerced = coerced or text != raw
        info[key] = text
    if coerced:
        info["coerced"] = True
    return info


def json_report(results: Sequence[Result], verdict: Verdict, info: RunInfo) -> dict[str, Any]:
    start = {key: clip_value(value)[0] for key, value in (info.start_reply or {}).items() if key != "implementation"}
    return {
        "suite_version": SUITE_VERSION,
        "command": list(info.command),
        "profiles": sorted({r.profile for r in results}) if not info.profiles else list(info.profiles),
        "implementation": implementation_info((info.start_reply or {}).get("implementation")),
        "implementation_profiles": start.get("profiles"),
        "unsupported": start.get("unsupported"),
        "interrupted": info.interrupted is not None,
        "signal": info.interrupted,
        "internal_error": info.internal_error,
        "start_failure": info.start_failure,
        "exit_code": info.exit_code,
        "counts": counts(results),
        "partially_checked": sum(r.partial and r.outcome == "pass" for r in results),
        "not_declared": not_declared(results),
        "skipped_by_reason": skipped_by_reason(results),
        "expected_failures": sum(r.expected_failure for r in results),
        "unexpected": len(verdict.unexpected),
        "unexpected_passes": [f"{r.case_id}@{r.profile}" for r in verdict.unexpected_passes],
        "stale_expected_failures": verdict.stale_entries,
        "failing_by_section": sections_summary(verdict.unexpected),
        **dict(zip(("groups", "further"), diagnose(verdict.unexpected, results))),
        "limits": {"value_bytes": VALUE_LIMIT, "stored_bytes": STORED_LIMIT},
        **({"repaired_strings": info.repaired_strings} if info.repaired_strings else {}),
        **({"fuzz": info.fuzz} if info.fuzz is not None else {}),
        "cases": [r.to_json() for r in results],
    }


def write_json(path: Path, report: dict[str, Any]) -> None:
    write_atomically(path, json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n")


def _xml(text: str) -> str:
    """Text XML 1.0 can hold: an implementation may write control characters."""
    return _NOT_XML.sub("\ufffd", text)


def write_junit(path: Path, results: Sequence[Result], interrupted: str | None = None) -> None:
    tally = counts(results)
    suite = ET.Element("testsuite", {
        "name": "thousand-conformance", "tests": str(len(results)),
        "failures": str(tally["fail"]), "errors": str(tally["error"] + tally["timeout"] + tally["case_bug"]),
        "skipped": str(tally["skipped"] + tally["not_declared"]), "time": f"{sum(r.seconds for r in results):.3f}",
    })
    if interrupted:
        properties = ET.SubElement(suite, "properties")
        properties.append(ET.Element("property", {"name": "interrupted", "value": interrupted}))
    for result in results:
        case = ET.SubElement(suite, "testcase", {
            "classname": _xml(result.profile or "(none)"), "name": _xml(result.case_id), "time": f"{result.seconds:.4f}"})
        body, message = _xml(describe(result)), _xml(result.message)
        if result.outcome == "fail":
            ET.SubElement(case, "failure", {"message": message, "type": "fail"}).text = body
        elif result.outcome in ("error", "timeout", "case_bug"):
            ET.SubElement(case, "error", {"message": message, "type": result.outcome}).text = body
        elif result.outcome in NOT_CHECKED:
            ET.SubElement(case, "skipped", {"message": message})
        if result.expected_failure:
            ET.SubElement(case, "properties").append(ET.Element("property", {"name": "expected_failure", "value": "true"}))
    text = ET.tostring(suite, encoding="unicode")
    write_atomically(path, "<?xml version='1.0' encoding='utf-8'?>\n" + text + "\n")


def describe(result: Result) -> str:
    """A failure as a reader needs it: where, expected versus actual, knobs, state, stderr."""
    lines = [f"{result.outcome.upper()} {result.case_id} [{result.profile}]" + (f" - {result.title}" if result.title else ""),
             f"  {result.summary_line()}"]
    details = result.details
    if "deal" in details:
        where = f"  at deal {details['deal']}"
        if "step" in details:
            where += f", step {details['step']}"
        if "action" in details:
            where += f" ({details['action']})"
        lines.append(where)
    if "expected" in details or "actual" in details:
        lines.append(f"  expected: {_json(details.get('expected'))}")
        lines.append(f"  actual:   {_json(details.get('actual'))}")
    if result.findings:
        lines.append(f"  signature: {result.findings[0].signature}")
        if result.findings[0].knobs:
            lines.append(f"  decided by: {_knob_list(result.findings[0].knobs)}")
    if result.knobs:
        lines.append(f"  case knobs: {', '.join(result.knobs)}")
    if details.get("state_before") is not None:
        lines.append(f"  state before: {_json(details['state_before'])}")
    if result.stderr_tail:
        tail = "\n".join("    " + line for line in result.stderr_tail.splitlines()[-10:])
        lines.append("  implementation stderr (tail):\n" + tail)
    return "\n".join(lines)


def _knob_list(knobs: Sequence[str], shown: int = 6) -> str:
    return ", ".join(knobs[:shown]) + (f", ... ({len(knobs)} knobs)" if len(knobs) > shown else "")


def print_groups(groups: Sequence[dict[str, Any]], failing: int, stream: TextIO, shown: int = 15,
                 further: Sequence[dict[str, Any]] = ()) -> None:
    """The root causes after the summary, largest first (pytest's short summary, by cause):
    each with its share, the knobs to look at, the checks it showed through and an example;
    then the further differences hidden behind a root cause in the same runs."""
    if not groups:
        return
    print(f"root causes of {failing} unexpected result{'s' if failing != 1 else ''} (largest first):", file=stream)
    for number, group in enumerate(groups[:shown], start=1):
        _print_group(number, group, failing, stream)
    if len(groups) > shown:
        print(f"  ... {len(groups) - shown} more root causes in the JSON report", file=stream)
    if further:
        print("further differences in the same runs, after their root cause (fix the root causes first):", file=stream)
        for number, group in enumerate(further[:5], start=1):
            _print_group(number, group, 0, stream)
        if len(further) > 5:
            print(f"  ... {len(further) - 5} more in the JSON report (\"further\")", file=stream)


def _print_group(number: int, group: dict[str, Any], failing: int, stream: TextIO) -> None:
    share = f" ({group['count'] / failing:.0%})" if failing else ""
    knobs = f"knobs: {_knob_list(group['knobs'], 5)}" if group["knobs"] else "no knob decides this check (a fixed rule, or a broken reply)"
    print(f"  {number:2d}. {group['count']} run{'s' if group['count'] != 1 else ''}{share}: {group['signature']}", file=stream)
    print(f"      {knobs}", file=stream)
    checks = group.get("checks") or []
    if len(checks) > 1:
        seen = "; ".join(f"{c['signature']} ({c['count']})" for c in checks[:4])
        print(f"      seen as: {seen}" + (f"; ... {len(checks) - 4} more" if len(checks) > 4 else ""), file=stream)
    print(f"      e.g. {group['example'][:200]}", file=stream)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str, separators=(", ", ": "))


class Progress:
    """One updating line on a terminal; elsewhere a line every ``every`` cases."""

    def __init__(self, total: int, stream: TextIO | None = None, every: int = 50) -> None:
        self.total, self.every = total, every
        self.stream = stream or sys.stderr
        self.done = 0
        self.tally: Counter[str] = Counter()
        self.tty = self.stream.isatty()

    def __call__(self, result: Result) -> None:
        self.done += 1
        self.tally[result.outcome] += 1
        text = f"{self.done}/{self.total} " + " ".join(f"{k} {self.tally[k]}" for k in OUTCOMES if self.tally[k])
        if self.tty:
            self.stream.write("\r\033[K" + text)
            if self.done == self.total:
                self.stream.write("\n")
        elif self.done % self.every == 0 or self.done == self.total:
            self.stream.write(text + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.tty and 0 < self.done < self.total:
            self.stream.write("\n")
            self.stream.flush()
