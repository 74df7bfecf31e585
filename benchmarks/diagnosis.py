"""Hit rates of the root-cause diagnosis on implementations whose mistakes are known.

Not a CI test: it prints tables. Each run is ``thousand verify --report`` in its default
keep-going mode (what an engine author runs), against ``python -m mutants.serve``.

``python benchmarks/diagnosis.py single [-k GLOB] [NAME ...]``
    one mutant at a time: does the largest root cause explain at least 80% of the failures
    and name the knob the mutant breaks? (The kill matrix checks the same in
    first-mismatch mode; this is the keep-going view.)
``python benchmarks/diagnosis.py pairs [--pairs 20] [--seed 1] [-k GLOB]``
    two mutants at once, with knobs in different rule sections, drawn at random: are both
    mistakes named by one of the report's three largest root causes or by a ``further``
    group (a second mistake behind the first)?
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mutants.catalogue import CATALOGUE, Mutant  # noqa: E402
from mutants.matrix import names_the_mistake  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
THOUSAND = (sys.executable, "-m", "conformance.cli")
SHARE = 0.8


def report_of(names: Sequence[str], include: Sequence[str], folder: Path) -> dict[str, Any]:
    report = folder / ("+".join(names) + ".json")
    command = [*THOUSAND, "verify", "--report", str(report), "--jobs", "2"]
    for pattern in include:
        command += ["-k", pattern]
    subprocess.run([*command, "--", sys.executable, "-m", "mutants.serve", *names], cwd=ROOT,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return data


def names_mistake(group: dict[str, Any], mutant: Mutant) -> bool:
    """The group points at the mutant's mistake, as the kill matrix judges it."""
    return names_the_mistake(str(group["signature"]), group["knobs"], mutant.knobs)


def run_single(args: argparse.Namespace) -> None:
    chosen = [CATALOGUE[n] for n in args.names] if args.names else list(CATALOGUE.values())
    shares: list[float] = []
    good = 0
    with tempfile.TemporaryDirectory() as tmp:
        for mutant in chosen:
            report = report_of([mutant.name], args.k, Path(tmp))
            if not report["unexpected"]:
                print(f"  {mutant.name:40s} not killed")
                continue
            top = report["groups"][0]
            share = top["count"] / report["unexpected"]
            ok = share >= SHARE and names_mistake(top, mutant)
            good += ok
            shares.append(share)
            print(f"  {mutant.name:40s} {share:4.0%} {'ok  ' if ok else 'POOR'} {top['signature'][:70]}", flush=True)
    print(f"well diagnosed: {good} of {len(shares)} killed mutants; top root cause share median "
          f"{statistics.median(shares):.0%}, lowest {min(shares):.0%}")


def run_pairs(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    pool = [m for m in CATALOGUE.values() if m.knobs]
    hits = 0
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(1, args.pairs + 1):
            while True:
                one, two = rng.sample(pool, 2)
                if not {k.split(".")[0] for k in one.knobs} & {k.split(".")[0] for k in two.knobs}:
                    break
            report = report_of([one.name, two.name], args.k, Path(tmp))
            candidates = report["groups"][:3] + report.get("further", [])[:3]
            found = [any(names_mistake(g, m) for g in candidates) for m in (one, two)]
            hits += all(found)
            shown = ", ".join(f"{g['count']} {g['signature'][:40]}" for g in report["groups"][:3])
            print(f"  {number:2d}. {one.name} + {two.name}: {'both named' if all(found) else 'MISSED ' + str(found)}"
                  f" ({report['unexpected']} failing: {shown})", flush=True)
    print(f"both mistakes named in {hits} of {args.pairs} pairs ({hits / args.pairs:.0%}); "
          f"{time.monotonic() - started:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    single = sub.add_parser("single")
    single.add_argument("names", nargs="*")
    pairs = sub.add_parser("pairs")
    pairs.add_argument("--pairs", type=int, default=20)
    pairs.add_argument("--seed", type=int, default=1)
    for mode in (single, pairs):
        mode.add_argument("-k", action="append", default=[], help="only case ids matching this glob")
    args = parser.parse_args()
    run_single(args) if args.mode == "single" else run_pairs(args)


if __name__ == "__main__":
    main()
