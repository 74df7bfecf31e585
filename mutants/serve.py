"""``python -m mutants.serve [--rules FILE] [--declare P[,P...]] [--mode MODE] [NAME ...]``: the reference
protocol server with one mistake applied, or several at once (an engine with two bugs, to test
that a report separates them). With ``--rules`` the server plays those house rules whatever the
runner names, so a test double can differ from a profile in many knobs and have a bug no knob
expresses, as real engines do; ``--declare`` makes it declare a list of profiles in ``start``;
``--mode`` adds one hostile behaviour of an adapter (``MODES``), so that a test double can skip
a query, contradict itself or answer a second applicable reason beside its mistakes.

The server reports its mistakes in the ``start`` reply (``reference+mutant:NAME``, names
joined by ``+``), so a report always says which wrong implementation it measured.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack

from typing import Any, Mapping

from reference_impl import server
from spec.vocabulary import Phase

from .catalogue import CATALOGUE

MODES = {
    "skip-legal": "answers every legal with skipped (a query it does not serve: unchecked, the game goes on)",
    "skip-state": "answers every state with skipped",
    "skip-give-up": "answers every give_up it is asked to apply with skipped (an action it does not play)",
    "second-reason": "names the second of two applicable refusal reasons first (no mistake: either applies)",
    "nobody-to-act": "names nobody to act in a play state between tricks after the first (contradicts itself)",
    "refuses-its-pass": "refuses a pass its own legal set offers, from the third call of an auction on (contradicts itself)",
}


class Hostile(server.Server):
    """The reference server with one of MODES; it offers no extension, so that every request
    (and so every hostile reply) goes one at a time."""

    mode = ""

    def start(self, request: Mapping[str, Any]) -> dict[str, Any]:
        reply = super().start(request)
        reply.pop("extensions", None)
        return reply

    def legal(self, request: Mapping[str, Any]) -> dict[str, Any]:
        if self.mode == "skip-legal":
            return {"skipped": {"reason": "legal sets are not served"}}
        return super().legal(request)

    def observe(self, request: Mapping[str, Any]) -> dict[str, Any]:
        if self.mode == "skip-state":
            return {"skipped": {"reason": "states are not served"}}
        reply = super().observe(request)
        state = reply["state"]
        if (self.mode == "nobody-to-act" and state.get("phase") == Phase.PLAY and not state.get("trick")
                and any(state.get("tricks_won") or ())):
            state["to_act"] = None
        return reply

    def apply(self, request: Mapping[str, Any]) -> dict[str, Any]:
        action = request.get("action")
        if self.mode == "skip-give-up" and action == "give_up":
            return {"skipped": {"reason": "giving up is not played"}}
        if (self.mode == "refuses-its-pass" and action == "pass" and self.state is not None
                and len(self.state.observation().get("auction") or ()) >= 2):
            return {"ok": False, "refusal": {"class": "illegal", "reason": "dealer_must_bid", "message": "the dealer must bid"}}
        reply = super().apply(request)
        refusal = reply.get("refusal")
        if self.mode == "second-reason" and isinstance(refusal, dict) and len(refusal.get("reasons") or ()) >= 2:
            reasons = refusal["reasons"]
            refusal["reason"], refusal["reasons"] = reasons[1], [reasons[1], reasons[0], *reasons[2:]]
        return reply


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mutants.serve",
        description="The reference protocol server with deliberate mistakes applied (see python -m mutants).")
    parser.add_argument("--rules", metavar="FILE.yaml",
                        help="play these house rules whatever profile the runner names (as thousand-reference --rules)")
    server.add_declare_option(parser)
    parser.add_argument("--mode", choices=sorted(MODES), help="one hostile behaviour besides the mistakes: "
                        + "; ".join(f"{name}: {what}" for name, what in MODES.items()))
    parser.add_argument("names", nargs="*", metavar="NAME", help="mutants to apply")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    unknown = [name for name in args.names if name not in CATALOGUE]
    if not (args.names or args.mode) or unknown or len(set(args.names)) < len(args.names):
        known = ", ".join(CATALOGUE)
        given = " ".join(args.names) or "nothing"
        print(f"usage: python -m mutants.serve [--rules FILE] [--declare P[,P...]] [--mode MODE] NAME [NAME ...] (got {given}; a --mode alone needs no NAME); "
              f"known mutants: {known}", file=sys.stderr)
        return 2
    options = [*(["--rules", args.rules] if args.rules else []), *(["--declare", args.declare] if args.declare else [])]
    with ExitStack() as stack:
        for name in args.names:
            stack.enter_context(CATALOGUE[name].applied())
        # Without house rules the name stays the one reports and the kill matrix know.
        mistakes = "+".join([*args.names, *([f"mode-{args.mode}"] if args.mode else [])])
        server.IMPLEMENTATION["name"] = "reference+mutant:" + mistakes
        server.NAME_SUFFIX = "" if args.rules is None else "+mutant:" + mistakes
        if args.mode:
            Hostile.mode = args.mode
            server.Server = Hostile  # type: ignore[misc]  # serve() builds its server from the module's name
        return server.main(options)


if __name__ == "__main__":
    sys.exit(main())
