"""How long a one-case ``thousand verify`` takes, cold and warm, and what its start-up costs.

``python benchmarks/startup.py [--case ID] [--rounds N]``

Prints, for N rounds, the best and median wall time and the best CPU time (user + system,
the process and its children: less disturbed by other work on a shared machine):

1. ``thousand verify -k ID`` with the transcript cache off (THOUSAND_NO_CACHE): every
   transcript parsed and schema-validated, as before the cache existed;
2. the same with an empty cache folder (cold: the run parses everything and fills it);
3. the same with that cache filled (warm: what the kill matrix pays per mutant);
3b. the same, cache off, with the selection passed to ``discover(select=...)`` (only the
   chosen file read), as verify_cli would call it;
4. ``discover`` alone, in-process: whole corpus warm, and with ``select`` (only the chosen
   id's file read), cache off;
5. the import of the ``thousand`` command, and the reference server's time to answer
   ``start`` and ``stop``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.corpus.transcripts import CASES_DIR, GENERATED_DIR, discover  # noqa: E402

VERIFY = [sys.executable, "-c", "import sys; from conformance.cli import main; sys.exit(main(sys.argv[1:]))", "verify"]
# verify as it is when verify_cli passes its -k selection to discover(select=...): the call
# is wrapped here so the figure can be measured before that one-line change is merged.
VERIFY_SELECT = [sys.executable, "-c", (
    "import sys; from conformance import cli; from conformance.cli import verify as verify_cli\n"
    "from conformance.harness import runner; from conformance.corpus import transcripts\n"
    "include = [sys.argv[sys.argv.index('-k') + 1]]\n"
    "verify_cli.discover = lambda roots: transcripts.discover(roots, select=lambda i: runner.case_selected(i, include, []))\n"
    "sys.exit(cli.main(sys.argv[1:]))"), "verify"]


CPU: list[float] = []  # CPU seconds (user + system) of the process and its children, per timed call


def timed(action: Callable[[], object]) -> float:
    """Wall seconds of ``action``; its CPU seconds go to CPU (on a shared, loaded machine the
    wall time is inflated by waiting for a core, the CPU time much less)."""
    before = _cpu()
    start = time.perf_counter()
    action()
    wall = time.perf_counter() - start
    CPU.append(_cpu() - before)
    return wall


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run(command: list[str], env: dict[str, str], stdin: str = "") -> None:
    done = subprocess.run(command, env=env, input=stdin, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{command[:4]}... exited {done.returncode}: {done.stderr[-400:]}")


def show(label: str, times: list[float]) -> None:
    cpu = CPU[-len(times):]
    print(f"{label:<58} wall best {min(times):6.3f} s, median {statistics.median(times):6.3f} s;"
          f"  CPU best {min(cpu):6.3f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="classic/auction/pass-is-final")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    verify = VERIFY + ["-k", args.case]
    base = {key: value for key, value in os.environ.items() if key not in ("THOUSAND_NO_CACHE", "THOUSAND_CACHE_DIR")}
    with tempfile.TemporaryDirectory() as folder:
        off = {**base, "THOUSAND_NO_CACHE": "1"}
        show("verify one case, cache off (every file parsed)", [timed(lambda: run(verify, off)) for _ in range(args.rounds)])
        cold, warm, cold_cpu, warm_cpu = [], [], [], []
        for number in range(args.rounds):
            env = {**base, "THOUSAND_CACHE_DIR": os.path.join(folder, f"cache{number}")}
            cold.append(timed(lambda: run(verify, env)))
            cold_cpu.append(CPU[-1])
            warm.append(timed(lambda: run(verify, env)))
            warm_cpu.append(CPU[-1])
        CPU.extend(cold_cpu)
        show("verify one case, cold (empty cache, filled by the run)", cold)
        CPU.extend(warm_cpu)
        show("verify one case, warm (cache filled)", warm)
        show("verify one case, discover(select=...), cache off", [timed(lambda: run(VERIFY_SELECT + ["-k", args.case], off))
                                                                  for _ in range(args.rounds)])
        os.environ["THOUSAND_CACHE_DIR"] = os.path.join(folder, "cache0")
        roots = [CASES_DIR, GENERATED_DIR]
        show("discover(): whole corpus, warm cache, in-process", [timed(lambda: discover(roots)) for _ in range(args.rounds)])
        show("discover(select=one id): cache off, in-process",
             [timed(lambda: discover(roots, select=lambda case_id: case_id == args.case, cache=False))
              for _ in range(args.rounds)])
    show("import of the thousand command (python -c 'import ...')",
         [timed(lambda: run([sys.executable, "-c", "import conformance.cli, conformance.cli.verify"], base))
          for _ in range(args.rounds)])
    requests = "\n".join(json.dumps(r) for r in ({"cmd": "start", "seq": 1, "version": 1}, {"cmd": "stop", "seq": 2}))
    show("reference server: start, answer start and stop, exit",
         [timed(lambda: run([sys.executable, "-I", "-m", "reference_impl.server"], base, requests + "\n"))
          for _ in range(args.rounds)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
