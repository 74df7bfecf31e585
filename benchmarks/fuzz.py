"""Acceptance figures of ``thousand fuzz`` (not a CI test: it prints tables).

``python benchmarks/fuzz.py self [--profile classic] [--deals 300] [--jobs 1] [--profile-client]``
    the reference against itself: deals per second; with --profile-client, a cProfile of the
    runner's side (sides stepped one after the other) and of one reference server.
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
import pstats
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
    document = variants.resolve(args.profile).to_document()
    outcome = fuzz.fuzz(REFERENCE_COMMAND, args.profile, document, args.deals, "bench", args.jobs)
    rate = outcome.deals_played / outcome.seconds
    print(f"reference vs itself, {args.profile}, --jobs {args.jobs}: {outcome.deals_played} deals in "
          f"{outcome.seconds:.1f} s = {rate:.0f} deals/s (divergence: {outcome.divergence is not None})")
    if not args.profile_client:
        return
    with tempfile.TemporaryDirectory() as tmp:
        server_stats = Path(tmp) / "server.prof"
        server = [sys.executable, "-m", "cProfile", "-o", str(server_stats), "-m", "reference_impl.server"]
        profiler = cProfile.Profile()
        profiler.enable()
        started = time.monotonic()
        outcome = fuzz.fuzz(REFERENCE_COMMAND, args.profile, document, args.deals // 3, "bench", 1,
                            reference=server)
        seconds = time.monotonic() - started
        profiler.disable()
        print(f"\nprofiled: {outcome.deals_played / seconds:.0f} deals/s")
        print("runner side, by own time:")
        _top(pstats.Stats(profiler), "tottime", 12)
        for _ in range(50):  # the server writes its profile when it stops
            if server_stats.exists():
                break
            time.sleep(0.1)
        if server_stats.exists():
            print("one reference server, by cumulative time:")
            _top(pstats.Stats(str(server_stats)), "cumulative", 18)


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
    parser.add_argument("--profile-client", action="store_true")
    args = parser.parse_intermixed_args()
    {"self": run_self, "mutants": run_mutants}[args.mode](args)


if __name__ == "__main__":
    main()
