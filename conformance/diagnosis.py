"""Root causes of failures: a signature for each failed check, the knobs that decide it, and
groups of failing runs that share a signature (issue 11).

A signature is built from the check that failed, never from the case's own labels: its kind
(``legal``, ``refusal``, ``unchanged``, ``event``, ``state``, ``to_act``, ``refused``), the
phase, and the difference normalised so that the same rule mistake met in a hundred deals
reads the same ("legal[play]: unexpected cards that follow without beating"). The knobs come
from ``spec/diagnosis.yaml``, expanded through the profile schema's rule sections.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import yaml

from spec import SPEC_DIR
from variants.schema import rule_sections

DIAGNOSIS_FILE = SPEC_DIR / "diagnosis.yaml"
RANKS = ("A", "10", "K", "Q", "J", "9")  # high to low, DESIGN.md card order
AMOUNT_WORDS = ("bid", "contract")
# What each category of a play action means, in the words a signature shows.
PLAY_WORDS = {
    "lead": "leads", "marriage": "declare a marriage", "aces": "declare four aces",
    "beat": "follow and beat the card winning the trick", "no_beat": "follow without beating the card winning the trick (the duty to beat)",
    "under_trump": "follow under a winning trump", "trump": "trump", "overtrump": "overtrump",
    "undertrump": "trump under a higher trump", "discard_holding_suit": "discard while holding the suit led",
    "discard_void": "discard while void in the suit led",
}


@dataclass(frozen=True)
class Finding:
    """One failed check of a case: where, what, and why (signature and knobs)."""

    check: str
    signature: str
    knobs: tuple[str, ...]
    message: str
    expected: Any
    actual: Any
    where: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"check": self.check, "signature": self.signature, "knobs": list(self.knobs), "message": self.message,
                **dict(self.where), "expected": self.expected, "actual": self.actual}


# --- knobs -----------------------------------------------------------------------------

@functools.cache
def _table() -> dict[str, Any]:
    data = yaml.safe_load(DIAGNOSIS_FILE.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def expand(entries: Iterable[str]) -> tuple[str, ...]:
    """Knob names: a ``section`` entry stands for every knob the schema has in it."""
    sections = rule_sections()
    found: list[str] = []
    for entry in entries:
        section, _, knob = entry.partition(".")
        names = [f"{section}.{knob}"] if knob else [f"{section}.{name}" for name in sections.get(section, [])]
        found.extend(name for name in names if name not in found)
    return tuple(found)


def knobs_for(kind: str, *keys: str) -> tuple[str, ...]:
    """The knobs of the most specific entry ``kind.keys...`` in spec/diagnosis.yaml."""
    table = _table()
    node: Any = table.get(kind)
    if node is None:
        return expand(table.get("default") or [])
    best: Any = node.get("default", []) if isinstance(node, dict) else node
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            break
        node = node[key]
        best = node.get("default", []) if isinstance(node, dict) else node
    return expand(best if isinstance(best, list) else [])


# --- signatures --------------------------------------------------------------------------

def action_phase(action: str) -> str:
    """The phase an action belongs to (DESIGN.md, Action strings)."""
    word = action.split(" ", 1)[0]
    return {"bid": "auction", "pass": "auction", "give": "exchange", "contract": "contract", "play": "play",
            "redeal": "claim", "no_redeal": "claim"}.get(word, "exchange" if word == "give_up" else "unknown")


def _amount(action: str) -> int | None:
    parts = action.split()
    return int(parts[1]) if len(parts) == 2 and parts[1].isdigit() else None


def _amount_category(action: str, others: Sequence[str]) -> str:
    """``bid_above``/``bid_below``/``bid_between``: where an amount lies against the other side's."""
    word, amount = action.split(" ", 1)[0], _amount(action)
    amounts = [a for a in (_amount(o) for o in others if o.startswith(word + " ")) if a is not None]
    if amount is None or not amounts:
        return f"{word}_above" if amount is not None else word
    if amount > max(amounts):
        return f"{word}_above"
    if amount < min(amounts):
        return f"{word}_below"
    return f"{word}_between"


def _card(text: str) -> tuple[str, str]:
    return text[:-1], text[-1]


def _beats(card: str, best: str, led: str, trump: str | None) -> bool:
    (rank, suit), (best_rank, best_suit) = _card(card), _card(best)
    if suit == best_suit:
        return RANKS.index(rank) < RANKS.index(best_rank)
    return suit == trump or (suit == led and best_suit not in (led, trump))


def _play_category(action: str, state: Mapping[str, Any] | None) -> str:
    parts = action.split()
    if parts[-1] in ("marriage", "aces"):
        return parts[-1]
    trick = (state or {}).get("trick")
    if not isinstance(trick, list) or not trick or len(parts) < 2:
        return "lead"
    try:
        cards = [str(entry["card"]) for entry in trick]
        led, trump = cards[0][-1], state.get("trump") if state else None
        best = cards[0]
        for card in cards[1:]:
            if _beats(card, best, led, trump):
                best = card
        hand = (state or {}).get("hands", [])[int(state["to_act"])] if state else []
    except (KeyError, TypeError, ValueError, IndexError):
        return "lead"
    card = parts[1]
    suit = card[-1]
    if suit == led:
        if best[-1] != led:
            return "under_trump"
        return "beat" if _beats(card, best, led, trump) else "no_beat"
    if suit == trump:
        if best[-1] == trump:
            return "overtrump" if _beats(card, best, led, trump) else "undertrump"
        return "trump"
    holds_suit = isinstance(hand, list) and any(isinstance(c, str) and c.endswith(led) for c in hand)
    return "discard_holding_suit" if holds_suit else "discard_void"


def _category(action: str, others: Sequence[str], state: Mapping[str, Any] | None) -> str:
    word = action.split(" ", 1)[0]
    if word in AMOUNT_WORDS:
        return _amount_category(action, others)
    if word == "play":
        return _play_category(action, state)
    return word


def _describe_category(category: str) -> str:
    if category in PLAY_WORDS:
        return f"cards that {PLAY_WORDS[category]}" if category not in ("marriage", "aces", "lead") else PLAY_WORDS[category]
    word, _, where = category.rpartition("_")
    if word in AMOUNT_WORDS and where in ("above", "below", "between"):
        side = {"above": "above the highest", "below": "below the lowest", "between": "between the"}[where]
        return f"{word}s {side} other amounts"
    return category


def legal_finding(phase: str, expected: Sequence[str], actual: Sequence[str],
                  state: Mapping[str, Any] | None) -> tuple[str, tuple[str, ...]]:
    """Signature and knobs of a legal-set difference, from what is missing and unexpected."""
    missing = sorted(set(expected) - set(actual))
    unexpected = sorted(set(actual) - set(expected))
    parts: list[str] = []
    categories: list[str] = []
    for label, actions, others in (("missing", missing, unexpected or expected), ("unexpected", unexpected, expected)):
        found = sorted({_category(a, others, state) for a in actions})
        categories += found
        parts += [f"{label} {_describe_category(c)}" for c in found]
    knobs: list[str] = []
    for category in categories or ["default"]:
        knobs += [k for k in knobs_for("legal", phase, category) if k not in knobs]
    return f"legal[{phase}]: " + "; ".join(parts), tuple(knobs)


def event_label(event: Any) -> str:
    """``barrel_left(failed_contract)``: the type, with its reason where it has one."""
    if not isinstance(event, dict):
        return repr(event)[:40]
    label = str(event.get("type"))
    return label + (f"({event['reason']})" if isinstance(event.get("reason"), str) else "")


def refusal_label(reply_refusal: Any) -> str:
    if isinstance(reply_refusal, dict):
        return str(reply_refusal.get("reason"))
    return "no refusal"


# --- groups ----------------------------------------------------------------------------

def groups(failures: Iterable[tuple[str, Sequence[Mapping[str, Any]], str, str]]) -> list[dict[str, Any]]:
    """Failing runs grouped by signature, largest first.

    ``failures`` gives, per failing run, its ``id@profile``, its findings (as JSON), and the
    signature and message used for a run that failed without a finding (error, timeout).
    A run counts once in every group whose signature it shows; ``first`` counts the runs
    whose first finding it is, the likeliest root cause.
    """
    runs: dict[str, list[str]] = {}
    first: Counter[str] = Counter()
    knobs: dict[str, list[str]] = {}
    example: dict[str, str] = {}
    for run, findings, fallback, fallback_message in failures:
        signatures = [(str(f.get("signature")), list(f.get("knobs") or []), str(f.get("message", ""))) for f in findings]
        if not signatures:
            signatures = [(fallback, [], fallback_message)]
        first[signatures[0][0]] += 1
        for signature, its_knobs, message in signatures:
            members = runs.setdefault(signature, [])
            if run not in members:
                members.append(run)
            knobs.setdefault(signature, its_knobs)
            example.setdefault(signature, f"{run}: {message}")
    ordered = sorted(runs, key=lambda s: (-len(runs[s]), -first[s], s))
    return [{"signature": s, "knobs": knobs[s], "count": len(runs[s]), "first": first[s],
             "cases": runs[s], "example": example[s]} for s in ordered]


def outcome_signature(outcome: str, message: str) -> str:
    """A signature for a run with no finding (error, timeout, case bug): digits folded."""
    head = message.split(":", 1)[0] if outcome != "case_bug" else "the transcript is wrong"
    return f"{outcome}: {re.sub(r'[0-9]+(?:[.][0-9]+)?', 'N', head)[:120]}"
