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
``python benchmarks/diagnosis.py realistic [--variants 10] [--k 3] [--seed 1] [--mutant NAME] [--reports DIR]``
    realistic doubles: seeded house files of classic with k independent differences (each one
    or two knobs, drawn from the differences public engines show), served by
    ``python -m reference_impl.server --rules HOUSE`` (with ``--mutant``, by
    ``python -m mutants.serve --rules HOUSE NAME``: a bug no knob expresses as well), checked
    with ``thousand verify --profile classic``. Per variant: the root causes, and how many of
    the k differences have a knob among the first five knobs of some root cause. Run it in a
    checkout of the commit to compare with (the figures before a change) and in this one;
    ``--reports DIR`` keeps each variant's runner report there, to read its causes.
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


# Independent differences from classic, as public engines show them (one or two knobs each).
DIFFERENCES: dict[str, dict[str, dict[str, object]]] = {
    "no marriage needed": {"auction": {"marriage_needed_above": None}},
    "a 300 maximum": {"auction": {"max_bid": 300}},
    "the opener may pass": {"auction": {"opener_may_pass": True}},
    "the talon never shown": {"talon": {"shown": "from_bid", "shown_from_bid": 1000}},
    "no contract raise": {"talon": {"contract_raise": False}},
    "no give-up": {"giving_up": {"allowed": False}},
    "other marriage values": {"marriages": {"values": {"S": 80, "C": 100, "D": 40, "H": 60}}},
    "exact rounding": {"scoring": {"defender_rounding": "exact"}},
    "consecutive bolts": {"bolts": {"counting": "consecutive"}},
    "no redeals": {"redeals": {"rules": []}},
    "the duty to beat": {"play": {"must_beat": True}},
}


def house_text(name: str, chosen: Sequence[str]) -> str:
    lines = [f"profile: {name}", f"title: classic with {len(chosen)} differences", "status: draft",
             f"summary: 'A benchmark double: {', '.join(chosen)}.'", "extends: classic", "sources: {}", "rules:"]
    sections: dict[str, dict[str, object]] = {}
    for difference in chosen:
        for section, knobs in DIFFERENCES[difference].items():
            sections.setdefault(section, {}).update(knobs)
    for section, knobs in sections.items():
        lines.append(f"  {section}:")
        lines += [f"    {knob}: {{value: {json.dumps(value)}, ruling: 'A benchmark double plays this value.'}}" for knob, value in knobs.items()]
    return "\n".join(lines) + "\n"


def run_realistic(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    every, hit_total, causes_total = 0, 0, 0
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(1, args.variants + 1):
            chosen = rng.sample(sorted(DIFFERENCES), args.k)
            house = Path(tmp) / f"double-{number}.yaml"
            house.write_text(house_text(f"double-{number}", chosen), encoding="utf-8")
            server = ([sys.executable, "-m", "mutants.serve", "--rules", str(house), args.mutant] if args.mutant
                      else [sys.executable, "-m", "reference_impl.server", "--rules", str(house)])
            report = (args.reports or Path(tmp)) / f"double-{number}.json"
            subprocess.run([*THOUSAND, "verify", "--profile", "classic", "--jobs", "2", "--report", str(report),
                            "--", *server], cwd=Path.cwd(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=False)
            if not report.is_file():
                raise SystemExit(f"variant {number} ({', '.join(chosen)}): verify wrote no report (house rules refused?)")
            data = json.loads(report.read_text(encoding="utf-8"))
            if data["counts"]["error"] or data["counts"]["case_bug"]:
                raise SystemExit(f"variant {number} ({', '.join(chosen)}): the double does not play: {data['counts']}")
            shown = {k for g in data["groups"] for k in g["knobs"][:5]}
            found = [d for d in chosen if any(f"{s}.{k}" in shown for s, ks in DIFFERENCES[d].items() for k in ks)]
            every += len(found) == len(chosen)
            hit_total += len(found)
            causes_total += len(data["groups"])
            missed = sorted(set(chosen) - set(found))
            print(f"  {number:2d}. {len(data['groups']):2d} causes of {data['unexpected']:3d} failures; "
                  f"{len(found)} of {args.k} among the first five knobs of a cause"
                  + (f"; missed: {', '.join(missed)}" if missed else ""), flush=True)
    print(f"k={args.k}, {args.variants} variants: every difference shown in {every} of {args.variants} "
          f"({every / args.variants:.0%}); {hit_total} of {args.k * args.variants} differences shown "
          f"({hit_total / (args.k * args.variants):.0%}); {causes_total / args.variants:.1f} causes per variant; "
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
    realistic = sub.add_parser("realistic")
    realistic.add_argument("--variants", type=int, default=10)
    realistic.add_argument("--k", type=int, default=3, help="independent differences per variant")
    realistic.add_argument("--seed", type=int, default=1)
    realistic.add_argument("--mutant", help="a bug no knob expresses as well (python -m mutants.serve NAME)")
    realistic.add_argument("--reports", type=Path, metavar="DIR", help="keep each variant's runner report here (double-N.json)")
    args = parser.parse_args()
    {"single": run_single, "pairs": run_pairs, "realistic": run_realistic}[args.mode](args)


if __name__ == "__main__":
    main()
