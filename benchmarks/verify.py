"""How much the runner costs over the bare pipe traffic, and how long the real corpus takes.

``python benchmarks/verify.py [--cases DIR ...]``

1. A null implementation (canned valid replies, no game logic) is driven by the runner
   through the whole corpus; the requests it receives are logged.
2. A bare loop writes the same requests to a fresh null implementation over the same kind
   of pipes and reads the replies, checking nothing.
3. The ratio runner / bare loop (best of five alternating rounds, and the ratio of the
   medians) is printed (target: at most 1.5),
   then the wall time of the real corpus against the reference implementation.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.harness import runner  # noqa: E402
from conformance.corpus.transcripts import CASES_DIR, GENERATED_DIR, discover  # noqa: E402
from conformance.cli.verify import resolve_document  # noqa: E402

NULL_STATE = {
    "phase": "auction", "to_act": 0, "dealer": 0, "next_dealer": 1, "auction": [], "high_bid": None,
    "declarer": None, "contract": None, "talon_shown": False, "talon": None, "trump": None, "trick": [],
    "trick_number": None, "tricks_won": [0, 0, 0], "card_points": [0, 0, 0], "marriages": [[], [], []],
    "deal_result": None, "scores": [0, 0, 0], "bolts": [0, 0, 0], "give_ups": [0, 0, 0],
    "barrel": [{"on": False, "attempts": 0, "failed_visits": 0}] * 3, "winner": None, "hands": [[], [], []],
}


def serve_null() -> None:
    """The null implementation: a canned valid reply to every request, at once."""
    log = open(os.environ["NULL_LOG"], "a", encoding="utf-8") if os.environ.get("NULL_LOG") else None
    canned: dict[str, dict[str, Any]] = {
        "start": {"version": 1, "profiles": "any", "implementation": {"name": "null", "version": "0", "language": "python", "homepage": ""}},
        "match": {"ok": True}, "deal": {"ok": True, "events": []}, "legal": {"actions": []},
        "apply": {"ok": True, "events": []}, "state": {"state": NULL_STATE}, "stop": {"ok": True},
    }
    for line in sys.stdin:
        if log:
            log.write(line)
        request = json.loads(line)
        sys.stdout.write(json.dumps({"seq": request["seq"], **canned[request["cmd"]]}) + "\n")
        sys.stdout.flush()
        if request["cmd"] == "stop":
            break


NULL_COMMAND = [sys.executable, str(Path(__file__).resolve()), "--serve-null"]
ROUNDS = 5


def drive(jobs: list[runner.Job], command: list[str], log: Path | None = None) -> tuple[float, dict[str, int]]:
    env_log = os.environ.pop("NULL_LOG", None)
    if log is not None:
        os.environ["NULL_LOG"] = str(log)
    try:
        started = time.perf_counter()
        state = runner.run_jobs(jobs, runner.Settings(command, 60.0, False, resolve_document))
        elapsed = time.perf_counter() - started
    finally:
        os.environ.pop("NULL_LOG", None)
        if env_log is not None:
            os.environ["NULL_LOG"] = env_log
    tally: dict[str, int] = {}
    for result in state.results.values():
        tally[result.outcome] = tally.get(result.outcome, 0) + 1
    return elapsed, tally


def bare_loop(requests: list[bytes]) -> float:
    """Write each request, read its reply line; no parsing, no checks."""
    started = time.perf_counter()
    process = subprocess.Popen(NULL_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert process.stdin and process.stdout
    for request in requests:
        process.stdin.write(request)
        process.stdin.flush()
        process.stdout.readline()
    process.stdin.close()
    process.wait()
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--serve-null", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cases", action="append", type=Path, default=[])
    parser.add_argument("--no-reference", action="store_true", help="skip the run against the reference")
    args = parser.parse_args()
    if args.serve_null:
        serve_null()
        return 0
    started = time.perf_counter()
    cases = discover(args.cases or [CASES_DIR, GENERATED_DIR])
    jobs = runner.plan(cases)
    print(f"corpus: {len(cases)} transcripts, {len(jobs)} (case, profile) runs, loaded in {time.perf_counter() - started:.2f} s")
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "requests.jsonl"
        drive(jobs, NULL_COMMAND, log)  # records the requests (and warms caches)
        requests = log.read_bytes().splitlines(keepends=True)
    # Alternate the two, five rounds each: the machine is shared, so the best round is the
    # least disturbed figure; the median shows how much the disturbance moves it.
    runner_times, bare_times = [], []
    for _ in range(ROUNDS):
        runner_times.append(drive(jobs, NULL_COMMAND)[0])
        bare_times.append(bare_loop(requests))
    best = min(runner_times) / min(bare_times)
    median = statistics.median(runner_times) / statistics.median(bare_times)
    print(f"null implementation, {len(requests)} requests: runner best {min(runner_times):.3f} s, "
          f"bare loop best {min(bare_times):.3f} s, ratio {best:.2f} (target <= 1.5); "
          f"medians of {ROUNDS}: ratio {median:.2f}")
    if not args.no_reference:
        reference_time, tally = drive(jobs, list(runner.REFERENCE_COMMAND))
        print(f"reference implementation: {reference_time:.2f} s wall; outcomes {tally}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
