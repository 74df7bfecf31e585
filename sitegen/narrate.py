"""Render a transcript as a readable deal: hands, auction, talon, tricks, scores.

The narrator follows the transcript's own actions. It needs only who plays when and who
wins a trick, which it derives from the action strings and two knobs (marriage
declaration and when trump takes effect): a display aid, not a rules engine. Where a
transcript stops early, the page shows what was played.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from variants.prose import SUIT_SYMBOLS
from spec.vocabulary import CARD_POINTS, RANKS, SUITS


def _reasons(refused: Any) -> str:
    """A step's ``refused``: one reason, or the several that apply (any one is right)."""
    return " or ".join(f"`{r}`" for r in (refused if isinstance(refused, list) else [refused]))


def split_card(code: str) -> tuple[str, str]:
    return code[:-1], code[-1]


def pretty(code: str) -> str:
    rank, suit = split_card(code)
    return f"{rank}{SUIT_SYMBOLS.get(suit, suit)}"


CARD_CODE = re.compile(r"(?<![\w-])(A|10|K|Q|J|9)([SCDH])(?![\w-])")


def symbolize(text: str) -> str:
    """Card codes in running text shown with suit symbols: `10D` -> `10♦`."""
    return CARD_CODE.sub(lambda m: m.group(1) + SUIT_SYMBOLS[m.group(2)], text)


def prose_paragraphs(text: str) -> list[str]:
    """A transcript's hard-wrapped description as Markdown paragraphs that wrap in the browser.

    Lines are joined within a paragraph; a line starting with "- " or "* " stays a list item.
    Markdown's own characters are escaped so arithmetic like `2 * 60` is shown as written.
    """
    paragraphs: list[list[str]] = [[]]
    for raw in text.strip().splitlines():
        line = raw.strip()
        if not line:
            paragraphs.append([])
        elif line[:2] in ("- ", "* ") or not paragraphs[-1]:
            paragraphs[-1].append(line)
        else:
            paragraphs[-1][-1] += " " + line
    out: list[str] = []
    for paragraph in paragraphs:
        for line in paragraph:
            bullet = line[:2] in ("- ", "* ")
            body = _escape(line[2:] if bullet else line)
            out.append(("- " if bullet else "") + symbolize(body).replace(" -> ", " → "))
        if paragraph:
            out.append("")
    return out


def _escape(text: str) -> str:
    for char in ("\\", "*", "_", "[", "]", "`", "|"):
        text = text.replace(char, "\\" + char)
    text = text.replace("<", "&lt;")
    return "\\" + text if text[:1] in ("#", "+", ">") or re.match(r"\d+\.\s", text) else text


def sort_key(code: str) -> tuple[int, int]:
    rank, suit = split_card(code)
    return (SUITS.index(suit) if suit in SUITS else 9, RANKS.index(rank) if rank in RANKS else 9)


def pretty_hand(cards: list[str]) -> str:
    """Cards grouped by suit, highest first: `A♠ 10♠ · K♣ · 9♥`."""
    groups: dict[str, list[str]] = {}
    for code in sorted(cards, key=sort_key):
        groups.setdefault(split_card(code)[1], []).append(pretty(code))
    return " · ".join(" ".join(group) for group in groups.values()) or "–"


def beats(challenger: str, best: str, led: str, trump: str | None) -> bool:
    """Does `challenger` beat the card currently winning the trick?"""
    c_rank, c_suit = split_card(challenger)
    b_rank, b_suit = split_card(best)
    if c_suit == b_suit:
        return RANKS.index(c_rank) < RANKS.index(b_rank)
    return c_suit == trump or (c_suit == led and b_suit not in (led, trump))


@dataclass
class DealStory:
    """What the narrator tracks while it walks through one deal."""

    dealer: int
    hands: list[list[str]]
    talon: list[str]
    declaration: str
    trump_from: str
    lines: list[str] = field(default_factory=list)
    to_act: int = 0
    passed: set[int] = field(default_factory=set)
    bids: dict[int, int] = field(default_factory=dict)
    declarer: int | None = None
    trump: str | None = None
    pending_trump: str | None = None
    trick: list[tuple[int, str]] = field(default_factory=list)
    trick_number: int = 1
    taken: list[int] = field(default_factory=lambda: [0, 0, 0])
    winners: list[int] = field(default_factory=list)


def narrate_case(case: dict[str, Any], rules: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Markdown lines for every deal of a transcript."""
    out: list[str] = []
    for story, deal in stories(case, rules):
        out += story.lines
        if deal.get("expect"):
            out += ["", "**After the deal:** " + _expect_text(deal["expect"])]
        out += ["", *checked_steps(deal.get("steps") or [])]
    return out


def checked_steps(steps: list[dict[str, Any]]) -> list[str]:
    """Every step with what the runner checks at it: the exact legal set before the action,
    the refusal, the events that must follow and the state after."""
    rows = []
    for number, step in enumerate(steps, start=1):
        checks = []
        if "player" in step:
            checks.append(f"seat {step['player']} to act")
        if "legal" in step:
            legal = ", ".join(f"`{symbolize(str(a))}`" for a in step["legal"]) or "none"
            checks.append(f"legal before it (exactly): {legal}")
        if step.get("refused"):
            checks.append(f"refused as {_reasons(step['refused'])}, state unchanged")
        if step.get("events"):
            checks.append("events, in order: " + "; ".join(event_words(e) for e in step["events"]))
        if step.get("expect"):
            checks.append("then: " + _expect_text(step["expect"]))
        cell = "<br>".join(checks).replace("|", "\\|") or "–"
        rows.append(f"| {number} | `{symbolize(str(step.get('action', '')))}` | {cell} |")
    if not rows:
        return []
    return ["**Every step and what it checks:**", "", "| step | action | checked |", "|---|---|---|", *rows, ""]


def event_words(event: Mapping[str, Any]) -> str:
    """An expected event: its type, then its fields as JSON values (`trick_won` player 0, points 13)."""
    fields = ", ".join(f"{key} {symbolize(json.dumps(value, ensure_ascii=False))}" for key, value in event.items() if key != "type")
    return f"`{event.get('type')}`" + (f" ({fields})" if fields else "")


def stories(case: dict[str, Any], rules: Mapping[str, Mapping[str, Any]]) -> list[tuple[DealStory, dict[str, Any]]]:
    """Each deal of a transcript walked through: its story (lines, trick winners) and its data."""
    marriages = rules.get("marriages", {})
    walked = []
    for number, deal in enumerate(case.get("deals") or [], start=1):
        story = DealStory(
            dealer=int(deal.get("dealer", 0)),
            hands=[list(h) for h in deal.get("hands", [[], [], []])],
            talon=list(deal.get("talon", [])),
            declaration=str(marriages.get("declaration", "optional")),
            trump_from=str(marriages.get("trump_from", "this_trick")),
        )
        story.lines += _deal_header(number, story)
        story.to_act = (story.dealer + 1) % 3
        for step in deal.get("steps") or []:
            _narrate_step(story, step)
        walked.append((story, deal))
    return walked


def _deal_header(number: int, story: DealStory) -> list[str]:
    lines = [f"### Deal {number}", "", f"Dealer: seat {story.dealer}; the opener is seat {(story.dealer + 1) % 3}.", ""]
    lines += ["| seat | hand |", "|---|---|"]
    lines += [f"| {seat} | {pretty_hand(hand)} |" for seat, hand in enumerate(story.hands)]
    lines += [f"| talon | {pretty_hand(story.talon)} |", ""]
    return lines


def _narrate_step(story: DealStory, step: dict[str, Any]) -> None:
    action = str(step.get("action", ""))
    player = step.get("player", story.to_act)
    if step.get("refused"):
        story.lines.append(f"- Seat {player}: `{symbolize(action)}` is refused ({_reasons(step['refused'])}).")
        return
    words = action.split()
    kind = words[0] if words else ""
    if kind in ("bid", "pass") and not story.bids and not story.passed and "player" not in step:
        player = (story.dealer + 1) % 3  # the auction opens with the opener, whatever claims came before
    handler = {
        "bid": _bid, "pass": _bid, "give": _give, "contract": _contract, "give_up": _give_up,
        "play": _play, "redeal": _claim, "no_redeal": _claim,
    }.get(kind)
    if handler is None:
        story.lines.append(f"- Seat {player}: `{symbolize(action)}`")
    else:
        handler(story, int(player), words)
    if step.get("expect"):
        story.lines.append(f"    - then: {_expect_text(step['expect'])}")
        if isinstance(step["expect"].get("to_act"), int):
            story.to_act = step["expect"]["to_act"]  # the transcript knows who acts next


def _next_bidder(story: DealStory, after: int) -> int:
    seat = (after + 1) % 3
    while seat in story.passed and len(story.passed) < 3:
        seat = (seat + 1) % 3
    return seat


def _bid(story: DealStory, player: int, words: list[str]) -> None:
    if words[0] == "pass":
        story.passed.add(player)
        story.lines.append(f"- Auction: seat {player} passes.")
    else:
        story.bids[player] = int(words[1])
        story.lines.append(f"- Auction: seat {player} bids {words[1]}.")
    if len(story.passed) == 2:
        story.declarer = next(seat for seat in range(3) if seat not in story.passed)
        story.to_act = story.declarer
        story.hands[story.declarer] += story.talon
        story.lines.append(
            f"- Seat {story.declarer} wins the auction at {story.bids.get(story.declarer, '?')} "
            f"and takes the talon ({pretty_hand(story.talon)})."
        )
    else:
        story.to_act = _next_bidder(story, player)


def _give(story: DealStory, player: int, words: list[str]) -> None:
    left, right = (player + 1) % 3, (player + 2) % 3
    for card, seat in ((words[1], left), (words[2], right)):
        if card in story.hands[player]:
            story.hands[player].remove(card)
        story.hands[seat].append(card)
    story.lines.append(f"- Seat {player} gives {pretty(words[1])} to seat {left} and {pretty(words[2])} to seat {right}.")


def _contract(story: DealStory, player: int, words: list[str]) -> None:
    story.to_act = player  # the declarer leads the first trick (after any claim window)
    story.lines.append(f"- Seat {player} fixes the contract at {words[1]}.")
    story.lines.append("")
    story.lines += ["| trick | plays (in order) | trump | winner |", "|---|---|---|---|"]


def _give_up(story: DealStory, player: int, words: list[str]) -> None:
    story.lines.append(f"- Seat {player} gives up the deal.")


def _claim(story: DealStory, player: int, words: list[str]) -> None:
    said = "claims a redeal" if words[0] == "redeal" else "waives the redeal"
    story.lines.append(f"- Seat {player} {said}.")
    story.to_act = (player + 1) % 3


def _play(story: DealStory, player: int, words: list[str]) -> None:
    card = words[1]
    rank, suit = split_card(card)
    leading = not story.trick
    if leading and story.pending_trump:
        story.trump, story.pending_trump = story.pending_trump, None
    declared = "marriage" in words[2:] or (
        story.declaration == "automatic" and leading and story.trick_number > 1 and rank in ("K", "Q")
        and (("Q" if rank == "K" else "K") + suit) in story.hands[player]
    )
    note = ""
    if declared:
        note = " (marriage)"
        if story.trump_from == "this_trick":
            story.trump = suit
        else:
            story.pending_trump = suit
    if "aces" in words[2:]:
        note = " (four aces)"
    if card in story.hands[player]:
        story.hands[player].remove(card)
    story.trick.append((player, card + note))
    story.to_act = (player + 1) % 3
    if len(story.trick) == 3:
        _close_trick(story)


def _close_trick(story: DealStory) -> None:
    cards = [(seat, text.split(" ")[0]) for seat, text in story.trick]
    led = split_card(cards[0][1])[1]
    winner, best = cards[0]
    for seat, card in cards[1:]:
        if beats(card, best, led, story.trump):
            winner, best = seat, card
    points = sum(CARD_POINTS.get(split_card(card)[0], 0) for _, card in cards)
    story.taken[winner] += points
    story.winners.append(winner)
    plays = ", ".join(f"{seat}: {pretty(text.split(' ')[0])}{text[len(text.split(' ')[0]):]}" for seat, text in story.trick)
    trump = SUIT_SYMBOLS.get(story.trump, "none") if story.trump else "none"
    story.lines.append(f"| {story.trick_number} | {plays} | {trump} | seat {winner} (+{points}, running {story.taken}) |")
    story.trick, story.trick_number, story.to_act = [], story.trick_number + 1, winner


def _expect_text(expect: dict[str, Any]) -> str:
    return "; ".join(f"`{key}` = {show_value(value)}" for key, value in expect.items())


def show_value(value: Any) -> str:
    """An expected value in words or JSON, never a Python repr; card lists with suit symbols."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "none"
    if isinstance(value, str):
        return f"`{symbolize(value)}`"
    if isinstance(value, list) and value and all(isinstance(v, str) and CARD_CODE.fullmatch(v) for v in value):
        return pretty_hand(list(value))
    return "`" + symbolize(json.dumps(value, ensure_ascii=False)) + "`"
