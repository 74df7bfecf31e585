"""How long a one-case ``thousand verify`` takes, cold and warm, and what its start-up costs.

``python benchmarks/startup.py [--case ID] [--rounds N]``

Prints, best and median of N rounds (wall time, one subprocess each):

1. ``thousand verify -k ID`` with the transcript cache off (THOUSAND_NO_CACHE): every
   transcript parsed and schema-validated, as before the cache existed;
2. the same with an empty cache folder (cold: the run parses everything and fills it);
3. the same with that cache filled (warm: what the kill matrix pays per mutant);
4. ``discover`` alone, in-process: whole corpus warm, and with ``select`` (only the chosen
   id's file read), cache off;
5. the import of the ``thousand`` command, and the reference server's time to answer
   ``start`` and ``stop``.
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
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.transcripts import CASES_DIR, GENERATED_DIR, discover  # noqa: E402

VERIFY = [sys.executable, "-c", "import sys; from conformance.cli import main; sys.exit(main(sys.argv[1:]))", "verify"]


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def run(command: list[str], env: dict[str, str], stdin: str = "") -> None:
    done = subprocess.run(command, env=env, input=stdin, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{command[:4]}... exited {done.returncode}: {done.stderr[-400:]}")


def show(label: str, times: list[float]) -> None:
    print(f"{label:<58} best {min(times):6.3f} s   median {statistics.median(times):6.3f} s")


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
        cold, warm = [], []
        for number in range(args.rounds):
            env = {**base, "THOUSAND_CACHE_DIR": os.path.join(folder, f"cache{number}")}
            cold.append(timed(lambda: run(verify, env)))
            warm.append(timed(lambda: run(verify, env)))
        show("verify one case, cold (empty cache, filled by the run)", cold)
        show("verify one case, warm (cache filled)", warm)
        os.environ["THOUSAND_CACHE_DIR"] = os.path.join(folder, "cache0")
        roots = [CASES_DIR, GENERATED_DIR]
        show("discover(): whole corpus, warm cache, in-process", [timed(lambda: discover(roots)) for _ in range(args.rounds)])
        show("discover(select=one id): cache off, in-process",
             [timed(lambda: discover(roots, select=lambda case_id: case_id == args.case, cache=False))
              for _ in range(args.rounds)])
    show("import of the thousand command (python -c 'import ...')",
         [timed(lambda: run([sys.executable, "-c", "import conformance.cli, conformance.verify_cli"], base))
          for _ in range(args.rounds)])
    requests = "\n".join(json.dumps(r) for r in ({"cmd": "start", "seq": 1, "version": 1}, {"cmd": "stop", "seq": 2}))
    show("reference server: start, answer start and stop, exit",
         [timed(lambda: run([sys.executable, "-I", "-m", "reference_impl.server"], base, requests + "\n"))
          for _ in range(args.rounds)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
