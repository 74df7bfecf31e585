"""Replay a transcript's actions under other profiles, and ``thousand replay``.

A transcript records one deal sequence under its own profile. Replaying its actions under
another profile shows what that profile's rules do to the same cards and the same choices:
which step becomes illegal, who wins each trick, how the deal is scored.

The replay talks to the bundled reference implementation over protocol v1, exactly as the
runner does (one process, reused: each ``match`` starts a fresh match). Steps marked
``refused:`` are skipped (they are meant to be refused under the transcript's own profile).
Three adaptations keep a replay about rules rather than spelling; each one is noted in the
result, never silent:

- a redeal claim window the transcript does not know is waived (``no_redeal`` inserted);
- a ``no_redeal`` for a window the profile does not open is dropped;
- ``play X marriage`` becomes ``play X`` where marriages are declared automatically, and
  ``play X`` becomes ``play X marriage`` where the transcript's own profile declared it
  automatically and the replay profile wants it said.

The first action a profile refuses ends that profile's replay: the stop (``Stop``) names the
deal, the step, the action and the reason.
"""

from __future__ import annotations

import argparse
import difflib
import itertools
import json
import os
import shlex
import sys
import textwrap
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import variants
from conformance.corpus.transcripts import CASES_DIR, CaseBug, Transcript, TranscriptError, discover, load
from conformance.harness import outputs
from conformance.harness.process import ProtocolFailure
from conformance.harness.session import Errored, Session, Skipped, judge
from conformance.harness.runner import REFERENCE_COMMAND
from conformance.rulesets import explain
from spec.vocabulary import ExitCode, Phase

TIMEOUT = 10.0
DEFAULT_MATCH_STATE: dict[str, Any] = {
    "scores": [0, 0, 0], "bolts": [0, 0, 0], "give_ups": [0, 0, 0],
    "barrel": [{"on": False, "attempts": 0, "failed_visits": 0} for _ in range(3)],
}
CLAIM_ACTIONS = frozenset({"redeal", "no_redeal"})
MAX_INSERTED_WAIVERS = 6  # three seats, two windows at most before one action
# The state fields that make up a deal's result, in display order.
RESULT_FIELDS = ("outcome", "contract", "declarer", "tricks", "trump", "points", "deltas", "scores",
                 "events", "winner")


class ReplayError(Exception):
    """Bad input to a replay (unknown case, unknown profile): the message says what and why."""


# --- results ---------------------------------------------------------------------------

@dataclass
class Stop:
    """Where a profile's replay stopped before the transcript's end, and why (not a wrong answer:
    the profile's rules end the transcript there; a report writes it as ``divergence``)."""

    deal: int
    step: int | None  # the transcript's step number (1-based, refused steps counted), None between deals
    action: str | None
    reason: str
    message: str = ""

    def text(self, detail: bool = False) -> str:
        """``deal 1 step 3 `bid 105` refused: bid_off_step``; with the implementation's message if ``detail``."""
        if self.step is None:
            return f"deal {self.deal}: {self.message or self.reason}"
        return f"deal {self.deal} step {self.step} `{self.action}` refused: {self.reason}" + (
            f" ({self.message})" if self.message and detail else "")


@dataclass
class DealRecord:
    """What one deal came to under one profile (also for a deal cut short)."""

    number: int
    phase: str = ""
    contract: Any = None
    declarer: Any = None
    high_bid: Any = None
    tricks: list[Any] = field(default_factory=list)  # winner of each trick, in order
    trumps: list[str] = field(default_factory=list)  # "D@2": suit and the trick it became trump
    marriages: list[list[str]] = field(default_factory=list)
    card_points: list[Any] = field(default_factory=list)
    kind: str | None = None
    made: bool | None = None
    points: list[Any] | None = None
    deltas: list[Any] | None = None
    scores: list[Any] = field(default_factory=list)
    events: list[str] = field(default_factory=list)  # events of note, in words
    winner: Any = None
    raw_events: list[dict[str, Any]] = field(default_factory=list)
    scores_before: list[Any] = field(default_factory=list)
    barrel_before: list[bool] = field(default_factory=list)  # who was on the barrel when the deal began
    applied: list[str] = field(default_factory=list)  # the actions the implementation accepted, in order
    state_after: dict[str, Any] = field(default_factory=dict)

    def cells(self) -> dict[str, str]:
        """The result fields as display strings (equal strings mean equal results)."""
        outcome = self.kind or f"unfinished ({self.phase})"
        if self.kind == "played":
            outcome = "made" if self.made else "failed"
        return {
            "outcome": outcome,
            "contract": show(self.contract),
            "declarer": show(self.declarer),
            "tricks": " ".join(show(w) for w in self.tricks) or "-",
            "trump": ", ".join(self.trumps) or "-",
            "points": show(self.points),
            "deltas": show(self.deltas),
            "scores": show(self.scores),
            "events": "; ".join(self.events) or "-",
            "winner": "-" if self.winner is None else f"seat {show(self.winner)}",
        }


@dataclass
class Replay:
    """One transcript replayed under one profile."""

    case_id: str
    profile: str
    deals: list[DealRecord] = field(default_factory=list)
    stop: Stop | None = None
    notes: list[str] = field(default_factory=list)
    legal: dict[str, list[str]] = field(default_factory=dict)  # "deal.step" -> legal set before it
    error: str | None = None  # the implementation failed (not a rules result)

    def stop_text(self, detail: bool = False) -> str:
        if self.error:
            return f"error: {self.error}"
        return self.stop.text(detail) if self.stop else "all steps legal"

    def result_cells(self) -> dict[str, str]:
        """Every result field of every deal, keyed "deal N field", plus the stop."""
        cells = {"replay": self.stop_text()}
        for deal in self.deals:
            for name, value in deal.cells().items():
                cells[f"deal {deal.number} {name}"] = value
        return cells

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for deal in data["deals"]:
            for bulky in ("raw_events", "state_after", "applied"):
                deal.pop(bulky, None)
        data["divergence"] = None if self.stop is None else {**asdict(self.stop), "text": self.stop.text(detail=True)}
        return data


def show(value: Any) -> str:
    """A value as the docs write it: lists in brackets, null as '-', halves as 57.5."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return "[" + ", ".join(show(item) for item in value) + "]"
    return str(value)


# --- events in words ---------------------------------------------------------------------

def describe_event(event: dict[str, Any]) -> str | None:
    """An event of note in a few words; None for the routine ones (tricks, bids, ...)."""
    kind, player = event.get("type"), event.get("player")
    words: dict[str, Any] = {
        "redeal": lambda: f"redeal ({event.get('reason')}, seat {player})",
        "give_up": lambda: f"seat {player} gives up (#{event.get('count')})",
        "marriage_declared": lambda: f"seat {player} marriage {event.get('suit')} {show(event.get('points'))}",
        "aces_declared": lambda: f"seat {player} four aces {show(event.get('points'))}",
        "bolt": lambda: f"seat {player} bolt #{event.get('count')}",
        "bolt_penalty": lambda: f"seat {player} bolt penalty -{show(event.get('penalty'))}",
        "barrel_entered": lambda: f"seat {player} on the barrel",
        "barrel_left": lambda: f"seat {player} leaves the barrel ({event.get('reason')}"
                               + (f", -{show(event.get('penalty'))}" if event.get("penalty") else "") + ")",
        "score_reset": lambda: f"seat {player} score reset to 0",
        "dump": lambda: f"seat {player} dump (555 -> 0)",
        "match_won": lambda: f"seat {player} wins the match",
        "match_drawn": lambda: f"match drawn ({show(event.get('players'))})",
    }
    maker = words.get(kind)  # type: ignore[arg-type]
    return maker() if maker else None


# --- profiles and cases -------------------------------------------------------------------

FOLD_FROM = 3  # a family with this many options or more in one list is written as a count


def _families(names: Sequence[str]) -> list[tuple[str, bool, list[str], list[str]]]:
    """(base, base listed, options listed, all its options) per family, in listing order; a
    name that is no bundled profile (a house file) is a family of its own."""
    listing = {info.name: [o.name for o in info.options] for info in variants.list_profiles()}
    families: dict[str, tuple[bool, list[str]]] = {}
    for name in names:
        base, _, option = name.partition("+")
        listed, options = families.setdefault(base if base in listing else name, (False, []))
        if option and base in listing:
            options.append(option)
        else:
            families[base if base in listing else name] = (True, options)
    return [(base, listed, options, listing.get(base, [])) for base, (listed, options) in families.items()]


def compact_names(names: Sequence[str]) -> str:
    """Profile names folded for a heading or a table cell: ``classic + 35 options``, or
    ``classic + all 41 options``; a family with few options listed is written out."""
    parts: list[str] = []
    for base, listed, options, every in _families(names):
        whole = listed and bool(options) and len(options) == len(every)
        if len(options) < FOLD_FROM and not whole:
            parts += ([base] if listed else []) + [f"{base}+{option}" for option in options]
            continue
        count = f"all {len(every)}" if len(options) == len(every) else str(len(options))
        parts.append(f"{base} + {count} options" if listed else f"{count} options of {base}")
    return ", ".join(parts)


def folded_members(names: Sequence[str]) -> list[str]:
    """What each folded family of ``compact_names`` holds, in words (empty when nothing is folded)."""
    lines = []
    for base, listed, options, every in _families(names):
        if len(options) < FOLD_FROM or len(options) == len(every):
            continue
        missing = [option for option in every if option not in options]
        if len(missing) <= len(options):
            lines.append(f"{base}'s options but {', '.join(missing)}")
        else:
            lines.append(f"of {base}'s options: {', '.join(options)}")
    return lines


def parse_profiles(text: str) -> list[str]:
    """``all`` or a comma-separated list, each checked by resolving it."""
    names = variants.all_names() if text.strip() == "all" else [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise ReplayError("--profiles: expected 'all' or a comma-separated list of profiles (name or name+option)")
    for name in names:
        resolved(name)
    return names


def resolved(name: str) -> variants.ResolvedProfile:
    try:
        return variants.resolve(name)
    except variants.ProfileError as exc:
        raise ReplayError(f"profile {name!r}: {exc}") from None


def hand_written_cases() -> list[Transcript]:
    """Every loadable transcript under conformance/cases (case bugs are left out)."""
    return [case for case in discover([CASES_DIR]) if isinstance(case, Transcript)]


def load_case(case_id: str) -> Transcript:
    """The hand-written transcript with this id; ReplayError (with close ids) otherwise."""
    path = CASES_DIR / f"{case_id}.yaml"
    if ".." in case_id.split("/") or not path.is_file():
        known = [case.id for case in discover([CASES_DIR]) if not isinstance(case, CaseBug)]
        close = difflib.get_close_matches(case_id, known, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else "; ids are paths below conformance/cases without .yaml"
        raise ReplayError(f"no transcript {case_id!r}{hint}")
    try:
        return load(path, CASES_DIR)
    except TranscriptError as exc:
        raise ReplayError(str(exc)) from None


# --- the replayer ---------------------------------------------------------------------------

class _Refused(Exception):
    def __init__(self, reply: dict[str, Any]) -> None:
        super().__init__("refused")
        self.reply = reply


class Replayer:
    """Replays transcripts on one reference implementation process (restarted after a failure)."""

    def __init__(self, command: Sequence[str] = REFERENCE_COMMAND, timeout: float = TIMEOUT) -> None:
        self.command, self.timeout = list(command), timeout
        self.impl: Session | None = None
        self._documents: dict[str, dict[str, Any]] = {}

    def __enter__(self) -> Replayer:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        if self.impl is not None:
            self.impl.stop()
            self.impl = None

    def _ask(self, command: str, **fields: Any) -> dict[str, Any]:
        try:
            if self.impl is None:
                self.impl = Session(self.command, self.timeout)
                self.impl.start()
            reply = self.impl.request(command, **fields)
            judge(command, reply)
        except Skipped as exc:
            raise ProtocolFailure(f"{exc.command}: the implementation replied skipped: {exc.reason}") from None
        except Errored as exc:
            raise ProtocolFailure(f"{exc.command}: the implementation replied errored: {exc.text}") from None
        return reply

    def _document(self, profile: str) -> dict[str, Any]:
        if profile not in self._documents:
            self._documents[profile] = resolved(profile).to_document()
        return self._documents[profile]

    def replay(self, case: Transcript, profile: str) -> Replay:
        """The transcript's actions under ``profile``; never raises for a rules difference."""
        result = Replay(case.id, profile)
        try:
            _CaseReplay(self, case, profile, result).run()
        except ProtocolFailure as exc:
            result.error = str(exc)
            if self.impl is not None:
                self.impl.kill()
                self.impl = None
        return result


class _CaseReplay:
    """The requests of one transcript under one profile."""

    def __init__(self, replayer: Replayer, case: Transcript, profile: str, result: Replay) -> None:
        self.replayer, self.case, self.profile, self.result = replayer, case, profile, result
        self.automatic = resolved(profile).value("marriages.declaration") == "automatic"
        self.home_automatic = _declares_automatically(case.profiles[0]) if case.profiles else False

    def run(self) -> None:
        state = {**DEFAULT_MATCH_STATE, **(self.case.match or {})}
        self.replayer._ask("match", profile=self.profile, document=self.replayer._document(self.profile), state=state)
        previous: dict[str, Any] | None = None
        for number, deal in enumerate(self.case.deals, start=1):
            if previous is not None and previous["phase"] != Phase.DEAL_OVER:
                self._stop_between(number, previous)
                return
            if not self._play_deal(number, deal):
                return
            previous = self.replayer._ask("state")["state"]

    def _stop_between(self, number: int, state: dict[str, Any]) -> None:
        if state["phase"] == Phase.MATCH_OVER:
            message = f"not played: the match ended in deal {number - 1} (winner {show(state.get('winner'))})"
            self.result.stop = Stop(number, None, None, "match_over", message)
        else:
            message = f"not played: deal {number - 1} is still in phase {state['phase']} after its last step"
            self.result.stop = Stop(number, None, None, "deal_unfinished", message)

    def _play_deal(self, number: int, deal: dict[str, Any]) -> bool:
        """Play one deal; False when the profile refused a step (the replay stops)."""
        before = self.replayer._ask("state")["state"]
        record = DealRecord(number, scores_before=list(before["scores"]),
                            barrel_before=[bool(seat.get("on")) for seat in before.get("barrel") or []])
        self.result.deals.append(record)
        reply = self.replayer._ask("deal", dealer=deal["dealer"], hands=deal["hands"], talon=deal["talon"])
        record.raw_events.extend(reply.get("events") or [])
        ok = True
        for index, step in enumerate(deal["steps"], start=1):
            if "refused" in step:
                continue
            try:
                self._play_step(number, index, str(step["action"]), record)
            except _Refused as refused:
                detail = refused.reply.get("refusal") or {}
                self.result.stop = Stop(number, index, str(step["action"]),
                                                    str(detail.get("reason", "refused")), str(detail.get("message", "")))
                ok = False
                break
        self._finish(record)
        return ok

    def _play_step(self, number: int, index: int, action: str, record: DealRecord) -> None:
        legal = self._legal_waiving_claims(number, index, action, record)
        self.result.legal[f"{number}.{index}"] = sorted(legal)
        if action == "no_redeal" and "no_redeal" not in legal and self._phase() != Phase.CLAIM:
            self._note(number, index, "this profile opens no claim window here: `no_redeal` dropped")
            return
        action = self._adapt_marriage(number, index, action, legal)
        reply = self.replayer._ask("apply", action=action)
        if not reply["ok"] and (reply.get("refusal") or {}).get("reason") == "marriage_declaration_automatic":
            plain = action.removesuffix(" marriage")
            self._note(number, index, f"marriages are declared automatically here: `{action}` played as `{plain}`")
            action = plain
            reply = self.replayer._ask("apply", action=plain)
        if not reply["ok"]:
            raise _Refused(reply)
        record.applied.append(action)
        record.raw_events.extend(reply.get("events") or [])

    def _legal_waiving_claims(self, number: int, index: int, action: str, record: DealRecord) -> list[str]:
        """The legal set before the step, after waiving claim windows the transcript does not know."""
        for _ in range(MAX_INSERTED_WAIVERS):
            legal = [a for a in self.replayer._ask("legal")["actions"] if isinstance(a, str)]
            if not legal or not set(legal) <= CLAIM_ACTIONS or action in CLAIM_ACTIONS:
                return legal
            seat = self._state().get("to_act")
            self._note(number, index, f"seat {show(seat)} may claim a redeal under this profile; waived (`no_redeal` inserted)")
            reply = self.replayer._ask("apply", action="no_redeal")
            if not reply["ok"]:
                raise _Refused(reply)
            record.applied.append("no_redeal")
            record.raw_events.extend(reply.get("events") or [])
        return legal

    def _adapt_marriage(self, number: int, index: int, action: str, legal: list[str]) -> str:
        declared = f"{action} marriage"
        if (self.home_automatic and not self.automatic and action.startswith("play ")
                and len(action.split()) == 2 and declared in legal):
            self._note(number, index, f"the transcript's profile declares marriages automatically: `{action}` played as `{declared}`")
            return declared
        return action

    def _phase(self) -> str:
        return str(self._state().get("phase"))

    def _state(self) -> dict[str, Any]:
        state: dict[str, Any] = self.replayer._ask("state")["state"]
        return state

    def _note(self, number: int, index: int, text: str) -> None:
        self.result.notes.append(f"deal {number} step {index}: {text}")

    def _finish(self, record: DealRecord) -> None:
        record.state_after = self._state()
        fill_record(record, record.state_after)


def _declares_automatically(profile: str) -> bool:
    try:
        return bool(variants.resolve(profile).value("marriages.declaration") == "automatic")
    except variants.ProfileError:
        return False


def fill_record(record: DealRecord, state: dict[str, Any]) -> None:
    """Complete a deal record from the state after its last step and the events seen."""
    record.phase = str(state.get("phase"))
    record.contract, record.declarer = state.get("contract"), state.get("declarer")
    record.high_bid = state.get("high_bid")
    record.marriages = state.get("marriages") or []
    record.card_points = state.get("card_points") or []
    record.scores, record.winner = state.get("scores") or [], state.get("winner")
    result = state.get("deal_result")
    if isinstance(result, dict):
        record.kind, record.made = result.get("kind"), result.get("made")
        record.points, record.deltas = result.get("points"), result.get("deltas")
    trick = 1
    for event in record.raw_events:
        kind = event.get("type")
        if kind == "trick_won":
            record.tricks.append(event.get("player"))
            trick = int(event.get("trick", trick)) + 1
        elif kind == "trump_changed":
            record.trumps.append(f"{event.get('suit')}@{trick}")
        words = describe_event(event)
        if words:
            record.events.append(words)


# --- comparing replays --------------------------------------------------------------------

def differing_fields(replays: Sequence[Replay]) -> list[str]:
    """The result cells (``replay``, ``deal N field``) that are not the same under every profile."""
    cells = [replay.result_cells() for replay in replays]
    keys: list[str] = []
    for one in cells:
        keys.extend(key for key in one if key not in keys)
    return [key for key in keys if len({one.get(key, "(not reached)") for one in cells}) > 1]


def legal_differences(replays: Sequence[Replay], limit: int = 6, collapse_bids: bool = False) -> list[str]:
    """Steps reached under several profiles whose legal sets differ, in words.

    With ``collapse_bids``, steps that differ only in bid amounts (a different bid grid,
    which shows at nearly every auction step) become one counting line.
    """
    lines: list[str] = []
    bid_steps = 0
    steps = sorted({key for replay in replays for key in replay.legal},
                   key=lambda key: tuple(int(part) for part in key.split(".")))
    for key in steps:
        sets = {replay.profile: set(replay.legal[key]) for replay in replays if key in replay.legal}
        if len(sets) < 2 or len({frozenset(s) for s in sets.values()}) == 1:
            continue
        common = set.intersection(*sets.values())
        extras = {profile: sorted(actions - common, key=_action_order) for profile, actions in sets.items()}
        if collapse_bids and all(a.startswith("bid ") for extra in extras.values() for a in extra):
            bid_steps += 1
            continue
        parts = []
        for profile, extra in extras.items():
            shown = ", ".join(extra[:limit]) + (f", ... ({len(extra)} in all)" if len(extra) > limit else "")
            parts.append(f"{profile} also {shown}" if extra else f"{profile} nothing more")
        deal, step = key.split(".")
        lines.append(f"deal {deal} step {step}: " + "; ".join(parts))
    if bid_steps:
        lines.insert(0, f"the legal bid amounts differ at {bid_steps} auction step(s) (bid grid and limits)")
    return lines


def _action_order(action: str) -> tuple[str, int]:
    words = action.split()
    return (words[0], int(words[1]) if len(words) > 1 and words[1].isdigit() else 0)


def group_by_result(replays: Sequence[Replay]) -> list[list[Replay]]:
    """Profiles whose replays came to the same result, in first-seen order."""
    groups: dict[str, list[Replay]] = {}
    for replay in replays:
        key = json.dumps(replay.result_cells(), sort_keys=True)
        groups.setdefault(key, []).append(replay)
    return list(groups.values())


# --- explanations ------------------------------------------------------------------------------

def explain_deal(record: DealRecord, profile: str) -> list[str]:
    """How the deal's numbers follow from its events and the profile's knobs, one line per seat."""
    if record.kind == "redeal":
        return ["redeal: nothing is scored"]
    sums = explain.seat_sums(record, resolved(profile))
    if not sums:
        return [f"the deal did not end (phase {record.phase}): nothing scored"]
    return [entry.text() for entry in sums]


# --- tables ---------------------------------------------------------------------------------

def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]], marked: Iterable[tuple[int, int]] = ()) -> str:
    """A plain-text table; cells at (row, column) in ``marked`` get a trailing ' *'."""
    marks = set(marked)
    body = [[cell + (" *" if (r, c) in marks else "") for c, cell in enumerate(row)] for r, row in enumerate(rows)]
    widths = [max([len(headers[c])] + [len(row[c]) for row in body]) for c in range(len(headers))]
    line = "  ".join(header.ljust(width) for header, width in zip(headers, widths)).rstrip()
    rule = "  ".join("-" * width for width in widths)
    lines = [line, rule] + ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in body]
    return "\n".join(lines)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]], marked: Iterable[tuple[int, int]] = ()) -> str:
    """A Markdown table; cells at (row, column) in ``marked`` are bold."""
    marks = set(marked)

    def cell(text: str, r: int, c: int) -> str:
        text = text.replace("|", "\\|")
        return f"**{text}**" if (r, c) in marks and text else text

    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(cell(text, r, c) for c, text in enumerate(row)) + " |" for r, row in enumerate(rows)]
    return "\n".join(lines)


# --- thousand replay -------------------------------------------------------------------------

def replay_case(case: Transcript, profiles: Sequence[str], replayer: Replayer | None = None) -> list[Replay]:
    """The transcript replayed under each profile (one implementation process for all)."""
    own = replayer or Replayer()
    try:
        return [own.replay(case, profile) for profile in profiles]
    finally:
        if replayer is None:
            own.close()


def _deal_rows(replays: Sequence[list[Replay]], number: int) -> list[list[str]]:
    rows = []
    for group in replays:
        deal = next((d for d in group[0].deals if d.number == number), None)
        cells = deal.cells() if deal else {name: "(not reached)" for name in RESULT_FIELDS}
        rows.append([compact_names([r.profile for r in group]), _stop_cell(group[0], number)] + [cells[name] for name in RESULT_FIELDS if name != "winner"])
    return rows


def _stop_cell(replay: Replay, number: int) -> str:
    """How the replay of this deal went, in a few words."""
    if replay.error:
        return "error (see below)"
    stop = replay.stop
    if stop is None or stop.deal != number:
        return "not reached" if stop is not None and stop.deal < number else "all steps legal"
    if stop.step is None:
        return "not played"
    return f"step {stop.step} `{stop.action}` refused: {stop.reason}"


def _marks(rows: Sequence[Sequence[str]]) -> list[tuple[int, int]]:
    """Cells that differ from the first row's cell in the same column (the profile column aside)."""
    return [(r, c) for r, row in enumerate(rows) for c in range(1, len(row)) if r and row[c] != rows[0][c]]


WIDTH = 100  # the terminal width the text form is laid out for


def render_replay(case: Transcript, replays: Sequence[Replay], markdown: bool = False) -> str:
    """The replays side by side: per deal one entry per group of profiles with the same result
    (a Markdown table row, or in text a lettered block that fits in WIDTH columns)."""
    # the transcript's own profiles first: the other groups are read against them
    home = set(case.profiles)
    groups = group_by_result(sorted(replays, key=lambda replay: replay.profile not in home))
    deal_count = max([len(r.deals) for r in replays] + [len(case.deals)])
    out = [f"# Replay of {case.id}" if markdown else f"Replay of {case.id}", "", case.title, ""]
    if case.description and markdown:
        out += ["What the transcript records under " + ", ".join(case.profiles) + ":", "", case.description.strip(), ""]
    intro = (f"Replayed under {len(replays)} profile(s); profiles with the same result share a "
             + ("row; bold marks a cell that differs from the first row. " if markdown else
                "group; * marks a value that differs from group A. ")
             + "Tricks: the seat that won each trick. Trump: suit@trick it became trump. "
             "Points: card points plus declared marriages and bonuses, before rounding.")
    out += ([intro] if markdown else _wrap(intro, "", "")) + [""]
    for number in range(1, deal_count + 1):
        rows = _deal_rows(groups, number)
        if markdown:
            headers = ["profiles", "replay"] + [name for name in RESULT_FIELDS if name != "winner"]
            out += [f"## Deal {number}", "", markdown_table(headers, rows, _marks(rows)), ""]
        else:
            out += [f"Deal {number}", *_text_blocks(rows), ""]
    out += ["## How each result comes about" if markdown else "How each result comes about", ""]
    for letter, group in zip(_letters(), groups):
        out += _group_explanation(group, markdown, case, groups[0][0].profile, letter)
    return "\n".join(out).rstrip() + "\n"


def _letters() -> Iterator[str]:
    for number in itertools.count():
        yield chr(ord("A") + number % 26) + ("" if number < 26 else str(number // 26))


def _wrap(text: str, first: str, rest: str) -> list[str]:
    return textwrap.wrap(text, width=WIDTH, initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False) or [first.rstrip()]


def _text_blocks(rows: Sequence[Sequence[str]]) -> list[str]:
    """A deal's groups as lettered blocks: the profiles, then the result fields packed into lines."""
    names = ["replay"] + [name for name in RESULT_FIELDS if name != "winner"]
    marks = set(_marks(rows))
    lines: list[str] = []
    for r, (letter, row) in enumerate(zip(_letters(), rows)):
        lines += _wrap(row[0], f"  {letter:<3}", " " * 5)
        fields = [f"{name}: {cell}" + (" *" if (r, c) in marks else "") for c, (name, cell) in enumerate(zip(names, row[1:]), start=1)]
        lines += _pack(fields, " " * 5)
    return lines


def _pack(fields: Sequence[str], indent: str) -> list[str]:
    """Fields on lines of at most WIDTH columns, three spaces apart; a longer field is wrapped."""
    lines: list[str] = []
    current = ""
    for item in fields:
        if current and len(indent) + len(current) + 3 + len(item) <= WIDTH:
            current += "   " + item
            continue
        if current:
            lines.append(indent + current)
        current = item
        if len(indent) + len(item) > WIDTH:
            lines += _wrap(item, indent, indent + "  ")
            current = ""
    return lines + ([indent + current] if current else [])


def _group_explanation(group: Sequence[Replay], markdown: bool, case: Transcript, baseline: str, letter: str) -> list[str]:
    first = group[0]
    names = [r.profile for r in group]
    if markdown:
        lines = [f"### {compact_names(names)}", ""]
        lines += [f"- {words}" for words in folded_members(names)]
        body = explanation_lines(group, case, baseline)
        return lines + [f"- {line}" for line in body] + [""]
    lines = _wrap(f"{letter}  {compact_names(names)}", "", " " * 4)
    lines += [line for words in folded_members(names) for line in _wrap(words, "    (", "     ")]
    if len(lines) > 1 and folded_members(names):
        lines[-1] += ")"
    for line in explanation_lines(group, case, baseline):
        lines += _wrap(line, "    ", "        ")
    return lines + [""]


def explanation_lines(group: Sequence[Replay], case: Transcript, baseline: str) -> list[str]:
    """The group's replay, its rules against the first group, each deal's arithmetic and the notes."""
    first = group[0]
    lines = [f"replay: {first.stop_text(detail=True)}"]
    if first.profile != baseline:
        lines.append(_rules_against(case, first.profile, baseline))
    for deal in first.deals:
        prefix = f"deal {deal.number}: " if len(first.deals) > 1 else ""
        lines += [f"{prefix}{line}" for line in explain_deal(deal, first.profile)]
        if deal.events:
            lines.append(f"{prefix}events: {'; '.join(deal.events)}")
        if deal.winner is not None:
            lines.append(f"{prefix}seat {deal.winner} wins the match")
    return lines + folded_notes(group)


def folded_notes(group: Sequence[Replay]) -> list[str]:
    """The replays' notes, each once, with the profiles it concerns folded."""
    by_note: dict[str, list[str]] = {}
    for replay in group:
        for note in replay.notes:
            by_note.setdefault(note, []).append(replay.profile)
    return [f"{compact_names(profiles)}: {note}" for note, profiles in by_note.items()]


def _rules_against(case: Transcript, profile: str, baseline: str) -> str:
    """The knobs that differ from the first row's profile, those the transcript is about first."""
    mine, theirs = resolved(profile), resolved(baseline)
    differing = [f"{section}.{knob}" for section, knobs in mine.rules.items() for knob in knobs
                 if json.dumps(variants.thaw(knobs[knob]), sort_keys=True)
                 != json.dumps(variants.thaw(theirs.rules.get(section, {}).get(knob)), sort_keys=True)]
    about = [knob for knob in differing if knob in case.knobs]
    words = [f"{knob} {_json(theirs.value(knob))} -> {_json(mine.value(knob))}" for knob in about]
    rest = len(differing) - len(about)
    text = f"rules against {baseline}: " + ("; ".join(words) if words else "none of the knobs this transcript is about differ")
    return text + (f" ({rest} other knob(s) differ: thousand compare {baseline} {profile})" if rest else "")


def _json(value: Any) -> str:
    """A knob value as a profile writes it: a word bare, anything else as JSON (null, true, [..])."""
    plain = variants.thaw(value)
    return plain if isinstance(plain, str) else json.dumps(plain, ensure_ascii=False)


def replay_markdown(case_id: str, profiles: Sequence[str] | str = "all") -> str:
    """The Markdown page of one transcript replayed under ``profiles`` (a list or 'all')."""
    names = parse_profiles(profiles) if isinstance(profiles, str) else list(profiles)
    case = load_case(case_id)
    return render_replay(case, replay_case(case, names), markdown=True)


# --- a house transcript from a replay ---------------------------------------------------------

def house_transcript(case: Transcript, result: Replay, knobs: Sequence[str]) -> dict[str, Any]:
    """The replay of ``case`` under a house profile as a transcript of that profile: the actions
    the implementation accepted, and after each deal its scores and result. The values were
    recorded from the implementation; the description says so and shows the arithmetic for
    the referee to check against the house rules."""
    profile = resolved(result.profile)
    lines = [f"Recorded by `thousand replay {case.id} --profiles {result.profile} --save-case DIR` from "
             "the reference implementation, which plays the rules it is sent: check every expected value "
             f"below against {profile.name}'s rules before relying on it. Replayed from {case.id} "
             f"({case.title}).", ""]
    for deal in result.deals:
        lines += [f"Deal {deal.number}: " + "; ".join(explain_deal(deal, result.profile)) + "."]
    lines += [note for note in result.notes]
    deals = []
    for record, source in zip(result.deals, case.deals):
        result_fields = record.state_after.get("deal_result")
        expect = {"scores": record.state_after.get("scores")}
        if isinstance(result_fields, dict):
            expect["deal_result"] = result_fields
        deals.append({"dealer": source["dealer"], "hands": source["hands"], "talon": source["talon"],
                      "steps": [{"action": action} for action in record.applied], "expect": expect})
    leaf = case.id.split("/")[-1]
    document: dict[str, Any] = {"id": f"{profile.name}/{leaf}", "title": f"{case.title} (under {profile.name})",
                                "description": "\n".join(lines) + "\n", "profiles": [profile.name], "knobs": list(knobs)}
    if case.match:
        document["match"] = case.match
    document["deals"] = deals
    return document


def changed_knobs(house: str) -> list[str]:
    """The knobs a house file sets itself (the rest it inherits): what its transcripts must show."""
    mine = resolved(house)
    return [knob for knob, entry in mine.provenance.items() if entry.get("from") == mine.profile]


def save_case(case: Transcript, result: Replay, folder: Path) -> Path:
    """Write the house transcript below ``folder`` (as FOLDER/HOUSE/CASE.yaml); ReplayError when
    the replay did not run to the end (a refused step has no recorded outcome to check)."""
    if result.error or result.stop:
        raise ReplayError(f"--save-case: the replay under {result.profile} stopped ({result.stop_text()}); "
                          "a transcript needs every step accepted: write this deal for your rules by hand")
    import yaml

    house = resolved(result.profile)
    about = [knob for knob in changed_knobs(result.profile) if knob not in variants.inert_knobs(house)]
    document = house_transcript(case, result, about or list(case.knobs))
    path = folder / house.name / f"{case.id.split('/')[-1]}.yaml"
    if os.path.lexists(path):  # a dangling link too: never written through
        raise ReplayError(f"--save-case: {path} exists; not overwritten")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        outputs.write_atomically(path, yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100,
                                                      default_flow_style=None), exclusive=True)
    except OSError as exc:  # an OutputError names the file
        raise ReplayError(f"--save-case: {exc}" if isinstance(exc, outputs.OutputError)
                          else f"--save-case: cannot write {path}: {exc.strerror or exc}") from None
    return path


def verify_saved_command(folder: Path, profile: str) -> str:
    """The command that checks a saved house transcript: a house file is given by --rules (a
    transcript names its profile, which only --rules can supply for a file), a bundled profile
    by --profile."""
    where = shlex.quote(str(folder))
    if profile.endswith((".yaml", ".yml")):
        return f"thousand verify --cases {where} --rules {shlex.quote(profile)}"
    return f"thousand verify --cases {where} --profile {shlex.quote(profile)}"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "replay", help="replay one transcript under several profiles, side by side",
        description="Replay one hand-written transcript's actions under each listed profile (with the bundled "
                    "reference implementation) and show each profile's result; a profile that refuses a step "
                    "stops there, with the reason.")
    parser.add_argument("case_id", metavar="CASE_ID", help="transcript id, e.g. gambler-club/scoring/worked-example-contract-160-made")
    parser.add_argument("--profiles", "--profile", default="all", metavar="all|P1,P2",
                        help="'all' (every profile and option, the default) or a comma-separated list")
    parser.add_argument("--save-case", type=Path, metavar="DIR",
                        help="with one profile (a house file): write the replay as a transcript of that profile "
                             "under DIR/PROFILE/ (the outcomes recorded from the reference, to be checked), for "
                             "thousand verify --cases DIR --rules FILE")
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print JSON")
    form.add_argument("--markdown", action="store_true", help="print Markdown")
    parser.set_defaults(func=main)


def main(args: argparse.Namespace) -> int:
    try:
        names = parse_profiles(args.profiles)
        case = load_case(args.case_id)
    except ReplayError as exc:
        print(f"thousand replay: {exc}", file=sys.stderr)
        return ExitCode.USAGE
    if args.save_case is not None and len(names) != 1:
        print("thousand replay: --save-case needs exactly one profile (--profiles ./house.yaml)", file=sys.stderr)
        return ExitCode.USAGE
    replays = replay_case(case, names)
    if args.save_case is not None and not replays[0].error:
        try:
            path = save_case(case, replays[0], args.save_case)
        except (ReplayError, OSError) as exc:
            print(f"thousand replay: {exc}", file=sys.stderr)
            return ExitCode.FAILED
        print(f"wrote {path}: check its expected values against your rules; then "
              f"{verify_saved_command(args.save_case, names[0])}", file=sys.stderr)
    if args.json:
        print(json.dumps({"case": case.id, "title": case.title, "replays": [r.to_json() for r in replays]}, indent=2))
    else:
        print(render_replay(case, replays, markdown=args.markdown), end="")
    return ExitCode.FAILED if any(r.error for r in replays) else ExitCode.PASSED
