"""The terminal outputs docs/verify.md shows for fit and fuzz, from real runs.

`python -m sitegen.outputs` runs each command of OUTPUTS in a temporary folder holding the
repository files it needs (examples/house/...), with this checkout's code, and writes what
the terminal shows to docs/snippets/NAME.txt, which docs/verify.md includes.
`python -m sitegen.outputs --check` runs them again and exits 1 when an output differs from
the committed one (times and speeds aside), naming the first line that drifted; with
`--with-verify` it also reruns the verify runs behind `python -m sitegen.results`'s
outputs (about a minute more: only the runs a page shows). CI runs the check with it (.ci/run).
"""

from __future__ import annotations

import argparse
import difflib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from sitegen import results
from spec import SPEC_DIR

ROOT = SPEC_DIR.parent
SNIPPETS_DIR = ROOT / "docs" / "snippets"
# How a page names an engine, and how this checkout starts it (the installed commands may be
# another checkout's code: the run uses this one's).
ENGINES = {
    "thousand-reference": (sys.executable, "-m", "reference_impl.server"),
    "python": (sys.executable,),
}


@dataclass(frozen=True)
class Output:
    """One command whose output a page shows."""

    name: str  # docs/snippets/NAME.txt
    command: str  # as the page shows it, e.g. "thousand fit ... -- thousand-reference --rules x.yaml"
    files: tuple[str, ...] = ()  # repository files copied into the working folder first

    def argv(self) -> list[str]:
        """The command as run: thousand as this checkout's module, each engine word mapped."""
        words = shlex.split(self.command)
        assert words[0] == "thousand"
        real: list[str] = [sys.executable, "-m", "conformance.cli"]
        after_dashes = False
        for word in words[1:]:
            if after_dashes and word in ENGINES and not real[-1] == "--rules":
                real += ENGINES[word]
                continue
            after_dashes = after_dashes or word == "--"
            real.append(word)
        return real


OUTPUTS = (
    Output("fit-twelve-changes",
           "thousand fit --profile classic --output engine.yaml --report fit.json -- "
           "thousand-reference --rules twelve-changes.yaml",
           files=("examples/house/twelve-changes.yaml",)),
    Output("fit-must-beat-not-on-trump-lead",
           "thousand fit --profile polish --output lua-like.yaml -- python -m mutants.serve must-beat-not-on-trump-lead"),
    Output("fuzz-two-mistakes",
           "thousand fuzz --profile polish --deals 300 --seed 1 --save found -- python -m mutants.serve "
           "must-beat-missing marriage-values-hearts-diamonds-swapped"),
)
# What changes from run to run on the same code: times and speeds.
VOLATILE = (re.compile(r"\b\d+(?:\.\d+)? s\b"), re.compile(r"\b\d+ deals/s\b"), re.compile(r"\"seconds\": [\d.]+"))


def run(output: Output) -> str:
    """The terminal text of one real run: the command line, then what it printed."""
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        for file in output.files:
            shutil.copy(ROOT / file, work / Path(file).name)
        done = subprocess.run(output.argv(), cwd=work, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              check=False, env=_env())
        text = done.stdout + (done.stderr if done.returncode not in (0, 1) else "")
        return f"$ {output.command}\n" + _as_shown(text, output, work)


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _as_shown(text: str, output: Output, work: Path) -> str:
    """The output as the page shows it: engines by their shown names, no machine paths."""
    for shown, real in ENGINES.items():
        text = text.replace(shlex.join(real), shown)
    return text.replace(str(work) + "/", "").replace(sys.executable, "python")


def normal(text: str) -> str:
    for pattern in VOLATILE:
        text = pattern.sub("<varies>", text)
    return text


def drift(name: str, fresh: str) -> str | None:
    """How the committed output differs from a fresh run (None when only times differ)."""
    path = SNIPPETS_DIR / f"{name}.txt"
    if not path.is_file():
        return f"docs/snippets/{name}.txt is missing"
    old = path.read_text(encoding="utf-8")
    if normal(old) == normal(fresh):
        return None
    diff = difflib.unified_diff(normal(old).splitlines(), normal(fresh).splitlines(), "committed", "today", lineterm="", n=0)
    return f"docs/snippets/{name}.txt differs from today's run:\n" + "\n".join(list(diff)[:12])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sitegen.outputs", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when an output drifted")
    parser.add_argument("--with-verify", action="store_true",
                        help="also rerun the verify outputs of python -m sitegen.results that pages show (about a minute)")
    parser.add_argument("--only", nargs="+", default=[], metavar="NAME", help="only these outputs")
    args = parser.parse_args(argv)
    chosen = [o for o in OUTPUTS if not args.only or o.name in args.only]
    fresh = {o.name: run(o) for o in chosen}
    if args.with_verify:
        fresh.update(results.fresh_snippets())
    if not args.check:
        for name, text in fresh.items():
            (SNIPPETS_DIR / f"{name}.txt").write_text(text, encoding="utf-8")
            print(f"wrote docs/snippets/{name}.txt")
        return 0
    problems = [p for name, text in fresh.items() if (p := drift(name, text))]
    for problem in problems:
        print(problem)
    if problems:
        print("run `python -m sitegen.outputs` (and `python -m sitegen.results`) and commit docs/snippets/",
              file=sys.stderr)
        return 1
    print(f"{len(fresh)} outputs as committed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
