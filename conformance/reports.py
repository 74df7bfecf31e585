"""What a verify run tells its reader: JSON and JUnit reports, the expected-failures list,
the summary by rule section and the progress line."""

from __future__ import annotations

import json
import os
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence, TextIO

from conformance.runner import OUTCOMES, Result

SUITE_VERSION = 1  # protocol and transcript format version
FAILING = frozenset({"fail", "error", "timeout"})  # outcomes an expected-failures list may excuse


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
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ExpectedFailuresError(f"{path}: cannot read the expected-failures file: {exc}") from None
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
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@dataclass
class Verdict:
    """Which results are unexpected, and the run's exit code."""

    unexpected: list[Result]
    unexpected_passes: list[Result]
    stale_entries: list[str]

    @property
    def exit_code(self) -> int:
        return 1 if self.unexpected or self.unexpected_passes or self.stale_entries else 0


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
    return Verdict(unexpected, passes, stale)


def counts(results: Sequence[Result]) -> dict[str, int]:
    tally = Counter(result.outcome for result in results)
    return {outcome: tally.get(outcome, 0) for outcome in OUTCOMES}


def sections_summary(results: Iterable[Result]) -> dict[str, int]:
    """Failing (case, profile) pairs per rule section of the knobs they exercise."""
    tally: Counter[str] = Counter()
    for result in results:
        for section in sorted({knob.split(".")[0] for knob in result.knobs}) or ["(no knobs)"]:
            tally[section] += 1
    return dict(sorted(tally.items(), key=lambda item: (-item[1], item[0])))


def json_report(results: Sequence[Result], verdict: Verdict, profiles: Sequence[str],
                start_reply: dict[str, Any] | None, command: Sequence[str], interrupted: bool,
                internal_error: str | None = None) -> dict[str, Any]:
    return {
        "suite_version": SUITE_VERSION,
        "command": list(command),
        "profiles": sorted({r.profile for r in results}) if not profiles else list(profiles),
        "implementation": (start_reply or {}).get("implementation"),
        "implementation_profiles": (start_reply or {}).get("profiles"),
        "interrupted": interrupted,
        "internal_error": internal_error,
        "counts": counts(results),
        "expected_failures": sum(r.expected_failure for r in results),
        "unexpected": len(verdict.unexpected),
        "unexpected_passes": [f"{r.case_id}@{r.profile}" for r in verdict.unexpected_passes],
        "stale_expected_failures": verdict.stale_entries,
        "failing_by_section": sections_summary(verdict.unexpected),
        "cases": [r.to_json() for r in results],
    }


def write_json(path: Path, report: dict[str, Any]) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    os.replace(temporary, path)  # a half-written report is never left behind


def write_junit(path: Path, results: Sequence[Result]) -> None:
    tally = counts(results)
    suite = ET.Element("testsuite", {
        "name": "thousand-conformance", "tests": str(len(results)),
        "failures": str(tally["fail"]), "errors": str(tally["error"] + tally["timeout"] + tally["case_bug"]),
        "skipped": str(tally["skipped"]), "time": f"{sum(r.seconds for r in results):.3f}",
    })
    for result in results:
        case = ET.SubElement(suite, "testcase", {
            "classname": result.profile or "(none)", "name": result.case_id, "time": f"{result.seconds:.4f}"})
        body = describe(result)
        if result.outcome == "fail":
            ET.SubElement(case, "failure", {"message": result.message, "type": "fail"}).text = body
        elif result.outcome in ("error", "timeout", "case_bug"):
            ET.SubElement(case, "error", {"message": result.message, "type": result.outcome}).text = body
        elif result.outcome == "skipped":
            ET.SubElement(case, "skipped", {"message": result.message})
        if result.expected_failure:
            ET.SubElement(case, "properties").append(ET.Element("property", {"name": "expected_failure", "value": "true"}))
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)


def describe(result: Result) -> str:
    """A failure as a reader needs it: where, expected versus actual, knobs, state, stderr."""
    lines = [f"{result.outcome.upper()} {result.case_id} [{result.profile}]" + (f" - {result.title}" if result.title else ""),
             f"  {result.message}"]
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
    if result.knobs:
        lines.append(f"  knobs: {', '.join(result.knobs)}")
    if details.get("state_before") is not None:
        lines.append(f"  state before: {_json(details['state_before'])}")
    if result.stderr_tail:
        tail = "\n".join("    " + line for line in result.stderr_tail.splitlines()[-10:])
        lines.append("  implementation stderr (tail):\n" + tail)
    return "\n".join(lines)


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
