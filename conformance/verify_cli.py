"""``thousand verify``: check an implementation (by default the bundled reference) against
the conformance transcripts, through protocol v1."""

from __future__ import annotations

import argparse
import functools
import sys
import traceback
from pathlib import Path
from typing import Any, Sequence

from conformance import reports, runner
from conformance.transcripts import CASES_DIR, GENERATED_DIR, CaseBug, Transcript, discover

SHOWN_IN_FULL = 20  # unexpected results described in full; the rest get one line


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "verify", help="check an implementation against the conformance transcripts",
        description="Run the conformance transcripts against an implementation speaking protocol v1 "
                    "(JSON lines on stdin/stdout). Without a command after --, the bundled reference "
                    "implementation is checked, as a subprocess.")
    parser.add_argument("--profile", action="append", default=[], metavar="P",
                        help="only this profile: 'name' (with its options) or 'name+option'; repeatable")
    parser.add_argument("-k", action="append", default=[], dest="include", metavar="GLOB",
                        help="only case ids matching this glob; repeatable")
    parser.add_argument("--case-list", type=Path, metavar="FILE",
                        help="only the case ids listed in FILE, one a line ('#' starts a comment), "
                             "e.g. conformance/starter.txt")
    parser.add_argument("--skip", action="append", default=[], metavar="GLOB", help="leave out case ids matching this glob")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="S", help="seconds to wait for each reply (default 10)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="implementation processes run in parallel")
    parser.add_argument("--report", type=Path, metavar="FILE.json", help="write the JSON report here")
    parser.add_argument("--junit", type=Path, metavar="FILE.xml", help="write a JUnit XML report here")
    parser.add_argument("--expected-failures", type=Path, metavar="FILE",
                        help="case ids (or id@profile) expected to fail, one a line; a listed case that passes fails the run")
    parser.add_argument("--write-expected-failures", type=Path, metavar="FILE", help="write today's failures to FILE")
    parser.add_argument("--validate-messages", action="store_true",
                        help="validate every command and reply against spec/schema/protocol")
    parser.add_argument("--cases", action="append", type=Path, default=[], metavar="DIR",
                        help="transcript folder (default: conformance/cases and conformance/generated); repeatable")
    parser.add_argument("--rules", metavar="FILE.yaml",
                        help="house rules: the reference under FILE (a house profile, or 'name+option') is the "
                             "oracle, on the cases of the profiles FILE builds on (see thousand fit)")
    parser.add_argument("impl_command", nargs=argparse.REMAINDER, metavar="-- CMD ARGS",
                        help="the implementation to run (after --)")
    parser.set_defaults(func=main)


@functools.cache
def resolve_document(profile: str) -> dict[str, Any]:
    """The resolved profile document sent to implementations that play 'any' profile."""
    import variants

    document: dict[str, Any] = variants.resolve(profile).to_document()
    return document


def read_case_list(path: Path) -> list[str]:
    """Case ids from a list file: one a line, blank lines and '#' comments ignored."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.split("#", 1)[0].strip() for line in lines if line.split("#", 1)[0].strip()]


def main(args: argparse.Namespace) -> int:
    if getattr(args, "rules", None):
        from conformance.fit import verify_rules

        return verify_rules(args)
    command = list(args.impl_command)
    if command and command[0] == "--":
        command = command[1:]
    command = command or list(runner.REFERENCE_COMMAND)
    if args.timeout <= 0 or args.jobs < 1:
        print("thousand verify: --timeout must be positive and --jobs at least 1", file=sys.stderr)
        return 2
    expected = None
    if args.expected_failures:
        try:
            expected = reports.ExpectedFailures.read(args.expected_failures)
        except reports.ExpectedFailuresError as exc:
            print(f"thousand verify: {exc}", file=sys.stderr)
            return 2
    include = list(args.include)
    if args.case_list:
        try:
            include += read_case_list(args.case_list)
        except OSError as exc:
            print(f"thousand verify: cannot read --case-list {args.case_list}: {exc.strerror}", file=sys.stderr)
            return 2
    roots = args.cases or [CASES_DIR, GENERATED_DIR]
    cases = discover(roots)
    jobs = runner.plan(cases, args.profile, include, args.skip)
    if not jobs:
        print("thousand verify: no cases selected", file=sys.stderr)
    settings = runner.Settings(command, args.timeout, args.validate_messages, resolve_document)
    progress = reports.Progress(len(jobs))
    state = runner.RunState()
    internal_error = None
    try:
        runner.run_jobs(jobs, settings, args.jobs, state, progress)
    except KeyboardInterrupt:
        progress.finish()
        print("thousand verify: interrupted; reporting the cases done", file=sys.stderr)
    except Exception:  # a bug in the runner: still report the cases done, then say so
        internal_error = traceback.format_exc()
        progress.finish()
        print(f"thousand verify: internal error (a bug in the runner):\n{internal_error}", file=sys.stderr)
    results = [state.results[i] for i in sorted(state.results)]
    return finish(args, command, cases, results, expected, state, internal_error)


def finish(args: argparse.Namespace, command: Sequence[str], cases: Sequence[Transcript | CaseBug],
           results: list[runner.Result], expected: reports.ExpectedFailures | None,
           state: runner.RunState, internal_error: str | None) -> int:
    verdict = reports.judge(results, expected, [case.id for case in cases])
    print_summary(results, verdict)
    report = reports.json_report(results, verdict, args.profile, state.start_reply, command,
                                 state.interrupted, internal_error)
    if args.report:
        reports.write_json(args.report, report)
    if args.junit:
        reports.write_junit(args.junit, results)
    if args.write_expected_failures:
        reports.write_expected_failures(args.write_expected_failures, results)
    if internal_error:
        return 3
    if state.interrupted:
        return 130
    return verdict.exit_code


def print_summary(results: Sequence[runner.Result], verdict: reports.Verdict) -> None:
    out = sys.stdout
    for number, result in enumerate(verdict.unexpected):
        if number < SHOWN_IN_FULL:
            print(reports.describe(result) + "\n", file=out)
        else:
            print(f"{result.outcome.upper()} {result.case_id} [{result.profile}]: {result.message}", file=out)
    for result in verdict.unexpected_passes:
        print(f"UNEXPECTED PASS {result.case_id} [{result.profile}]: listed as expected to fail", file=out)
    for entry in verdict.stale_entries:
        print(f"STALE {entry}", file=out)
    tally = reports.counts(results)
    excused = sum(r.expected_failure for r in results)
    line = ", ".join(f"{count} {outcome}" for outcome, count in tally.items() if count) or "no cases run"
    if excused:
        line += f" ({excused} expected failures)"
    print(line, file=out)
    sections = reports.sections_summary(verdict.unexpected)
    if sections:
        print("unexpected outcomes by rule section: " + ", ".join(f"{s} {n}" for s, n in sections.items()), file=out)
