"""``thousand-reference``: the reference engine behind protocol v1 (DESIGN.md "Protocol v1").

One JSON object per line on stdin, one reply per line on stdout (flushed after each),
logs on stderr. The engine is built from the resolved ``document`` that ``match``
carries, so every profile is served (``profiles: "any"``). A request that cannot be
understood gets an ``errored`` reply; the server never crashes on input.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable, Mapping, TextIO

from .errors import EngineError, RefusedActionError
from .rules import Rules
from .state import MatchState

PROTOCOL_VERSION = 1
IMPLEMENTATION = {
    "name": "thousand-reference",
    "version": "0.1.0",
    "language": "Python",
    "homepage": "",  # no public home yet; the rules site is built from docs/ (mkdocs build)
}


# ``thousand-reference --rules FILE``: the resolved house rules played whatever profile
# ``match`` names (a knob-shifted reference, the test double of ``thousand fit``).
HOUSE_DOCUMENT: dict[str, Any] | None = None


class ProtocolError(Exception):
    """A request the server cannot carry out (answered with ``errored``)."""


class Server:
    """The state of one protocol session: at most one match at a time."""

    def __init__(self) -> None:
        self.state: MatchState | None = None
        self.stopped = False
        self.handlers: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
            "start": self.start,
            "match": self.match,
            "deal": self.deal,
            "legal": self.legal,
            "apply": self.apply,
            "state": self.observe,
            "stop": self.stop,
        }

    def handle_line(self, line: str) -> dict[str, Any]:
        """The reply to one request line."""
        try:
            request = json.loads(line)
        except json.JSONDecodeError as exc:
            return {"seq": None, "errored": {"message": f"request is not JSON: {exc.msg} at column {exc.colno}"}}
        if not isinstance(request, dict):
            return {"seq": None, "errored": {"message": "request must be a JSON object"}}
        seq = request.get("seq")
        handler = self.handlers.get(request.get("cmd"))  # type: ignore[arg-type]
        if handler is None:
            known = ", ".join(self.handlers)
            return {"seq": seq, "errored": {"message": f"unknown cmd {request.get('cmd')!r}: expected one of {known}"}}
        try:
            reply = handler(request)
        except (ProtocolError, EngineError) as exc:
            return {"seq": seq, "errored": {"message": str(exc)}}
        except Exception as exc:  # noqa: BLE001 - the server must answer, never crash
            return {"seq": seq, "errored": {"message": f"internal error: {type(exc).__name__}: {exc}"}}
        return {"seq": seq, **reply}

    def _match(self) -> MatchState:
        if self.state is None:
            raise ProtocolError("no match: send 'match' first")
        return self.state

    def start(self, request: Mapping[str, Any]) -> dict[str, Any]:
        version = request.get("version")
        if version != PROTOCOL_VERSION:
            raise ProtocolError(f"protocol version {version!r} is not supported: expected {PROTOCOL_VERSION}")
        return {"version": PROTOCOL_VERSION, "implementation": dict(IMPLEMENTATION), "profiles": "any"}

    def match(self, request: Mapping[str, Any]) -> dict[str, Any]:
        document = HOUSE_DOCUMENT if HOUSE_DOCUMENT is not None else request.get("document")
        if not isinstance(document, Mapping):
            raise ProtocolError("match: expected 'document', the resolved profile (this implementation accepts any)")
        state = request.get("state")
        if state is not None and not isinstance(state, Mapping):
            raise ProtocolError("match: 'state' must be an object {scores, bolts, give_ups, barrel}")
        self.state = MatchState(Rules.from_document(document), state)
        return {"ok": True}

    def deal(self, request: Mapping[str, Any]) -> dict[str, Any]:
        state = self._match()
        events = state.start_deal(request.get("dealer"), request.get("hands"), request.get("talon"))  # type: ignore[arg-type]
        return {"ok": True, "events": events}

    def legal(self, request: Mapping[str, Any]) -> dict[str, Any]:
        return {"actions": self._match().legal_actions()}

    def apply(self, request: Mapping[str, Any]) -> dict[str, Any]:
        state = self._match()
        if "action" not in request:
            raise ProtocolError("apply: expected 'action', an action string")
        try:
            events = state.apply(request["action"])
        except RefusedActionError as exc:
            return {"ok": False, "refusal": {"class": exc.refusal_class, "reason": exc.reason, "message": str(exc)}}
        return {"ok": True, "events": events}

    def observe(self, request: Mapping[str, Any]) -> dict[str, Any]:
        return {"state": self._match().observation()}

    def stop(self, request: Mapping[str, Any]) -> dict[str, Any]:
        self.stopped = True
        return {"ok": True}


def serve(stdin: TextIO, stdout: TextIO) -> None:
    """Answer requests until ``stop`` or the end of input."""
    server = Server()
    for line in stdin:
        if not line.strip():
            continue
        reply = server.handle_line(line)
        stdout.write(json.dumps(reply, separators=(",", ":")) + "\n")
        stdout.flush()
        if server.stopped:
            break


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``thousand-reference`` and ``python -m reference_impl.server``."""
    parser = argparse.ArgumentParser(
        prog="thousand-reference",
        description=(
            "Serve the reference rules engine of Thousand over protocol v1: JSON lines on "
            "stdin/stdout (start, match, deal, legal, apply, state, stop). Any profile is "
            "accepted: the match request carries the resolved profile document."
        ),
    )
    parser.add_argument("--rules", metavar="FILE.yaml",
                        help="play these rules (a house profile file, or 'name+option') whatever profile "
                             "the runner names in 'match'")
    args = parser.parse_args(argv)
    if args.rules is not None and not _use_house_rules(args.rules):
        return 2
    try:
        serve(sys.stdin, sys.stdout)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    return 0


def _use_house_rules(name: str) -> bool:
    """Resolve ``--rules`` once, before serving; a bad file is one clear line, exit 2."""
    global HOUSE_DOCUMENT
    import variants

    try:
        HOUSE_DOCUMENT = variants.resolve(name).to_document()
    except variants.ProfileError as exc:
        print(f"thousand-reference: --rules: {exc}", file=sys.stderr)
        return False
    IMPLEMENTATION["name"] = f"thousand-reference --rules {HOUSE_DOCUMENT['profile']}"
    return True


if __name__ == "__main__":
    sys.exit(main())
