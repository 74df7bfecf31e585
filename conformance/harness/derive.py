"""Events derived from consecutive states, for an implementation whose ``start`` reply says
it sends none (``"events": "derived"``, docs/protocol.md, Declarations for less).

Most events restate what the state shows anyway (a trick's winner grows its ``tricks_won``,
a deal's score is its ``deal_result``): the runner reads them off the state before and after
an action instead of asking the engine's author to write them. What the states cannot tell
(a marriage's points, why a player left the barrel, a bonus) is not derived: a transcript's
expectation of it counts as unchecked, never as passed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from spec.vocabulary import Phase

# event type -> the fields the states tell; a type missing here is never derived
DERIVED: dict[str, frozenset[str]] = {
    "auction_won": frozenset({"player", "bid"}),
    "talon_revealed": frozenset({"cards"}),
    "contract_fixed": frozenset({"player", "contract"}),
    "give_up": frozenset({"player", "count"}),
    "marriage_declared": frozenset({"player", "suit"}),
    "aces_declared": frozenset({"player"}),
    "trump_changed": frozenset({"suit"}),
    "trick_won": frozenset({"player", "trick", "cards", "points"}),
    "bolt": frozenset({"player", "count"}),
    "barrel_left": frozenset({"player"}),
    "barrel_entered": frozenset({"player"}),
    "deal_scored": frozenset({"points", "deltas", "scores"}),
    "match_won": frozenset({"player"}),
    "match_drawn": frozenset(),
    "redeal": frozenset({"player"}),
}
SEATS = (0, 1, 2)


class _Absent(Exception):
    """A field the derivation reads is not in a state (declared absent, or missing)."""


@dataclass(frozen=True)
class Derived:
    """The events of one step, and what of the expected ones the states cannot tell there:
    ``unsure`` holds event types (``bolt``), a type for one seat (``bolt@1``) or a field of
    a type (``redeal.player``)."""

    events: tuple[dict[str, Any], ...]
    unsure: frozenset[str] = frozenset()


def _get(state: dict[str, Any], name: str) -> Any:
    if name not in state:
        raise _Absent(name)
    return state[name]


def _seat_list(state: dict[str, Any], name: str) -> list[Any]:
    value = _get(state, name)
    if not isinstance(value, list) or len(value) != 3:
        raise _Absent(name)
    return value


def derive(before: dict[str, Any] | None, action: str | None, after: dict[str, Any]) -> Derived:
    """The events of the step from ``before`` (None for a ``deal``) by ``action`` to ``after``."""
    b = before or {}
    unsure: set[str] = set()
    result = _get_or_none(after, "deal_result")
    if isinstance(result, dict) and result.get("kind") == "redeal" and _get_or_none(b, "deal_result") is None:
        claimed = action == "redeal" and "to_act" in b
        unsure.add("redeal.reason")
        if not claimed:
            unsure.add("redeal.player")
        return Derived(({"type": "redeal", "player": b["to_act"] if claimed else None},), frozenset(unsure))
    if before is None:
        if "deal_result" not in after:
            unsure.add("redeal")
        return Derived((), frozenset(unsure))
    events: list[dict[str, Any]] = []
    for family, types in _FAMILIES:
        try:
            events += family(b, action or "", after, unsure)
        except _Absent:
            unsure.update(types)
    return Derived(tuple(_ordered(events)), frozenset(unsure))


def _get_or_none(state: dict[str, Any], name: str) -> Any:
    return state.get(name)


def _auction(b: dict[str, Any], action: str, a: dict[str, Any], unsure: set[str]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    if _get(b, "declarer") is None and _get(a, "declarer") is not None:
        events.append({"type": "auction_won", "player": a["declarer"], "bid": _get(a, "high_bid")})
    return events


def _talon(b: dict[str, Any], action: str, a: dict[str, Any], unsure: set[str]) -> list[dict[str, Any]]:
    if _get(b, "talon_shown") is False and _get(a, "talon_shown") is True:
        return [{"type": "talon_revealed", "cards": _get(a, "talon")}]
    return []


def _declarer_acts(b: dict[str, Any], action: str, a: dict[str, Any], unsure: set[str]) -> list[dict[str, Any]]:
    if _get(b, "contract") is None and _get(a, "contract") is not None:  # fixed, or set by the rules (no contract step)
        return [{"type": "contract_fixed", "player": _get(a, "declarer"), "contract": a["contract"]}]
    if action == "give_up":
        player = _get(b, "to_act")
        counts = _seat_list(a, "give_ups")
        return [{"type": "give_up", "player": player, "count": counts[player] if player in SEATS else None}]
    return []


def _marriages(b: dict[str, Any], action: str, a: dict[str, Any], unsure: set[str]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    old, new = _seat_list(b, "marriages"), _seat_list(a, "marriages")
    for seat in SEATS:
        if not isinstance(old[seat], list) or not isinstance(new[seat], list):
            raise _Absent("marriages")
        for suit in new[seat][len(old[seat]):]:
            if suit == "aces":
                events.append({"type": "aces_declared", "player": seat})
                unsure.add("aces_declared.points")
            else:
                events.append({"type": "marriage_declared", "player": seat, "suit": suit})
                unsure.add("marriage_declared.points")
    return events


def _trick(b: dict[str, Any], action: str, a: dict[str, Any], unsure: set[str]) -> list[dict[str, Any]]:
    old, new = _seat_list(b, "tricks_won"), _seat_list(a, "tricks_won")
    grown = [seat for seat in SEATS if new[seat] != old[seat]]
    events: list[dict[str, Any]] = []
    if len(grown) == 1 and new[grown[0]] == old[grown[0]] + 1:
        seat = grown[0]
        words = action.split()
        played = [entry.get("card") for entry in _get(b, "trick") if isinstance(entry, dict)]
        points_before, points_after = _seat_list(b, "card_points"), _seat_list(a, "card_points")
        events.append({"type": "trick_won", "player": seat, "trick": sum(new),
                       "cards": played + words[1:2], "points": points_after[seat] - points_before[seat]})
    elif grown:
        unsure.add("trick_won")  # not one trick more: nothing the states tell
    if _get(a, "trump") is not None and _get(a, "trump") != _get(b, "trump"):
        events.append({"type": "trump_changed", "suit": a["trump"], "after_trick": bool(events)})
    return events


def _deal_end(b: dict[str, Any], action: str, a: dict[str, Any], unsure: set[str]) -> list[dict[str, Any]]:
    result = _get(a, "deal_result")
    if not isinstance(result, dict) or _get(b, "deal_result") is not None or result.get("kind") == "redeal":
        return []
    events: list[dict[str, Any]] = []
    try:
        events += _bolts(b, a, unsure)
    except _Absent:
        unsure.add("bolt")
    try:
        events += _barrel(b, a, unsure)
    except _Absent:
        unsure.update(("barrel_left", "barrel_entered"))
    events.append({"type": "deal_scored", "points": result.get("points"), "deltas": result.get("deltas"),
                   "scores": _get(a, "scores")})
    return events


def _bolts(b: dict[str, Any], a: dict[str, Any], unsure: set[str]) -> list[dict[str, Any]]:
    old, new = _seat_list(b, "bolts"), _seat_list(a, "bolts")
    events: list[dict[str, Any]] = []
    for seat in SEATS:
        if isinstance(old[seat], int) and new[seat] == old[seat] + 1:
            events.append({"type": "bolt", "player": seat, "count": new[seat]})
        else:  # no bolt, or one whose penalty reset the counter (or a count of 1): the states cannot tell
            unsure.add(f"bolt@{seat}")
    return events


def _barrel(b: dict[str, Any], a: dict[str, Any], unsure: set[str]) -> list[dict[str, Any]]:
    old, new = _seat_list(b, "barrel"), _seat_list(a, "barrel")
    left, entered = [], []
    for seat in SEATS:
        was, now = _on(old[seat]), _on(new[seat])
        if was and not now:
            left.append({"type": "barrel_left", "player": seat})
        elif now and not was:
            entered.append({"type": "barrel_entered", "player": seat})
        else:  # a visit that began and ended in the deal (or the reverse) leaves no trace
            unsure.update((f"barrel_left@{seat}", f"barrel_entered@{seat}"))
    unsure.update(("barrel_left.reason", "barrel_left.penalty"))
    if left and entered:  # a visit ends before an arrival (won) or after it (knocked off): the order is unknown
        unsure.add("barrel_left")
    return left + entered


def _on(seat: Any) -> bool:
    if not isinstance(seat, dict) or not isinstance(seat.get("on"), bool):
        raise _Absent("barrel")
    return bool(seat["on"])


def _match(b: dict[str, Any], action: str, a: dict[str, Any], unsure: set[str]) -> list[dict[str, Any]]:
    if _get(a, "phase") != Phase.MATCH_OVER or _get(b, "phase") == Phase.MATCH_OVER:
        return []
    winner = _get(a, "winner")
    if winner is not None:
        return [{"type": "match_won", "player": winner}]
    unsure.add("match_drawn.players")
    return [{"type": "match_drawn"}]


_FAMILIES = (
    (_auction, ("auction_won",)),
    (_talon, ("talon_revealed",)),
    (_declarer_acts, ("contract_fixed", "give_up")),
    (_marriages, ("marriage_declared", "aces_declared")),
    (_trick, ("trick_won", "trump_changed")),
    (_deal_end, ("bolt", "barrel_left", "barrel_entered", "deal_scored")),
    (_match, ("match_won", "match_drawn")),
)


def _ordered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events in the order things happen: a trump taking effect when its trick closes
    comes after that trick's ``trick_won``, one declared with a lead after the declaration."""
    ordered = [e for e in events if e["type"] != "trump_changed"]
    for event in events:
        if event["type"] == "trump_changed":
            after_trick = event.pop("after_trick")
            at = next((i + 1 for i, e in enumerate(ordered) if e["type"] == ("trick_won" if after_trick else "marriage_declared")),
                      None)
            if at is None:
                at = next((i for i, e in enumerate(ordered) if e["type"] == "trick_won"), len(ordered))
            ordered.insert(at, event)
    return ordered


def is_unsure(event: Any, unsure: Iterable[str]) -> bool:
    """Whether an expected event is one the states cannot tell at this step."""
    kind = event.get("type") if isinstance(event, dict) else None
    marks = set(unsure)
    if not isinstance(kind, str) or kind not in DERIVED or kind in marks:
        return True
    if "player" not in event:  # any seat's: unsure when some seat's is
        return any(mark.startswith(f"{kind}@") for mark in marks)
    return f"{kind}@{event.get('player')}" in marks


def told(event: dict[str, Any], unsure: Iterable[str]) -> tuple[dict[str, Any], list[str]]:
    """An expected event as far as the states tell it, and the fields left out of it."""
    kind = str(event.get("type"))
    marks = set(unsure)
    kept = {key: value for key, value in event.items()
            if key == "type" or (key in DERIVED.get(kind, frozenset()) and f"{kind}.{key}" not in marks)}
    return kept, sorted(f"{kind}.{key}" for key in event if key not in kept)


def expected_told(expected: Iterable[dict[str, Any]], unsure: Iterable[str]) -> tuple[list[dict[str, Any]], set[str]]:
    """Expected events as far as the states tell them at this step, and what is unchecked
    (``event TYPE`` for an event left out, ``event TYPE.FIELD`` for a field)."""
    marks = frozenset(unsure)
    kept: list[dict[str, Any]] = []
    unchecked: set[str] = set()
    for event in expected:
        if is_unsure(event, marks):
            unchecked.add(f"event {event.get('type')}")
            continue
        shown, dropped = told(event, marks)
        kept.append(shown)
        unchecked.update(f"event {field}" for field in dropped)
    return kept, unchecked
