"""Seeded random full deals per second for each profile (random legal play, one core).

Run: ``python benchmarks/engine.py [--deals N] [--profile]``. ``--profile`` prints the
cProfile of one profile's run, to see where the time goes.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reference_impl import MatchState, Rules, deal_random  # noqa: E402
from spec import PROFILES_DIR  # noqa: E402


def load_document(name: str) -> dict[str, Any]:
    """``variants.resolve(name).to_document()``, or the bundled YAML read directly."""
    try:
        import variants

        return variants.resolve(name).to_document()  # type: ignore[attr-defined,no-any-return]
    except (ImportError, AttributeError):
        import yaml

        chain, current = [], name
        while current:
            chain.append(yaml.safe_load((PROFILES_DIR / f"{current}.yaml").read_text(encoding="utf-8")))
            current = chain[-1].get("extends")
        rules: dict[str, dict[str, Any]] = {}
        for data in reversed(chain):
            for section, knobs in data.get("rules", {}).items():
                rules.setdefault(section, {}).update({k: v["value"] for k, v in knobs.items()})
        return {"profile": name, "rules": rules}


def run(rules: Rules, deals: int, seed: int = 1) -> float:
    """Deals per second of random legal play (a new match whenever one ends)."""
    rng = random.Random(seed)
    dealt = [deal_random(rng.randrange(2**32)) for _ in range(deals)]
    state = MatchState(rules)
    dealer = 0
    began = time.perf_counter()
    for hands, talon in dealt:
        if state.phase == "match_over":
            state = MatchState(rules)
        state.start_deal(dealer, hands, talon)
        while state.phase != "deal_over" and state.phase != "match_over":
            state.apply(rng.choice(state.legal_actions()))
        dealer = state.next_dealer if state.next_dealer is not None else 0
    return deals / (time.perf_counter() - began)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--deals", type=int, default=2000)
    parser.add_argument("--profile", action="store_true", help="show the cProfile of the first profile")
    args = parser.parse_args()
    names = sorted(path.stem for path in PROFILES_DIR.glob("*.yaml"))
    if args.profile:
        rules = Rules.from_document(load_document(names[0]))
        cProfile.runctx("run(rules, args.deals)", globals(), {"rules": rules, "args": args, "run": run}, "/tmp/engine.prof")
        pstats.Stats("/tmp/engine.prof").sort_stats("tottime").print_stats(15)
        return 0
    for name in names:
        rate = run(Rules.from_document(load_document(name)), args.deals)
        print(f"{name:20s} {rate:8.0f} deals/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
