"""``python -m mutants``: run the corpus against every mutant and print the kill matrix.

Each mutant is checked by the real runner in a subprocess
(``thousand verify --report FILE -- python -m mutants.serve NAME``); the reference is run
the same way first, and only the runs it passes can kill a mutant. Exits 1 when a mutant
survives, 2 on a usage error, so it can serve as a CI step.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Sequence

from spec.vocabulary import ExitCode

from .catalogue import Mutant, select
from .matrix import ROOT, Verdict, count_steps, passing, render, undiagnosed, verdict

RUNNER = (sys.executable, "-m", "conformance.cli", "verify")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m mutants",
        description="Run the conformance corpus against each deliberately wrong implementation and "
                    "print which cases kill it and whether the report's largest root cause points at the "
                    "mistake. Exits 1 if any mutant survives or is poorly diagnosed.")  # fmt: skip
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                        help="mutants checked at the same time (default: the number of cores)")
    parser.add_argument("-k", action="append", default=[], dest="include", metavar="GLOB",
                        help="only case ids matching this glob (passed to the runner); repeatable")
    parser.add_argument("--only", nargs="+", default=[], metavar="MUTANT", help="only these mutants (names or globs)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the matrix as JSON here")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="S", help="the runner's per-reply timeout")
    parser.add_argument("--reports", type=Path, metavar="DIR",
                        help="keep each run's runner report here (NAME.json, reference.json) to read the diagnosis")
    parser.add_argument("--list", action="store_true", help="list the catalogue and exit")
    args = parser.parse_args(argv)
    if args.jobs < 1 or args.timeout <= 0:
        parser.error("--jobs must be at least 1 and --timeout positive")
    return args


def run_corpus(implementation: Sequence[str], args: argparse.Namespace, workdir: Path, label: str,
               runner_jobs: int = 1) -> tuple[dict[str, Any] | None, str | None]:
    """One runner run; returns its JSON report, or None and what went wrong."""
    report = workdir / f"{label}.json"
    # --first-mismatch: a killing case ends at its first wrong answer (faster), and that first
    # finding is the root cause the matrix scores.
    command = [*RUNNER, "--report", str(report), "--jobs", str(runner_jobs), "--timeout", str(args.timeout), "--first-mismatch"]
    for pattern in args.include:
        command += ["-k", pattern]
    command += ["--", *implementation]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run(command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=False)  # fmt: skip
    if not report.exists():
        tail = done.stderr.strip().splitlines()[-3:]
        return None, f"the runner wrote no report (exit {done.returncode}): {' / '.join(tail) or 'no output'}"
    return json.loads(report.read_text(encoding="utf-8")), None


def check_mutants(mutants: list[Mutant], baseline: set[tuple[str, str]], steps: dict[str, int],
                  args: argparse.Namespace, workdir: Path) -> list[Verdict]:
    """Every mutant against the corpus, ``--jobs`` at a time, with a progress line each."""
    lock = threading.Lock()
    finished = [0]

    def one(m: Mutant) -> Verdict:
        started = time.monotonic()
        report, problem = run_corpus([sys.executable, "-m", "mutants.serve", m.name], args, workdir, m.name)
        served = ((report or {}).get("implementation") or {}).get("name")
        if report is not None and served != f"reference+mutant:{m.name}":
            # a server that never started fails every case: that is a broken run, not a kill
            report, problem = None, f"the mutant server did not start (implementation {served!r})"
        result = verdict(m.name, m.description, baseline, report, steps, problem, m.knobs)
        with lock:
            finished[0] += 1
            state = f"killed by {result.killing_cases} cases" if result.killed else "SURVIVED"
            print(f"[{finished[0]:3d}/{len(mutants)}] {m.name}: {state} ({time.monotonic() - started:.0f} s)", flush=True)
        return result

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        return list(pool.map(one, mutants))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        mutants = select(args.only)
    except KeyError as exc:
        print(f"python -m mutants: {exc.args[0]}", file=sys.stderr)
        return ExitCode.USAGE
    if args.list:
        for m in mutants:
            print(f"{m.name}: {m.description}")
        return ExitCode.PASSED
    started = time.monotonic()
    steps = count_steps()
    if args.reports is not None:
        try:
            args.reports.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            print(f"python -m mutants: cannot write reports to {args.reports}: {exc.strerror}", file=sys.stderr)
            return ExitCode.USAGE
    with tempfile.TemporaryDirectory(prefix="mutants-") as tmp:
        workdir = args.reports or Path(tmp)
        print(f"reference run ({len(steps)} cases on disk) ...", flush=True)
        report, problem = run_corpus([sys.executable, "-m", "reference_impl.server"], args, workdir, "reference", args.jobs)
        if report is None:
            print(f"python -m mutants: the reference run failed: {problem}", file=sys.stderr)
            return ExitCode.USAGE
        baseline = passing(report)
        not_passed = len(report.get("cases", [])) - len(baseline)
        print(f"reference passes {len(baseline)} runs" + (f" ({not_passed} runs it does not pass are left out)" if not_passed else ""))
        verdicts = check_mutants(mutants, baseline, steps, args, workdir)
    wall = time.monotonic() - started
    print(render(verdicts))
    print(f"wall time {wall:.0f} s for {len(mutants)} mutants with --jobs {args.jobs}")
    if args.json:
        args.json.write_text(json.dumps({"wall_seconds": round(wall, 1), "jobs": args.jobs, "reference_runs_passed": len(baseline),
                                         "reference_runs_not_passed": not_passed,
                                         "mutants": [v.to_json() for v in verdicts]}, indent=1) + "\n", encoding="utf-8")
    # a survivor, or a mutant whose report does not point at its mistake, fails the matrix
    return ExitCode.PASSED if all(v.killed for v in verdicts) and not undiagnosed(verdicts) else ExitCode.FAILED


if __name__ == "__main__":
    sys.exit(main())
