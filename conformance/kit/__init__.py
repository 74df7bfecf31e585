"""The Python adapter kit: an engine speaks protocol v1 once its author writes four methods.

Subclass ``Engine`` and write ``deal`` (start a deal from the given hands and match state),
``legal`` (the legal action strings of the player to act), ``apply`` (play one, or raise
``Refused`` with or without a reason code) and ``state`` (the observable state as far as
the engine knows it); then call ``serve(YourEngine())``. The kit does the rest: JSON lines
and ``seq``, ``start`` and its declarations, checking action strings, the match state kept
between deals, the seat rotation of an engine without a dealer, and the events (the runner
derives them from consecutive states: ``"events": "derived"``). An engine that places the
opener's forced bid itself, or lists its exchange one card at a time, says so in a class
attribute and the runner does the rest (docs/protocol.md, Declarations for less).

Standard library only, and nothing of the reference implementation: copy an adapter that
imports it (``from conformance import kit``) wherever ``thousand`` is installed.
"""

from __future__ import annotations

import json
import re
import sys
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Iterable, TextIO

from spec.vocabulary import DECK, ENDED, RANKS, SUITS, Phase

CARDS = DECK  # the state's sort order
ACTION = re.compile(r"bid (0|[1-9][0-9]*)|pass|give (\S+) (\S+)|contract (0|[1-9][0-9]*)|give_up|"
                    r"play (\S+)( marriage| aces)?|redeal|no_redeal")
MALFORMED = ("malformed_action", "unknown_card")
MATCH_FIELDS = ("scores", "bolts", "give_ups", "barrel")  # what a match carries from deal to deal
PER_SEAT = ("tricks_won", "card_points", "marriages", "scores", "bolts", "give_ups", "barrel", "hands")
SEAT_FIELDS = ("to_act", "declarer", "winner")
START_OF_MATCH: dict[str, Any] = {"scores": [0, 0, 0], "bolts": [0, 0, 0], "give_ups": [0, 0, 0],
                                  "barrel": [{"on": False, "attempts": 0, "failed_visits": 0} for _ in range(3)]}


class Refused(Exception):
    """An action the engine refuses; its state must be unchanged. ``reason``: a reason code
    (docs/protocol.md, Reason codes), or None for an engine that cannot tell why."""

    def __init__(self, reason: str | None = None, message: str = "") -> None:
        super().__init__(message or reason or "refused")
        self.reason = reason


class Skip(Exception):
    """A rule the engine does not have: the runner counts the case as skipped, not failed."""


class _NoDeal(Exception):
    """A request about a deal when none is in progress (the last ``deal`` failed): answered
    ``errored`` without a traceback, so that the engine's own error stays the one shown."""


@dataclass(frozen=True)
class Action:
    """A canonical action string, read: ``kind`` is its first word (``bid``, ``pass``, ``give``,
    ``contract``, ``give_up``, ``play``, ``redeal``, ``no_redeal``); ``amount`` for a bid or
    a contract; ``cards`` the cards named; ``declares`` ``marriage`` or ``aces`` on a lead."""

    text: str
    kind: str
    amount: int | None = None
    cards: tuple[str, ...] = ()
    declares: str | None = None


def parse(action: Any) -> Action:
    """The action read, or Refused (``malformed_action``, ``unknown_card``) as the rules say."""
    if not isinstance(action, str) or not ACTION.fullmatch(action):
        raise Refused("malformed_action", f"{action!r} is not a canonical action")
    words = action.split(" ")
    kind = words[0]
    if kind in ("bid", "contract"):
        return Action(action, kind, amount=int(words[1]))
    cards = tuple(words[1:3]) if kind == "give" else tuple(words[1:2]) if kind == "play" else ()
    if any(card not in CARDS for card in cards):
        raise Refused("unknown_card", f"{action!r} names an unknown card")
    return Action(action, kind, cards=cards, declares=words[2] if kind == "play" and len(words) == 3 else None)


def card(rank: str, suit: str) -> str:
    """A card string from an engine's rank and suit (``T`` or ``10`` for the ten)."""
    text = ("10" if rank.upper() in ("T", "10") else rank.upper()) + suit.upper()[:1]
    if text not in CARDS:
        raise ValueError(f"not a card: rank {rank!r}, suit {suit!r}")
    return text


def sort_cards(cards: Iterable[str]) -> list[str]:
    """Cards in the state's order: by suit (S, C, D, H), then rank (A, 10, K, Q, J, 9)."""
    return sorted(cards, key=CARDS.index)


@dataclass(frozen=True)
class Deal:
    """What ``Engine.deal`` is given. Seats are the engine's own when it has no dealer
    (``Engine.rotates``): its seat 0 is the opener, and ``dealer`` is then 2."""

    profile: str  # the profile's name (with any option: polish+no-barrel)
    document: dict[str, Any]  # the resolved profile: every knob's value (thousand show PROFILE --json)
    dealer: int
    hands: list[list[str]]
    talon: list[str]
    match: dict[str, Any]  # scores, bolts, give_ups, barrel: per seat, as the match stands


class Engine:
    """The four methods an adapter's author writes, and what the engine declares."""

    name = "my-engine"
    version = "0"
    language = "Python"
    homepage = ""
    profiles: Any = "own"  # "own" (its fixed rules), "any" (it plays the document) or a list of names
    reasons = True  # False: it cannot tell why it refuses
    absent: tuple[str, ...] = ()  # state fields it has no concept of (never compared; counted unchecked)
    rotates = False  # True: it has no dealer and its seat 0 always opens
    places_opening_bid = False  # True: it bids the opener's forced bid itself as it deals
    gives_one_card = False  # True: its exchange lists ``give X`` per card; the runner makes the pairs

    def deal(self, deal: Deal) -> None:
        raise NotImplementedError

    def legal(self) -> list[str]:
        raise NotImplementedError

    def apply(self, action: Action) -> None:
        raise NotImplementedError

    def state(self) -> dict[str, Any]:
        raise NotImplementedError


class Adapter:
    """Protocol v1 around an Engine: one request in, one reply out."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.profile = ""
        self.document: dict[str, Any] = {}
        self.match: dict[str, Any] = dict(START_OF_MATCH)  # by protocol seat
        self.dealer = 0
        self.shift = 0  # engine seat = (protocol seat - shift) % 3 for a rotating engine
        self.dealt = False  # a deal is in progress (its ``deal`` succeeded)

    def start(self, request: dict[str, Any]) -> dict[str, Any]:
        e = self.engine
        reply: dict[str, Any] = {"version": 1, "profiles": e.profiles, "events": "derived", "implementation": {
            "name": e.name, "version": e.version, "language": e.language, "homepage": e.homepage}}
        if not e.reasons:
            reply["refusal_reasons"] = False
        if e.absent:
            reply["unsupported"] = {"state_fields": list(e.absent)}
        if e.places_opening_bid:
            reply["opening_bid"] = "placed"
        if e.gives_one_card:
            reply["give"] = "cards"
        return reply

    def match_(self, request: dict[str, Any]) -> dict[str, Any]:
        self.profile, self.document = str(request.get("profile", "")), request.get("document") or {}
        self.match = {**START_OF_MATCH, **(request.get("state") or {})}
        return {"ok": True}

    def deal(self, request: dict[str, Any]) -> dict[str, Any]:
        self.dealt = False
        self.dealer = request["dealer"]
        self.shift = (self.dealer + 1) % 3 if self.engine.rotates else 0
        self.engine.deal(Deal(self.profile, self.document, (self.dealer - self.shift) % 3,
                              self._to_engine(request["hands"]), list(request["talon"]),
                              {key: self._to_engine(value) for key, value in self.match.items()}))
        self.dealt = True
        return {"ok": True, "events": []}

    def _dealing(self) -> None:
        if not self.dealt:
            raise _NoDeal("no deal in progress: the last deal failed, or none was sent")

    def legal(self, request: dict[str, Any]) -> dict[str, Any]:
        self._dealing()
        return {"actions": list(self.engine.legal())}

    def apply(self, request: dict[str, Any]) -> dict[str, Any]:
        self._dealing()
        try:
            self.engine.apply(parse(request.get("action")))
        except Refused as refused:
            refusal: dict[str, Any] = {"class": "malformed" if refused.reason in MALFORMED else "illegal",
                                       "message": str(refused)}
            if refused.reason is not None:
                refusal["reason"] = refused.reason
            return {"ok": False, "refusal": refusal}
        return {"ok": True, "events": []}

    def state(self, request: dict[str, Any]) -> dict[str, Any]:
        self._dealing()
        state = self._from_engine(dict(self.engine.state()))
        for name in self.engine.absent:
            state.pop(name, None)
        if state.get("phase") in ENDED:  # the match goes on from here
            self.match.update({key: state[key] for key in MATCH_FIELDS if key in state})
        return {"state": state}

    # --- the seat rotation of an engine without a dealer ---

    def _to_engine(self, per_seat: list[Any]) -> list[Any]:
        return [per_seat[(seat + self.shift) % 3] for seat in range(3)] if self.shift else list(per_seat)

    def _seat(self, seat: Any) -> Any:
        return (seat + self.shift) % 3 if isinstance(seat, int) and not isinstance(seat, bool) else seat

    def _from_engine(self, state: dict[str, Any]) -> dict[str, Any]:
        if not self.engine.rotates:
            return state
        back = {**state, "dealer": self.dealer}
        for name in PER_SEAT:
            if isinstance(state.get(name), list) and len(state[name]) == 3:
                back[name] = [state[name][(seat - self.shift) % 3] for seat in range(3)]
        for name in SEAT_FIELDS:
            back[name] = self._seat(state.get(name))
        for name in ("auction", "trick"):
            back[name] = [{**entry, "player": self._seat(entry.get("player"))} for entry in state.get(name) or []]
        result = state.get("deal_result")
        if isinstance(result, dict):
            back["deal_result"] = {**result, **{key: [result[key][(seat - self.shift) % 3] for seat in range(3)]
                                                for key in ("points", "deltas") if isinstance(result.get(key), list)}}
        back["next_dealer"] = self._next_dealer(state)
        return back

    def _next_dealer(self, state: dict[str, Any]) -> int | None:
        """Who deals next, which an engine without a dealer cannot say."""
        if state.get("phase") != Phase.DEAL_OVER:
            return None
        result = state.get("deal_result")
        redealt = isinstance(result, dict) and result.get("kind") == "redeal"
        same = redealt and (self.document.get("rules", {}).get("deal", {}).get("dealer_after_redeal", "same") == "same")
        return self.dealer if same else (self.dealer + 1) % 3


def serve(engine: Engine, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout) -> None:
    """Answer protocol v1 requests, one JSON line each, until ``stop`` or the end of input.
    An exception in the engine answers ``errored`` (its traceback on stderr); ``Skip``
    answers ``skipped``; the process never dies on a request."""
    adapter = Adapter(engine)
    handlers: dict[Any, Callable[[dict[str, Any]], dict[str, Any]]] = {
        "start": adapter.start, "match": adapter.match_, "deal": adapter.deal, "legal": adapter.legal,
        "apply": adapter.apply, "state": adapter.state, "stop": lambda request: {"ok": True}}
    for line in stdin:
        request: Any = None
        try:
            request = json.loads(line)
            handler = handlers.get(request.get("cmd")) if isinstance(request, dict) else None
            reply = handler(request) if handler else {"errored": {"message": f"not a request: {line.strip()[:80]}"}}
        except Skip as skip:
            reply = {"skipped": {"reason": str(skip)}}
        except _NoDeal as exc:
            reply = {"errored": {"message": str(exc)}}
        except Exception as exc:  # the engine's bug is one errored reply, never a dead process
            command = request.get("cmd") if isinstance(request, dict) else None
            print(f"{command} failed:", file=sys.stderr)
            traceback.print_exc(limit=-2, file=sys.stderr)  # the engine's frames, not the kit's
            sys.stderr.flush()
            reply = {"errored": {"message": f"{type(exc).__name__}: {exc}"}}
        seq = request.get("seq") if isinstance(request, dict) else None
        stdout.write(json.dumps({"seq": seq, **reply}) + "\n")
        stdout.flush()  # the runner waits for each reply
        if isinstance(request, dict) and request.get("cmd") == "stop":
            return
