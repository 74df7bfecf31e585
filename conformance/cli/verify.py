"""``thousand verify``: check an implementation (by default the bundled reference) against
the conformance transcripts, through protocol v1.

A verdict never lies: exit 0 only when everything selected ran and passed (EXIT_CODES).
"""

from __future__ import annotations

import argparse
import difflib
import functools
import math
import signal
import sys
import traceback
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from conformance.oracle import house as house_cases
from conformance.harness import diagnosis, findings, outputs, process, reports, runner, steps
from conformance.terminal import Escaped, clear_progress, printable, silence_stdout, terminal_progress
from conformance.corpus.transcripts import CASES_DIR, GENERATED_DIR, CaseBug, Transcript, discover
from spec.vocabulary import ExitCode

if TYPE_CHECKING:  # variants is imported late: a one-case run should not pay for it
    from variants import ResolvedProfile

SHOWN_IN_FULL = 20  # unexpected results described in full; the rest get one line
EXIT_CODES = """exit codes:
  0    every selected case ran and passed (listed expected failures allowed)
  1    an unexpected outcome: fail, error, timeout, case bug, an unexpected pass or a stale
       expected-failures entry
  2    usage error: a bad option value, a selection that matches nothing (--profile, -k,
       --case-list, --cases), a house rules file given as --profile, a report folder that
       does not exist, or a report that could not be written
  3    internal error (a bug in the runner); the reports hold the cases done
  4    the implementation could not start; nothing was checked
  5    nothing was checked: every selected case was skipped or its profile not declared
  129, 130, 143  stopped by SIGHUP, SIGINT (Ctrl-C), SIGTERM; both reports are written,
       marked interrupted"""
SIGNALS = process.SIGNALS


class UsageError(Exception):
    """A command line that cannot give an honest run; exit 2 before anything runs."""


Interrupted = process.Interrupted


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "verify", help="check an implementation against the conformance transcripts",
        description="Run the conformance transcripts against an implementation speaking protocol v1 "
                    "(JSON lines on stdin/stdout). Without a command after --, the bundled reference "
                    "implementation is checked, as a subprocess.",
        epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", action="append", default=[], metavar="P",
                        help="only this profile: 'name' (with its options) or 'name+option'; repeatable. "
                             "House rules files are checked with 'thousand verify --rules FILE -- CMD'")
    parser.add_argument("-k", action="append", default=[], dest="include", metavar="GLOB",
                        help="only case ids matching this glob; repeatable (a glob matching no case is an error)")
    parser.add_argument("--case-list", type=Path, metavar="FILE",
                        help="only the case ids listed in FILE, one a line ('#' starts a comment), "
                             "e.g. conformance/starter.txt")
    parser.add_argument("--skip", action="append", default=[], metavar="GLOB", help="leave out case ids matching this glob")
    parser.add_argument("--timeout", type=str, default="10", metavar="S",
                        help="seconds to wait for each reply and for each request to be read (default 10; "
                             "the reply to start may take at least 5)")
    parser.add_argument("--jobs", type=str, default="1", metavar="N", help="implementation processes run in parallel")
    parser.add_argument("--first-mismatch", action="store_true",
                        help="end each case at its first mismatch (default: record every mismatch while the "
                             "implementation accepts the transcript's actions)")
    parser.add_argument("--report", type=Path, metavar="FILE.json",
                        help="write the JSON report here (spec/schema/report.schema.json); the folder must exist")
    parser.add_argument("--junit", type=Path, metavar="FILE.xml", help="write a JUnit XML report here; the folder must exist")
    parser.add_argument("--expected-failures", type=Path, metavar="FILE",
                        help="case ids (or id@profile) expected to fail, one a line; a listed case that passes fails the run")
    parser.add_argument("--write-expected-failures", type=Path, metavar="FILE",
                        help="write today's failures to FILE; the folder must exist")
    parser.add_argument("--validate-messages", action="store_true",
                        help="validate every command and reply against spec/schema/protocol")
    parser.add_argument("--cases", action="append", type=Path, default=[], metavar="DIR",
                        help="transcript folder (default: conformance/cases and conformance/generated); repeatable")
    parser.add_argument("--rules", metavar="FILE.yaml",
                        help="house rules: the reference under FILE (a house profile, or 'name+option') is the "
                             "oracle, on the cases of the profiles FILE builds on (see thousand fit)")
    parser.add_argument("--as", dest="as_profile", metavar="P",
                        help="with --rules, the profile a match names to an implementation that declares a list "
                             "without the house profile (default: the profile the file extends)")
    parser.add_argument("--known", type=Path, metavar="REPORT.json",
                        help="a report of thousand verify --report or thousand fit --report: failures one of its root "
                             "causes explains are reported apart, like expected failures")
    parser.add_argument("impl_command", nargs=argparse.REMAINDER, metavar="-- CMD ARGS",
                        help="the implementation to run (after --)")
    parser.set_defaults(func=main)


@functools.cache
def resolve_document(profile: str) -> dict[str, Any]:
    """The resolved profile document sent with every ``match``."""
    import variants

    document: dict[str, Any] = variants.resolve(profile).to_document()
    return document


def read_case_list(path: Path) -> list[str]:
    """Case ids from a list file: one a line, blank lines and '#' comments ignored."""
    lines = reports.read_list(path).splitlines()
    return [line.split("#", 1)[0].strip() for line in lines if line.split("#", 1)[0].strip()]


# --- the command line, checked before anything runs -------------------------------------

@dataclass
class Options:
    command: list[str]
    timeout: float
    jobs: int
    include: list[str]
    listed: list[str]  # ids from --case-list (each must name a case)
    expected: reports.ExpectedFailures | None
    known: findings.Known | None = None


def _number(text: str, name: str, kind: type) -> Any:
    try:
        value = kind(text)
    except ValueError:
        raise UsageError(f"{name} expects a number, got {text!r}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise UsageError(f"{name} must be finite, got {text!r}")
    return value


def check_options(args: argparse.Namespace) -> Options:
    """Every option value checked up front: a bad one is exit 2 before any case runs."""
    command = list(args.impl_command)
    if command and command[0] == "--":
        command = command[1:]
    timeout = _number(str(args.timeout), "--timeout", float)
    if timeout < runner.MIN_TIMEOUT or timeout > 86400:
        raise UsageError(f"--timeout must be from {runner.MIN_TIMEOUT:g} to 86400 seconds, got {args.timeout}")
    jobs = _number(str(args.jobs), "--jobs", int)
    if jobs < 1 or jobs > 256:
        raise UsageError(f"--jobs must be between 1 and 256, got {args.jobs}")
    for wanted in args.profile:
        if wanted.endswith((".yaml", ".yml")) or "/" in wanted or Path(wanted).is_file():
            raise UsageError(f"--profile {wanted!r} looks like a house rules file; --profile takes a bundled "
                             f"profile name. House rules are verified with 'thousand verify --rules FILE -- CMD'")
    for path in (args.report, args.junit, args.write_expected_failures):
        problem = reports.folder_problem(path) if path is not None else None
        if problem:
            raise UsageError(problem)
    expected = None
    if args.expected_failures:
        try:
            expected = reports.ExpectedFailures.read(args.expected_failures)
        except reports.ExpectedFailuresError as exc:
            raise UsageError(str(exc)) from None
    listed: list[str] = []
    if args.case_list:
        try:
            listed = read_case_list(args.case_list)
        except ValueError as exc:
            raise UsageError(f"cannot read --case-list: {exc}") from None
        if not listed:
            raise UsageError(f"--case-list {args.case_list} lists no case")
    for folder in args.cases:
        if not folder.is_dir():
            raise UsageError(f"--cases {folder}: no such folder")
    if getattr(args, "as_profile", None) and not getattr(args, "rules", None):
        raise UsageError("--as names the profile to play house rules under: it needs --rules")
    known = None
    if getattr(args, "known", None):
        try:
            known = findings.Known.read(args.known)
        except findings.KnownError as exc:
            raise UsageError(str(exc)) from None
    return Options(command or list(runner.REFERENCE_COMMAND), timeout, jobs, list(args.include), listed, expected, known)


def _suggest(wanted: str, known: Sequence[str]) -> str:
    lowered = {name.lower(): name for name in known}
    close = [lowered[wanted.lower()]] if wanted.lower() in lowered else difflib.get_close_matches(wanted, known, n=3)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def check_selection(args: argparse.Namespace, options: Options, cases: Sequence[Transcript | CaseBug],
                    jobs: Sequence[runner.Job]) -> None:
    """A selection that matches nothing is a usage error, never a green run of nothing."""
    import variants

    case_profiles = {p for case in cases for p in case.profiles}
    # reading every bundled profile costs a large share of a one-case run: only for --profile
    known = sorted(set(variants.all_names()) | case_profiles | {p.split("+")[0] for p in case_profiles}) if args.profile else []
    for wanted in args.profile:
        if wanted not in known:
            raise UsageError(f"--profile {wanted!r} names no profile or option{_suggest(wanted, known)} "
                             "(thousand profiles lists them)")
        if not any(runner.profile_selected(p, [wanted]) for p in case_profiles):
            raise UsageError(f"--profile {wanted!r}: no transcript runs under it")
    ids = [case.id for case in cases]
    if not ids:
        raise UsageError("no transcripts found in " + ", ".join(str(f) for f in args.cases or [CASES_DIR, GENERATED_DIR]))
    for pattern in options.include:
        if not any(runner.case_selected(i, [pattern], []) for i in ids):
            raise UsageError(f"-k {pattern!r} matches no case id{_suggest(pattern, ids)}")
    missing = [i for i in options.listed if not any(runner.case_selected(c, [i], []) for c in ids)]
    if missing:
        raise UsageError(f"--case-list {args.case_list}: {len(missing)} listed id(s) name no case, e.g. "
                         f"{missing[0]!r}{_suggest(missing[0], ids)}")
    if not jobs:
        raise UsageError("the selection matches no (case, profile) pair: nothing would be checked")


# --- house rules (--rules) ----------------------------------------------------------------

def house_rules(args: argparse.Namespace) -> ResolvedProfile:
    """The resolved house rules of ``--rules`` (a file or ``name+option``); a bad one is a usage error."""
    import variants

    if args.profile:
        raise UsageError("--rules and --profile cannot be combined: the house rules name the profile")
    try:
        return variants.resolve(args.rules)
    except variants.ProfileError as exc:
        raise UsageError(f"--rules: {exc}") from None


def re_expected_cases(args: argparse.Namespace, options: Options, cases: Sequence[Transcript | CaseBug],
                      house: ResolvedProfile) -> list[Transcript | CaseBug]:
    """The cases of the profiles the house rules build on, re-expected by the reference under them."""
    family = house_cases.rules_family(house)
    chosen = house_cases.applicable(cases, family, args.skip)
    if not chosen:
        raise UsageError(f"no case applies to {house.name} (cases of {', '.join(sorted(family))})")
    chosen = [c for c in chosen if runner.case_selected(c.id, options.include + options.listed, [])]
    if not chosen:
        raise UsageError(f"-k / --case-list select none of the cases that apply to {house.name}")
    show = terminal_progress("verify")

    def progress(done: int, total: int) -> None:
        show(f"the reference under {args.rules} re-expects {done}/{total} cases")

    found = house_cases.oracle_cases(chosen, house.name, house.to_document(), args.rules, options.jobs, options.timeout,
                                     progress)
    clear_progress()
    # the reference refusing the house rules is neither the transcripts' fault nor the
    # implementation's: nothing is checked, and the line says whose it is
    refused = [c for c in found if isinstance(c, CaseBug) and c.message.startswith("the reference under")]
    if refused:
        raise UsageError(f"--rules {args.rules}: the reference could not play {len(refused)} of {len(found)} cases under "
                         f"these rules, so nothing was checked; first: {refused[0].id}: {refused[0].message[:400]}")
    return found


def _house_documents(name: str, document: dict[str, Any]) -> Callable[[str], dict[str, Any]]:
    def resolve(profile: str) -> dict[str, Any]:
        return document if profile == name else resolve_document(profile)

    return resolve


# --- signals -----------------------------------------------------------------------------

_trap_signals, _restore_signals = process.trap_signals, process.restore_signals


# --- the run -----------------------------------------------------------------------------

def main(args: argparse.Namespace) -> int:
    """``thousand verify`` (with ``--rules``, against house rules: same run, same reports)."""
    saved = _trap_signals()
    try:
        return run_verify(args)
    except Interrupted as exc:  # before the run had anything to report
        return 128 + exc.signum
    finally:
        _restore_signals(saved)


def run_verify(args: argparse.Namespace) -> int:
    info = reports.RunInfo(command=[], profiles=list(args.profile))
    state = runner.RunState()
    cases: Sequence[Transcript | CaseBug] = []
    jobs: list[runner.Job] = []
    house: ResolvedProfile | None = None
    progress: reports.Progress | None = None
    try:
        try:
            options = check_options(args)
            info.command = options.command
            # the house rules first: a bad --rules is told at once, not after reading the corpus
            house = house_rules(args) if getattr(args, "rules", None) else None
            cases = discover(args.cases or [CASES_DIR, GENERATED_DIR])
            if house is not None:
                info.profiles = [house.name]
                cases = re_expected_cases(args, options, cases, house)
            jobs = runner.plan(cases, args.profile, options.include + options.listed, args.skip)
            check_selection(args, options, cases, jobs)
        except UsageError as exc:
            print(f"thousand verify: {printable(str(exc))}", file=sys.stderr)
            return ExitCode.USAGE
        documents = resolve_document if house is None else _house_documents(house.name, house.to_document())
        settings = runner.Settings(options.command, options.timeout, args.validate_messages, documents,
                                   first_mismatch=args.first_mismatch)
        if house is not None:
            settings.fallbacks = {house.name: house_cases.fallbacks(args.rules, getattr(args, "as_profile", None))}
        progress = reports.Progress(len(jobs))
        with process.supervised():
            runner.run_jobs(jobs, settings, options.jobs, state, progress)
    except Interrupted as exc:
        if progress:
            progress.finish()
        info.interrupted = SIGNALS.get(signal.Signals(exc.signum), str(exc.signum))
        print(f"thousand verify: stopped by {info.interrupted}; the reports hold the cases done", file=sys.stderr)
        state.interrupted = True
    except Exception:  # a bug in the runner: still report the cases done, then say so
        info.internal_error = traceback.format_exc()
        if progress:
            progress.finish()
        print(f"thousand verify: internal error (a bug in the runner):\n{info.internal_error}", file=sys.stderr)
    info.start_reply, info.start_failure = state.start_reply, state.start_failure
    info.repaired_strings = state.repaired_strings
    results = [state.results[i] for i in sorted(state.results)]
    expected = None if not info.command else options.expected
    return finish(args, cases, results, expected, info, None if not info.command else options.known)


def finish(args: argparse.Namespace, cases: Sequence[Transcript | CaseBug], results: list[runner.Result],
           expected: reports.ExpectedFailures | None, info: reports.RunInfo,
           known: findings.Known | None = None) -> int:
    """Write the reports first (a reader that goes away, or a signal now, cannot lose them),
    then tell the terminal."""
    late: list[int] = []
    _defer_signals(late)
    verdict = reports.judge(results, expected, [case.id for case in cases])
    known_results = _set_apart(verdict, known) if known is not None else []
    info.exit_code = ExitCode.CANNOT_START if info.start_failure else verdict.exit_code
    if info.internal_error:
        info.exit_code = ExitCode.INTERNAL
    if info.interrupted:
        info.exit_code = 128 + int(getattr(signal, info.interrupted, 2))
    problem = write_reports(args, results, verdict, info)
    try:
        if info.start_failure:
            print(f"thousand verify: the implementation could not start: {printable(info.start_failure)}", file=sys.stderr)
        else:
            print_summary(results, verdict)
            if getattr(args, "rules", None):
                print(rules_line(args.rules))
            if known_results:
                print(known_lines(known_results, args.known))
            hint = next_step(verdict, info.command, getattr(args, "rules", None),
                             str(args.report) if args.report else None)
            if hint:
                print(hint)
        if info.exit_code == ExitCode.NOTHING_CHECKED:
            print("thousand verify: nothing was checked: every selected case was skipped or not declared", file=sys.stderr)
        if problem:
            print(f"thousand verify: {problem}", file=sys.stderr)
        sys.stdout.flush()
    except BrokenPipeError:  # thousand verify | head: the reports are written already
        silence_stdout()
    if late and not info.interrupted:  # a signal while the reports were written: they are whole
        return 128 + late[0]
    return ExitCode.USAGE if problem and not info.interrupted else info.exit_code


def write_reports(args: argparse.Namespace, results: list[runner.Result], verdict: reports.Verdict,
                  info: reports.RunInfo) -> str | None:
    """Every report asked for; the problem when one could not be written."""
    try:
        if args.report:
            reports.write_json(args.report, reports.json_report(results, verdict, info))
        if args.junit:
            reports.write_junit(args.junit, results, info.interrupted)
        if args.write_expected_failures:
            reports.write_expected_failures(args.write_expected_failures, results)
    except OSError as exc:  # an OutputError names the file
        return str(exc) if isinstance(exc, outputs.OutputError) else f"cannot write a report: {exc}"
    return None


def _defer_signals(late: list[int]) -> None:
    """From now on a signal is only noted: the run is over and its reports are being written."""
    def note(signum: int, _frame: FrameType | None) -> None:
        late.append(signum)

    try:
        for number in SIGNALS:
            signal.signal(number, note)
    except ValueError:  # not the main thread
        pass


def print_summary(results: Sequence[runner.Result], verdict: reports.Verdict) -> None:
    out: Any = Escaped(sys.stdout)  # messages and stderr tails come from the implementation
    for number, result in enumerate(verdict.unexpected):
        if number < SHOWN_IN_FULL:
            print(reports.describe(result) + "\n", file=out)
        else:
            print(f"{result.outcome.upper()} {result.case_id} [{result.profile}]: {result.summary_line()}", file=out)
    for result in verdict.unexpected_passes:
        print(f"UNEXPECTED PASS {result.case_id} [{result.profile}]: listed as expected to fail", file=out)
    for entry in verdict.stale_entries:
        print(f"STALE {entry}", file=out)
    print(summary_line(results, verdict), file=out)
    for line in detail_lines(results):
        print(line, file=out)
    causes, further = reports.diagnose(verdict.unexpected, results)
    reports.print_groups(causes, len(verdict.unexpected), out, further=further)


def next_step(verdict: reports.Verdict, command: Sequence[str], rules: str | None = None,
              report: str | None = None) -> str | None:
    """After unexpected failures under bundled rules: the fit run that says which knob values
    the implementation plays (many failures are often a few knobs), for the base profile that
    failed most. Under house rules: the fuzz run that hunts the bugs behind those failures."""
    # A transcript that is itself wrong (its profile unknown, say) is no failure of the engine:
    # fit or fuzz could not explain it, so it leads to no next run.
    engine_failures = [r for r in verdict.unexpected if r.outcome != "case_bug"]
    if not command or not engine_failures:
        return None
    if rules:
        return steps.hunt_step(rules, report, command)
    return next_step_line(Counter(steps.base_name(r.profile) for r in engine_failures).most_common(1)[0][0], command)


def next_step_line(profile: str, command: Sequence[str]) -> str:
    return steps.fit_step(profile, command)


def rules_line(rules: str) -> str:
    """What a --rules run checked, so that its counts are not read as those of --profile."""
    return (f"checked against the reference under {rules}: at every step the legal set, the reply, the events "
            f"and the whole state (thousand verify --profile checks only what each transcript states, so its "
            f"counts are not comparable)")


def _set_apart(verdict: reports.Verdict, known: findings.Known) -> list[tuple[runner.Result, str]]:
    """The unexpected failures a known root cause explains, taken out of the verdict (and of
    its root causes) and marked as expected failures; each with the cause that explains it."""
    apart: list[tuple[runner.Result, str]] = []
    for result in list(verdict.unexpected):
        first = result.findings[0] if result.findings else None
        signature = first.signature if first else diagnosis.outcome_signature(result.outcome, result.message)
        cause = known.cause_of(signature)
        if cause is not None and result.outcome != "case_bug":
            result.expected_failure = True
            verdict.unexpected.remove(result)
            apart.append((result, cause))
    return apart


def known_lines(apart: Sequence[tuple[runner.Result, str]], source: Path) -> str:
    tally = Counter(cause for _, cause in apart)
    lines = [f"known root causes ({source}): {len(apart)} failure{'s' if len(apart) != 1 else ''} set apart"]
    lines += [f"  {count} x {cause}" for cause, count in tally.most_common()]
    return "\n".join(lines)


def summary_line(results: Sequence[runner.Result], verdict: reports.Verdict | None = None) -> str:
    """The tally of outcomes; with the verdict, the passes listed as expected to fail and the
    stale list entries are counted apart (they fail the run, so they are not passes)."""
    tally = reports.counts(results)
    surprises = len(verdict.unexpected_passes) if verdict else 0
    tally["pass"] -= surprises
    excused = sum(r.expected_failure for r in results)
    line = ", ".join(f"{count} {outcome}" for outcome, count in tally.items()
                     if count and outcome != "not_declared") or ("" if surprises else "no cases checked")
    partial = sum(r.partial and r.outcome == "pass" for r in results)
    if partial:
        line += f" ({partial} of the passes partially checked)"
    if excused:
        line += f" ({excused} expected failures)"
    if surprises:
        line += f"{', ' if line else ''}{surprises} unexpected pass{'es' if surprises > 1 else ''} (listed as expected to fail)"
    stale = len(verdict.stale_entries) if verdict else 0
    if stale:
        line += f", {stale} stale expected-failure entr{'ies' if stale > 1 else 'y'}"
    return line


def detail_lines(results: Sequence[runner.Result]) -> Iterator[str]:
    """Not declared as one line; the implementation's skips by reason."""
    absent = reports.not_declared(results)
    if absent["pairs"]:
        yield f"not declared: {absent['pairs']} pairs of {len(absent['profiles'])} profiles"
    for reason, count in list(reports.skipped_by_reason(results).items())[:10]:
        yield f"skipped by the implementation: {count} x {reason}"
