"""Acceptance figures of ``thousand fuzz`` (not a CI test: it prints tables).

``python benchmarks/fuzz.py self [--profile classic] [--deals 300] [--jobs 1] [--seed 1] [--repeat 3] [--profile-client]``
    the reference against itself: deals per second of the command a user runs (``thousand fuzz
    --profile P --deals N --seed S --jobs J -- thousand-reference``, ``--repeat`` times, with
    the load average before each run), then where the time goes: CPU seconds of the runner
    and of the two reference servers over the same run, in process; with --profile-client,
    a cProfile of the runner (by CPU time) and of one reference server.
``python benchmarks/fuzz.py mutants [--budget 150] [--tries 3] [NAME ...]``
    deals-to-find per mutant of the catalogue (median and worst): each mutant is fuzzed under
    the profiles where its knobs apply and are switched on first, ``--budget`` deals each, at
    most ``--tries`` profiles; the saved transcript is checked with ``thousand verify``: it
    must pass against the reference and fail against the mutant.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import variants  # noqa: E402
from conformance import fuzz  # noqa: E402
from conformance.runner import REFERENCE_COMMAND  # noqa: E402
from mutants.catalogue import CATALOGUE  # noqa: E402

THOUSAND = (sys.executable, "-m", "conformance.cli")


def run_self(args: argparse.Namespace) -> None:
    reference = shutil.which("thousand-reference")
    server_command = [reference] if reference else list(REFERENCE_COMMAND)
    command = [*THOUSAND, "fuzz", "--profile", args.profile, "--deals", str(args.deals), "--seed", args.seed,
               "--jobs", str(args.jobs), "--", *server_command]
    print(f"thousand fuzz --profile {args.profile} --deals {args.deals} --seed {args.seed} --jobs {args.jobs} "
          f"-- {' '.join(server_command)}")
    rates = []
    for _ in range(args.repeat):
        load = os.getloadavg()[0]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        found = re.search(r"(\d+) deals/s", done.stdout)
        rates.append(int(found.group(1)) if found else 0)
        print(f"  load {load:.2f}: {done.stdout.strip() or done.stderr.strip()[-300:]}")
    print(f"best {max(rates)} deals/s")

    document = variants.resolve(args.profile).to_document()
    before, started = os.times(), time.monotonic()
    outcome = fuzz.fuzz(REFERENCE_COMMAND, args.profile, document, args.deals, args.seed, args.jobs)
    after, seconds = os.times(), time.monotonic() - started
    runner = after.user - before.user + after.system - before.system
    servers = after.children_user - before.children_user + after.children_system - before.children_system
    per_deal = 1000 / max(outcome.deals_played, 1)
    print(f"\nwhere the time goes (in process, {outcome.deals_played} deals, {seconds:.1f} s, "
          f"load {os.getloadavg()[0]:.2f} after):")
    print(f"  {'':28s}{'CPU s':>8s}{'ms/deal':>9s}")
    for name, value in (("runner (both sides)", runner), ("reference servers (two)", servers),
                        ("wall clock", seconds)):
        print(f"  {name:28s}{value:8.2f}{value * per_deal:9.2f}")
    if not args.profile_client:
        return
    with tempfile.TemporaryDirectory() as tmp:
        server_stats = Path(tmp) / "server.prof"
        server = [sys.executable, "-m", "cProfile", "-o", str(server_stats), "-m", "reference_impl.server"]
        profiler = cProfile.Profile(time.process_time)  # CPU time: waiting for the servers is not the runner's cost
        profiler.enable()
        started = time.monotonic()
        outcome = fuzz.fuzz(REFERENCE_COMMAND, args.profile, document, args.deals // 3, args.seed, 1, reference=server)
        seconds = time.monotonic() - started
        profiler.disable()
        print(f"\nprofiled: {outcome.deals_played / seconds:.0f} deals/s")
        print("runner side, by own CPU time:")
        _top(pstats.Stats(profiler), "tottime", 16)
        for _ in range(50):  # the server writes its profile when it stops
            if server_stats.exists():
                break
            time.sleep(0.1)
        if server_stats.exists():
            print("one reference server, by own time:")
            _top(pstats.Stats(str(server_stats)), "tottime", 16)


def _top(stats: pstats.Stats, key: str, count: int) -> None:
    stream = io.StringIO()
    stats.stream = stream  # type: ignore[attr-defined]
    stats.sort_stats(key).print_stats(count)
    lines = [line for line in stream.getvalue().splitlines() if line.strip()]
    start = next((i for i, line in enumerate(lines) if "ncalls" in line), 0)
    print("\n".join(lines[start:start + count + 1]))


def profile_order(knobs: tuple[str, ...]) -> list[str]:
    """One profile for each distinct value of the mutant's knobs first (the first such in
    listing order, switched-on values first), then the others."""
    def value(resolved: variants.ResolvedProfile, knob: str) -> object:
        section, _, name = knob.partition(".")
        return resolved.rules.get(section, {}).get(name)

    def values(name: str) -> str:
        resolved = variants.resolve(name)
        return repr([value(resolved, k) for k in knobs])

    def switched_on(name: str) -> int:
        resolved = variants.resolve(name)
        inert = variants.inert_knobs(resolved)
        return -sum(1 for k in knobs if k not in inert and value(resolved, k) not in (None, False, 0))

    names = sorted(variants.all_names(), key=switched_on)
    first: dict[str, str] = {}
    for name in names:
        first.setdefault(values(name), name)
    return list(first.values()) + [name for name in names if name not in first.values()]


def run_mutants(args: argparse.Namespace) -> None:
    names = args.names or list(CATALOGUE)
    found: list[int] = []
    missed: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            mutant = CATALOGUE[name]
            command = [sys.executable, "-m", "mutants.serve", name]
            deals, started, result = 0, time.monotonic(), None
            for profile in profile_order(mutant.knobs)[: args.tries]:
                folder = Path(tmp) / name
                outcome = fuzz.fuzz(command, profile, variants.resolve(profile).to_document(), args.budget, "1",
                                    save_to=folder)
                deals += outcome.deals_played
                if outcome.divergence is not None and outcome.saved is not None:
                    result = (profile, outcome)
                    break
            if result is None:
                missed.append(name)
                print(f"{name:40s} not found in {deals} deals ({time.monotonic() - started:.0f} s)", flush=True)
                continue
            profile, outcome = result
            found.append(deals)
            checks = [subprocess.run([*THOUSAND, "verify", "--cases", str(folder), "--profile", profile, "--", *cmd],
                                     capture_output=True, check=False).returncode
                      for cmd in (list(REFERENCE_COMMAND), command)]
            verdict = "ok" if checks == [0, 1] else f"CHECK FAILED {checks}"
            first = outcome.divergence.differences[0] if outcome.divergence else None
            print(f"{name:40s} {deals:4d} deals under {profile:22s} {first.signature if first else ''} "
                  f"[transcript vs reference/mutant: {verdict}] ({time.monotonic() - started:.0f} s)", flush=True)
    if found:
        print(f"\n{len(found)} of {len(names)} mutants found; deals-to-find median {statistics.median(found):.0f}, "
              f"worst {max(found)}; not found: {', '.join(missed) or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=("self", "mutants"))
    parser.add_argument("names", nargs="*")
    parser.add_argument("--profile", default="classic")
    parser.add_argument("--deals", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--budget", type=int, default=150)
    parser.add_argument("--tries", type=int, default=3)
    parser.add_argument("--seed", default="1")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile-client", action="store_true")
    args = parser.parse_intermixed_args()
    {"self": run_self, "mutants": run_mutants}[args.mode](args)


if __name__ == "__main__":
    main()
