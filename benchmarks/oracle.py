"""The reference as an oracle, before and after: every figure of issue 25 side by side in one run.

``python benchmarks/oracle.py --base-tree DIR --standin FILE [--deals N] [--cases N] [--fuzz-deals N] [--skip-slow]``

``DIR`` is a checkout of the commit to compare with, with its own ``.venv`` (``git worktree
add --detach DIR COMMIT``, then ``python3 -m venv DIR/.venv`` and ``DIR/.venv/bin/python -m
pip install -e DIR``); this checkout is measured with its own ``.venv``. ``FILE`` is the
house-rules file of the fit stand-in (a knob-shifted reference), given as an argument. Each
figure is taken for both trees one after the other, so that both see the same load:

1. engine: seeded random full deals per CPU second, per bundled profile, as each tree's own
   ``benchmarks/engine.py`` prints it (its play loop in CPU seconds, so that a busy machine
   counts less; the seeded shuffles dealt before the loop are not the engine's and are left
   out);
2. replay, per case, against the engine's own time for the same cases in process (the
   deal, then ``legal_actions`` and ``apply`` per step): wall time, the runner's CPU and the
   reference server's CPU of one reference process observing each case whole (the batch
   extension), the best of three rounds after a warm one; by ``Pool.replay`` where the tree
   has it (as ``thousand fit`` replays, a few cases written ahead of the replies read), else
   one ``observe`` after the other. Twice: the plain replay, every
   reply read into a record (the first ``--cases`` corpus cases, each under its own
   profile); and the replay as ``thousand fit`` makes it (up to ``--cases`` cases of
   classic), with the expectation of a realistic implementation's record, the reference
   under ``tests/fixtures/house/many-knobs.yaml`` (twelve knobs of classic changed: it
   differs from classic at some steps of most cases), where the tree has expectations. That
   replay asks each case only as far as the record goes (the share of steps asked is
   printed) and is not weighed; a tree without expectations replays it plainly;
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
# benchmarks/engine.py random play, the rate it prints itself (best of two): the CPU seconds
# of its play loop, the seeded dealing done before it left out, as the figure is.
ENGINE_SNIPPET = """
import json, sys
sys.path.insert(0, "benchmarks")
import variants
from engine import run
from reference_impl import Rules
def rate(rules, deals):
    measure = run(rules, deals)
    return measure.deals / measure.seconds
deals = int(sys.argv[1])
print(json.dumps({name: max(rate(Rules.from_document(variants.resolve(name).to_document()), deals) for _ in range(2))
                  for name in sys.argv[2:]}))
"""

# Run inside each tree's own interpreter (argv: cases, house file): per case, the replay
# through the reference and the engine's own time for the same cases, twice: the plain replay
# (every reply read) over the first cases of the corpus, and the replay as fit makes it over
# the cases of classic, with the expectation of an implementation's record (the reference
# under the house file) where the tree has expectations. Wall and the runner's CPU from this
# process, the server's CPU from /proc; the best of three rounds of each.
REPLAY_SNIPPET = """
import inspect, json, os, sys, time
import variants
from reference_impl import MatchState, RefusedActionError, Rules
try:
    from conformance.oracle import evidence, observe
    from conformance.corpus.transcripts import CASES_DIR, GENERATED_DIR, Transcript, discover
    from conformance.harness.runner import REFERENCE_COMMAND
except ImportError:  # the layout before the conformance rooms
    from conformance import evidence, observe
    from conformance.transcripts import CASES_DIR, GENERATED_DIR, Transcript, discover
    from conformance.runner import REFERENCE_COMMAND
count, house = int(sys.argv[1]), sys.argv[2]
corpus = [c for c in discover([CASES_DIR, GENERATED_DIR]) if isinstance(c, Transcript)]
plain_cases = [(c, c.profiles[0]) for c in corpus[:count]]
fit_cases = [(c, "classic") for c in corpus if "classic" in c.profiles][:count]
documents = {name: variants.resolve(name).to_document() for name in {p for _, p in plain_cases + fit_cases}}
rules = {name: Rules.from_document(document) for name, document in documents.items()}
def cpu(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
def engine_time(cases):
    began = time.process_time()
    for case, profile in cases:
        state = MatchState(rules[profile], case.match)
        for deal in case.deals:
            state.start_deal(deal["dealer"], deal["hands"], deal["talon"])
            for step in deal["steps"]:
                state.legal_actions()
                try:
                    state.apply(step["action"])
                except RefusedActionError:
                    pass
    return (time.process_time() - began) / len(cases)
def replay_time(cases, expected):
    pool = observe.Pool(REFERENCE_COMMAND, 1, batch=True)
    observer = pool.observers[0]
    expects = "expected" in inspect.signature(observer.observe).parameters
    def once():
        if hasattr(pool, "replay"):  # the path fit takes: cases written ahead of the replies read
            return pool.replay(cases, lambda item: observe.Replay(item[0], item[1], documents[item[1]], (),
                                                                  expected[item[0].id] if expected else None))
        return [observer.observe(case, profile, documents[profile], (), expected[case.id]) if expects and expected
                else observer.observe(case, profile, documents[profile]) for case, profile in cases]
    once()  # started, warm, every document and expectation held
    pid, best = observer.impl.process.pid, {"wall": float("inf"), "runner": float("inf"), "server": float("inf")}
    for _ in range(3):
        wall, runner, server = time.perf_counter(), time.process_time(), cpu(pid)
        records = once()
        taken = {"wall": time.perf_counter() - wall, "runner": time.process_time() - runner, "server": cpu(pid) - server}
        best = {key: min(best[key], taken[key] / len(cases)) for key in best}
    observer.close()
    assert all(not r.broken for r in records), [r.ended for r in records if r.broken][:3]
    best["steps"] = sum(len(r.steps) for r in records) / sum(1 + len(d["steps"]) for c, _ in cases for d in c.deals)
    best["expects"] = bool(expects and expected)
    return best
implementation = observe.Pool([*REFERENCE_COMMAND, "--rules", house], 1)
shown = {r.case_id: evidence.shown(r, evidence.Partial())[0]
         for r in implementation.map(fit_cases, lambda o, item: o.observe(item[0], item[1], documents[item[1]]))}
implementation.close()
print(json.dumps({"cases": len(plain_cases), "plain": replay_time(plain_cases, None),
                  "engine": min(engine_time(plain_cases) for _ in range(3)),
                  "fit_cases": len(fit_cases), "fit": replay_time(fit_cases, shown),
                  "fit_engine": min(engine_time(fit_cases) for _ in range(3))}))
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
    house = str(ROOT / "tests" / "fixtures" / "house" / "many-knobs.yaml")
    replay = {side: snippet(tree, REPLAY_SNIPPET, str(cases), house) for side, tree in trees.items()}
    before, after = replay["before"], replay["after"]
    for name, key, engine, count in (("plain replay", "plain", "engine", "cases"), ("replay as fit", "fit", "fit_engine", "fit_cases")):
        print(row(f"{name} per case, wall ({after[count]:.0f} cases)", 1000 * before[key]["wall"],
                  1000 * after[key]["wall"], "ms", "lower"))
        print(row(f"{name}: runner CPU per case", 1000 * before[key]["runner"], 1000 * after[key]["runner"], "ms", "lower"))
        print(row(f"{name}: reference server CPU per case", 1000 * before[key]["server"], 1000 * after[key]["server"], "ms", "lower"))
        print(row(f"{name}: engine per case (same cases)", 1000 * before[engine], 1000 * after[engine], "ms", "lower"))
        ratio = {side: replay[side][key]["wall"] / replay[side][engine] for side in replay}
        print(f"| {name} / engine time | {ratio['before']:.1f}x | {ratio['after']:.1f}x | (goal: at most 3x) |")
    asked = {side: f"{100 * replay[side]['fit']['steps']:.0f}% of steps asked, "
                   + ("with expectations" if replay[side]["fit"]["expects"] else "without expectations") for side in replay}
    print(f"| replay as fit: what was asked | {asked['before']} | {asked['after']} | |")


if __name__ == "__main__":
    sys.exit(main())
