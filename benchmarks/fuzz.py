"""Acceptance figures of ``thousand fuzz`` (not a CI test: it prints tables).

``python benchmarks/fuzz.py self [--profile classic] [--deals 300] [--jobs 1] [--seed 1] [--repeat 3] [--profile-client]``
    the reference against itself: deals per second of the command a user runs (``thousand fuzz
    --profile P --deals N --seed S --jobs J -- thousand-reference``, ``--repeat`` times, with
    the load average before each run), then where the time goes: CPU seconds of the runner
    and of the two reference servers over the same run, in process; with --profile-client,
    a cProfile of the runner (by CPU time) and of one reference server.
``python benchmarks/fuzz.py mutants [--budget 200] [--tries 3] [NAME ...]``
    deals-to-find per mutant of the catalogue (median and worst): each mutant is fuzzed under
    the profiles and options ``profile_order`` picks from the profile data (where its rules
    differ from the reference's, its knobs apply and are switched on first), ``--budget``
    deals each, ``--tries`` runs (seed 1; with fewer profiles than tries, they are run again
    with seed 2, 3, ...); the saved transcript is checked with ``thousand verify``: it must
    pass against the reference and fail against the mutant. A mutant no bundled profile can
    show (its rules equal the reference's everywhere) is reported as not found in 0 deals.

Where the time of ``self`` went (classic, 300 deals, in process, on a machine shared with
other work) at cb12562: the position trials, 14% of the deals, took a third of the time
(95 ms a deal: a round trip per action, since only random trials played out); in the two
servers, building each state in full to find its changes and comparing the fields (about a
quarter), the choice rule, the JSON of the replies, and at every trial each server reading
and building the 15 KB profile document of ``match`` again (1.2 ms each); in the runner,
decoding the implementation's batch reply although its bytes repeat the playout's. After:
a position's plans go with its playout (20 ms a deal), state changes come from snapshots
of plain values and only changed fields are built, the match names its document by key
(the batch extension), and a batch reply equal to the playout's is not decoded; what is
left is spread over the engine, the choice rule, the JSON of the replies and, on a busy
machine, the two processes waiting for each other (a deal's playout, then its batch).
"""

from __future__ import annotations

import argparse
import collections
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
from conformance.oracle import fuzz  # noqa: E402
from conformance.harness.runner import REFERENCE_COMMAND  # noqa: E402
from mutants.catalogue import CATALOGUE, Mutant  # noqa: E402
from reference_impl.rules import Rules  # noqa: E402

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


def profile_order(mutant: Mutant) -> list[str]:
    """The bundled profiles and options to fuzz a mutant under, best first, read from the
    profile data (never from the mutant's or a profile's name).

    A mutant whose patches only change the rules the engine reads (``Rules.from_document``)
    cannot show where its rules equal the reference's: those profiles are left out. The rest
    are ranked by the mutant's knobs: profiles where more of them apply and are switched on
    first; then, for a mutant of the rules read, options that set one of them (or a knob of
    the same section), and for a mistake in the engine's code, the knobs' most common values
    (the mainstream rule the mistake is about). Among as many switched-on knobs, one profile
    per distinct value of the knobs comes before a second one with the same values.
    """
    patches = mutant.build()
    rules_only = all(p.owner is Rules and p.attribute == "from_document" for p in patches)
    sections = {knob.partition(".")[0] for knob in mutant.knobs}
    base = variants.resolve(variants.all_names()[0]).rules
    # a mutant that names a whole section is about it where the section's switch is on
    knobs = [knob if "." in knob else f"{knob}.{switch}" for knob in mutant.knobs
             for switch in ([""] if "." in knob else [s for s in ("enabled", "allowed") if s in base.get(knob, {})])]

    def value(resolved: variants.ResolvedProfile, knob: str) -> object:
        section, _, name = knob.partition(".")
        return resolved.rules.get(section, {}).get(name)

    def values(name: str) -> str:
        resolved = variants.resolve(name)
        return repr([value(resolved, k) for k in knobs])

    def rank(name: str) -> tuple[int, int]:
        resolved = variants.resolve(name)
        inert = variants.inert_knobs(resolved)
        switched_on = sum(1 for k in knobs if k not in inert and value(resolved, k) not in (None, False, 0))
        if not rules_only:
            return -switched_on, -popularity[values(name)]
        own = {knob for knob, where in resolved.provenance.items() if "+" in name and where.get("from") == name}
        return -switched_on, -sum(2 if knob in knobs else 1 for knob in own if knob.partition(".")[0] in sections)

    def differs(name: str) -> bool:
        document = variants.resolve(name).to_document()
        with mutant.applied():
            changed = Rules.from_document(document)
        return changed != Rules.from_document(document)

    names = [name for name in variants.all_names() if not rules_only or differs(name)]
    popularity = collections.Counter(values(name) for name in names)
    names.sort(key=rank)
    ordered: list[str] = []
    for tier in sorted({rank(name)[0] for name in names}):  # the most switched-on knobs first
        group = [name for name in names if rank(name)[0] == tier]
        first: dict[str, str] = {}
        for name in group:
            first.setdefault(values(name), name)
        ordered += list(first.values()) + [name for name in group if name not in first.values()]
    return ordered


def run_mutants(args: argparse.Namespace) -> None:
    names = args.names or list(CATALOGUE)
    found: list[int] = []
    missed: list[str] = []
    unchecked: list[str] = []  # found, but the saved transcript does not tell the mutant from the reference
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            mutant = CATALOGUE[name]
            command = [sys.executable, "-m", "mutants.serve", name]
            deals, started, result = 0, time.monotonic(), None
            order = profile_order(mutant)
            for attempt in range(args.tries if order else 0):
                # fewer profiles than tries: the same ones again with the next seed (the same budget in all)
                profile, seed = order[attempt % len(order)], str(1 + attempt // len(order))
                folder = Path(tmp) / name
                outcome = fuzz.fuzz(command, profile, variants.resolve(profile).to_document(), args.budget, seed,
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
            if checks != [0, 1]:
                unchecked.append(name)
            first = outcome.divergence.finding if outcome.divergence else None
            print(f"{name:40s} {deals:4d} deals under {profile:22s} {first.signature if first else ''} "
                  f"[transcript vs reference/mutant: {verdict}] ({time.monotonic() - started:.0f} s)", flush=True)
    spread = f"deals-to-find median {statistics.median(found):.0f}, worst {max(found)}" if found else "none found"
    print(f"\n{len(found)} of {len(names)} mutants found; {spread}; not found: {', '.join(missed) or 'none'}; "
          f"transcript checks failed: {', '.join(unchecked) or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=("self", "mutants"))
    parser.add_argument("names", nargs="*")
    parser.add_argument("--profile", default="classic")
    parser.add_argument("--deals", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--budget", type=int, default=200, help="deals per try (default 200, the deals of a plain thousand fuzz run)")
    parser.add_argument("--tries", type=int, default=3)
    parser.add_argument("--seed", default="1")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile-client", action="store_true")
    args = parser.parse_intermixed_args()
    {"self": run_self, "mutants": run_mutants}[args.mode](args)


if __name__ == "__main__":
    main()
