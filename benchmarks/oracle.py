"""The reference as an oracle, before and after: every figure of issue 25 side by side in one run.

``python benchmarks/oracle.py --base-tree DIR --standin FILE [--deals N] [--cases N] [--fuzz-deals N] [--skip-slow]``

``DIR`` is a checkout of the commit to compare with, with its own ``.venv`` (``git worktree
add --detach DIR COMMIT``, then ``python3 -m venv DIR/.venv`` and ``DIR/.venv/bin/python -m
pip install -e DIR``); this checkout is measured with its own ``.venv``. ``FILE`` is the
house-rules file of the fit stand-in (a knob-shifted reference), given as an argument. Each
figure is taken for both trees one after the other, so that both see the same load:

1. engine: seeded random full deals per CPU second, per bundled profile (each tree's own
   ``benchmarks/engine.py`` play, in CPU seconds so that a busy machine counts less);
2. replay: wall time per corpus case observed through the reference the way ``thousand
   fit`` does (one process, the whole case at once: pipelined before, the batch extension
   after), against the engine's own time for the same cases in process (the deal, then
   ``legal_actions`` and ``apply`` per step);
3. ``thousand fuzz --profile classic -- thousand-reference``: deals per second;
4. ``thousand fit --profile classic --jobs 2 -- thousand-reference --rules FILE``: seconds;
5. ``thousand verify`` of the whole corpus against the reference: seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ("classic", "gambler-club", "polish", "polish-tournament", "repino-2013", "skill-games")

# Run inside each tree's own interpreter (argv: deals, profiles): each tree's own
# benchmarks/engine.py random play, timed in CPU seconds (best of two).
ENGINE_SNIPPET = """
import json, sys, time
sys.path.insert(0, "benchmarks")
import variants
from engine import run
from reference_impl import Rules
def rate(rules, deals):
    began = time.process_time()
    run(rules, deals)
    return deals / (time.process_time() - began)
deals = int(sys.argv[1])
print(json.dumps({name: max(rate(Rules.from_document(variants.resolve(name).to_document()), deals) for _ in range(2))
                  for name in sys.argv[2:]}))
"""

# Run inside each tree's own interpreter (argv: cases): the replay and the engine per case.
REPLAY_SNIPPET = """
import json, sys, time
import variants
from reference_impl import MatchState, RefusedActionError, Rules
try:
    from conformance.oracle import observe
    from conformance.corpus.transcripts import CASES_DIR, GENERATED_DIR, Transcript, discover
    from conformance.harness.runner import REFERENCE_COMMAND
except ImportError:  # the layout before the conformance rooms
    from conformance import observe
    from conformance.transcripts import CASES_DIR, GENERATED_DIR, Transcript, discover
    from conformance.runner import REFERENCE_COMMAND
cases = [c for c in discover([CASES_DIR, GENERATED_DIR]) if isinstance(c, Transcript)][:int(sys.argv[1])]
documents = {name: variants.resolve(name).to_document() for name in {c.profiles[0] for c in cases}}
rules = {name: Rules.from_document(document) for name, document in documents.items()}
def engine_time():
    began = time.perf_counter()
    for case in cases:
        state = MatchState(rules[case.profiles[0]], case.match)
        for deal in case.deals:
            state.start_deal(deal["dealer"], deal["hands"], deal["talon"])
            for step in deal["steps"]:
                state.legal_actions()
                try:
                    state.apply(step["action"])
                except RefusedActionError:
                    pass
    return time.perf_counter() - began
observer = observe.Pool(REFERENCE_COMMAND, 1, batch=True).observers[0]
observer.observe(cases[0], cases[0].profiles[0], documents[cases[0].profiles[0]])  # started, warm
best_replay = best_engine = float("inf")
for _ in range(3):
    began = time.perf_counter()
    records = [observer.observe(case, case.profiles[0], documents[case.profiles[0]]) for case in cases]
    best_replay = min(best_replay, time.perf_counter() - began)
    best_engine = min(best_engine, engine_time())
observer.close()
assert all(r.ended == "complete" for r in records), [r.ended for r in records if r.ended != "complete"][:3]
steps = sum(len(d["steps"]) for c in cases for d in c.deals)
print(json.dumps({"cases": len(cases), "steps": steps, "replay": best_replay / len(cases), "engine": best_engine / len(cases)}))
"""


def python(tree: Path) -> str:
    return str(tree / ".venv" / "bin" / "python")


def tool(tree: Path, name: str) -> str:
    return str(tree / ".venv" / "bin" / name)


def snippet(tree: Path, code: str, *args: str) -> dict[str, float]:
    done = subprocess.run([python(tree), "-c", code, *args], cwd=tree, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: {done.stderr.strip()[-2000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def wall(tree: Path, command: list[str], verdicts: tuple[int, ...] = (0,)) -> float:
    """Seconds of a command run in the tree; it must end with one of ``verdicts``."""
    began = time.monotonic()
    done = subprocess.run(command, cwd=tree, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - began
    if done.returncode not in verdicts:
        raise SystemExit(f"{' '.join(command)} in {tree} exited {done.returncode}:\n{(done.stdout + done.stderr)[-2000:]}")
    return seconds


def row(name: str, before: float, after: float, unit: str, better: str) -> str:
    ratio = after / before if better == "higher" else before / after
    return f"| {name} | {before:,.{_digits(before)}f} {unit} | {after:,.{_digits(after)}f} {unit} | x{ratio:.2f} |"


def _digits(value: float) -> int:
    return 0 if abs(value) >= 100 else 2


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-tree", type=Path, required=True, help="checkout of the commit to compare with, with its .venv")
    parser.add_argument("--standin", type=Path, required=True, help="house rules file of the fit stand-in")
    parser.add_argument("--deals", type=int, default=2000, help="engine deals per profile (default 2000)")
    parser.add_argument("--cases", type=int, default=300, help="corpus cases replayed (default 300)")
    parser.add_argument("--fuzz-deals", type=int, default=150, help="deals of the fuzz run (default 150)")
    parser.add_argument("--figures", default="engine,replay,fuzz,fit,verify",
                        help="the figures to take, comma-separated (default: all of engine,replay,fuzz,fit,verify)")
    args = parser.parse_args()
    trees = {"before": args.base_tree.resolve(), "after": ROOT}
    for tree in trees.values():
        if not Path(python(tree)).exists():
            raise SystemExit(f"{tree}: no .venv (python3 -m venv {tree}/.venv && {tree}/.venv/bin/python -m pip install -e {tree})")
    load = os.getloadavg()[0]
    print(f"load average {load:.2f} at the start; before = {trees['before']}, after = {trees['after']}\n")
    figures = set(args.figures.split(","))
    print("| figure | before | after | gain |")
    print("|---|---|---|---|")
    if "engine" in figures:
        _engine(trees, args.deals)
    if "replay" in figures:
        _replay(trees, args.cases)
    with tempfile.TemporaryDirectory() as tmp:
        if "fuzz" in figures:
            fuzz = {side: args.fuzz_deals / wall(tree, [tool(tree, "thousand"), "fuzz", "--profile", "classic", "--deals",
                                                          str(args.fuzz_deals), "--seed", "1", "--jobs", "1",
                                                          "--save", str(Path(tmp) / f"fuzz-{side}"),
                                                          "--", tool(tree, "thousand-reference")])
                    for side, tree in trees.items()}
            print(row("fuzz self, classic", fuzz["before"], fuzz["after"], "deals/s", "higher"))
        if "fit" in figures:  # exit 1: the stand-in is not explained in full, a verdict and not a failure
            fit = {side: wall(tree, [tool(tree, "thousand"), "fit", "--profile", "classic", "--output",
                                     str(Path(tmp) / f"fit-{side}.yaml"), "--jobs", "2", "--", tool(tree, "thousand-reference"),
                                     "--rules", str(args.standin.resolve())], verdicts=(0, 1))
                   for side, tree in trees.items()}
            print(row("fit, stand-in, --jobs 2", fit["before"], fit["after"], "s", "lower"))
        if "verify" in figures:
            verify = {side: wall(tree, [tool(tree, "thousand"), "verify"]) for side, tree in trees.items()}
            print(row("verify, whole corpus", verify["before"], verify["after"], "s", "lower"))
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")
    return 0


def _engine(trees: dict[str, Path], deals: int) -> None:
    engine = {side: snippet(tree, ENGINE_SNIPPET, str(deals), *PROFILES) for side, tree in trees.items()}
    for name in PROFILES:
        print(row(f"engine {name}", engine["before"][name], engine["after"][name], "deals/s", "higher"))
    slowest = {side: min(rates.values()) for side, rates in engine.items()}
    print(row("engine, slowest profile", slowest["before"], slowest["after"], "deals/s", "higher"))


def _replay(trees: dict[str, Path], cases: int) -> None:
    replay = {side: snippet(tree, REPLAY_SNIPPET, str(cases)) for side, tree in trees.items()}
    for side in trees:
        replay[side]["ratio"] = replay[side]["replay"] / replay[side]["engine"]
    print(row(f"replay per case ({replay['after']['cases']:.0f} cases)", 1000 * replay["before"]["replay"],
              1000 * replay["after"]["replay"], "ms", "lower"))
    print(row("engine per case (same cases)", 1000 * replay["before"]["engine"], 1000 * replay["after"]["engine"], "ms", "lower"))
    print(f"| replay / engine time | {replay['before']['ratio']:.1f}x | {replay['after']['ratio']:.1f}x | (goal: at most 3x) |")


if __name__ == "__main__":
    sys.exit(main())
