"""Each knob value as a sentence a player can read."""

from __future__ import annotations

import json
from typing import Any, Callable, Mapping

from spec.vocabulary import RuleValues
from variants.model import thaw

SUIT_NAMES = {"S": "spades", "C": "clubs", "D": "diamonds", "H": "hearts"}
SUIT_SYMBOLS = {"S": "♠", "C": "♣", "D": "♦", "H": "♥"}

Sentence = Callable[[Any, RuleValues], str]


def _off_or(text: str, off: str) -> Sentence:
    """A sentence for an optional number: `off` (the meaning of null) when the value is null, else `text`."""
    return lambda value, rules: off if value is None else text.format(value=value)


def _yes_no(yes: str, no: str) -> Sentence:
    return lambda value, rules: yes if value else no


def _choice(**texts: str) -> Sentence:
    return lambda value, rules: texts.get(str(value), f"`{format_value(value)}`")


def _marriage_values(value: Any, rules: RuleValues) -> str:
    if not isinstance(value, Mapping):
        return f"`{format_value(value)}`"
    parts = [f"{SUIT_NAMES.get(s, s)} {SUIT_SYMBOLS.get(s, '')} {v}" for s, v in value.items()]
    return "Marriages are worth " + ", ".join(parts) + "."


def _redeal_rules(value: Any, rules: RuleValues) -> str:
    if not value:
        return "No redeal rules: every deal is played."
    lines = []
    for rule in value:
        condition = {
            "four_nines": "a player holds all four nines",
            "three_nines": "a player holds three nines",
            "four_jacks": "a player holds all four jacks",
            "hand_under_points": f"a hand is worth fewer than {rule.get('points')} card points",
            "talon_under_points": f"the talon is worth fewer than {rule.get('points')} card points",
            "two_nines_in_talon": "the talon holds two nines",
        }.get(rule.get("condition", ""), str(rule.get("condition")))
        when = {
            "before_bidding": "before the auction",
            "before_exchange": "after the talon is taken, before the declarer gives cards",
            "after_exchange": "after the cards are given, before the first lead",
        }.get(rule.get("when", ""), str(rule.get("when")))
        by = "the deal is redealt at once" if rule.get("by") == "automatic" else "that player may claim a redeal"
        lines.append(f"if {condition} {when}, {by}")
    return "Redeals (same dealer, nothing scored): " + "; ".join(lines) + "."


SENTENCES: dict[str, Sentence] = {
    "deal.next_dealer": _choice(left="The deal passes to the left after every deal."),
    "deal.dealer_after_redeal": _choice(
        same="After a redeal the same dealer deals again.", next="After a redeal the deal passes to the left."
    ),
    "auction.opening_bid": lambda v, r: f"The player left of the dealer opens the auction at {v}.",
    "auction.opening": _choice(
        forced="The first bid of the auction is exactly the opening amount.",
        at_least="The first bid of the auction is the opening amount or more.",
    ),
    "auction.bid_step": lambda v, r: f"Bids go in multiples of {v}.",
    "auction.high_bid_step": _off_or("Above the high-bid threshold, bids go in multiples of {value}.", "The bid step is the same at every level."),
    "auction.high_bid_from": lambda v, r: f"The high-bid step (if any) applies above {v}.",
    "auction.raise": _choice(any="A raise may jump to any higher legal amount.", one_step="A raise goes up exactly one step."),
    "auction.marriage_needed_above": _off_or("Bidding above {value} requires holding a marriage.", "No marriage is needed to bid high."),
    "auction.ceiling": _choice(
        marriages_held="The highest bid is 120 plus the marriages held in hand; a hoped-for talon marriage does not count.",
        none="There is no ceiling beyond the marriage condition and the absolute maximum.",
    ),
    "auction.max_bid": lambda v, r: f"No bid or contract may exceed {v}.",
    "auction.stop_at": _off_or("The auction must stand at exactly {value} before anyone bids above it.", "Bids may jump over 120."),
    "auction.opener_may_pass": _yes_no("The opener may pass instead of opening; so may everyone after.", "The opener may not pass first: someone always bids."),
    "auction.dealer_must_bid": _yes_no("If the two players before the dealer pass without a bid, the dealer must bid.", "The dealer may pass like anyone else."),
    "auction.all_pass": _choice(
        opener_declares="If all three pass, the opener plays the opening bid.",
        redeal="If all three pass, the deal is abandoned without score and dealt again.",
    ),
    "auction.pre_talon_max": _off_or("No bid may go above {value} before the talon is seen, though the contract may.", "Bids have no cap of their own before the talon."),
    "auction.barrel_min_bid": _off_or("A player on the barrel must bid at least {value} (a forced opening bid excepted).", "A player on the barrel may bid like anyone else."),
    "auction.reentry": _yes_no("A new bid brings back into the auction everyone who passed.", "A pass is final: a player who passed is out of the auction."),
    "auction.ends_at_max_bid": _yes_no("A bid of the maximum ends the auction at once.", "After a bid of the maximum the others still pass."),
    "talon.shown": _choice(
        always="The talon is shown to everyone.", from_bid="The talon is shown only when the winning bid is high enough.",
        never="Only the declarer sees the talon.",
    ),
    "talon.contract_step": _yes_no("After giving cards the declarer fixes the contract.", "There is no contract step: the winning bid is the contract."),
    "talon.shown_from_bid": lambda v, r: f"When the talon's showing depends on the bid, it is shown from a winning bid of {v}.",
    "talon.contract_raise": _yes_no("The declarer may raise the contract above the winning bid.", "The contract is the winning bid; no raise."),
    "talon.contract_ceiling": _choice(
        auction="A raise obeys the limits of the auction: the marriage rule, the ceiling and the maximum bid.",
        none="A raise is limited only by the maximum bid: the marriage rule and the marriages held limit bids only.",
    ),
    "talon.contract_ceiling_hand": _choice(
        kept_hand="A raise is limited by the marriages in the 8 cards the declarer keeps.",
        hand_with_talon="A raise is limited by the marriages in the 10 cards with the talon.",
        auction_hand="A raise is limited by the marriages of the original 7-card hand.",
    ),
    "giving_up.allowed": _yes_no("The declarer may give up the deal without playing.", "The declarer may not give up."),
    "giving_up.local_name": lambda v, r: f"Giving up is called *{str(v).replace('_', ' ')}* here.",
    "giving_up.moment": _choice(
        before_exchange="Giving up happens after taking the talon, instead of giving cards.",
        with_contract="Giving up happens after giving cards, instead of fixing the contract.",
        either="Giving up happens either instead of giving cards or, after giving them, instead of fixing the contract.",
    ),
    "giving_up.declarer_loses": _choice(winning_bid="The declarer who gives up loses the winning bid.", nothing="The declarer who gives up loses nothing by it."),
    "giving_up.defender_gain": _choice(half_bid="Each defender gains half the winning bid.", fixed="Each defender gains a fixed amount."),
    "giving_up.defender_gain_amount": lambda v, r: f"The fixed gain of each defender is {v}.",
    "giving_up.half_bid_rounding": _choice(exact="Half the bid is kept exactly (halves stay on the score sheet).", up_to_5="Half the bid is rounded up to a multiple of 5.",
                                           down="Half the bid is rounded down to a whole point (57 for 115)."),
    "giving_up.penalty_repeats": _choice(
        each_from="Every give-up from that number on costs the penalty.",
        every_nth="Only every such number of give-ups costs the penalty (the count starts again).",
    ),
    "giving_up.declarer_loses_from": lambda v, r: "Every give-up costs the declarer." if v == 1 else f"The declarer's give-ups cost nothing before number {v}.",
    "giving_up.defenders_paid_from": lambda v, r: "Defenders are paid for every give-up." if v == 1 else f"Defenders are paid from the declarer's give-up number {v} on.",
    "giving_up.penalty": lambda v, r: f"The extra penalty for a late give-up is {v}.",
    "giving_up.penalty_from": _off_or("From the declarer's give-up number {value} on, each costs the extra penalty.", "No extra penalty for repeated give-ups."),
    "giving_up.limit": _off_or("A player may give up at most {value} times in a match.", "There is no limit on give-ups."),
    "giving_up.on_barrel": _yes_no("A player on the barrel may give up.", "A player on the barrel may not give up."),
    "play.first_lead": _choice(declarer="The declarer leads to the first trick."),
    "play.must_trump": _yes_no("A player void in the suit led must trump if able.", "A player void in the suit led may discard freely."),
    "play.may_trump_instead": _yes_no("A player holding the suit led may play a trump instead of following.", "A player holding the suit led must follow it."),
    "play.must_beat": _yes_no("A player following suit must beat the winning card of that suit if able.", "There is no duty to beat."),
    "play.must_overtrump": _yes_no("A player who must trump must overtrump a winning trump if able.", "There is no duty to overtrump."),
    "play.overtrump_against": _choice(anyone="The duty to overtrump holds whoever's trump is winning.", declarer="The duty to overtrump holds only against the declarer's trump."),
    "play.beat_after_trump": _yes_no("A player following suit must beat the highest card of that suit even when a trump wins the trick.", "Once a trump wins the trick, following suit is enough."),
    "play.must_undertrump": _yes_no("A player void in the suit led must trump even when no trump held can win.", "A player whose trumps cannot win the trick may play any card."),
    "play.last_trick_bonus": _off_or("The winner of the last trick adds {value} to the total.", "The last trick earns nothing extra."),
    "marriages.values": _marriage_values,
    "marriages.declaration": _choice(
        optional="A marriage scores only when the leader declares it while leading its king or queen.",
        automatic="Leading a king or queen whose partner is held declares the marriage automatically.",
    ),
    "marriages.first_trick": _yes_no("A marriage may be declared on the first trick.", "No marriage may be declared on the first trick."),
    "marriages.trump_from": _choice(this_trick="A declared marriage's suit is trump at once, for the trick it is led to.", next_trick="A declared marriage's suit becomes trump from the next trick."),
    "marriages.four_aces": _off_or("Four aces may be declared like a marriage for {value}.", "Four aces score nothing special."),
    "marriages.last_trick": _off_or("No marriage may be declared after trick {value}.", "A marriage may be declared on any trick its holder leads (except where the first trick is barred)."),
    "marriages.one_trump": _yes_no("Only the first marriage of the deal names the trump; later ones just score.", "Every declared marriage makes its suit trump."),
    "marriages.half_capture_bonus": _off_or(
        "Winning a king or queen of an undeclared marriage from another player adds {value} to the total.", "Capturing half of a marriage earns nothing extra."
    ),
    "scoring.declarer_rounding": _choice(
        exact="The declarer's total is not rounded before the contract check.",
        nearest_5="The declarer's total is rounded to 5 before the contract check.",
        nearest_10="The declarer's total is rounded to 10 before the contract check.",
    ),
    "scoring.defender_rounding": _choice(
        exact="Defenders score their exact totals.",
        nearest_5="Defenders' totals are rounded to the nearest 5.",
        nearest_10="Defenders' totals are rounded to the nearest 10.",
    ),
    "scoring.declarer_scores": _choice(
        contract="A made contract scores the contract, whatever the total.", total="A made contract scores the declarer's whole total."
    ),
    "scoring.failed_contract_points": _choice(
        lost="A failed contract is lost by the declarer only.",
        split_among_defenders="Each defender also gains half of a failed contract.",
        each_defender="Each defender also gains the whole failed contract.",
    ),
    "bolts.enabled": _yes_no("A defender who takes nothing gets a bolt.", "There are no bolts."),
    "bolts.zero": _choice(zero_points="A bolt is a deal with zero points (a trick worth 2 is not a zero).", no_tricks="A bolt is a deal without a trick."),
    "bolts.every": lambda v, r: ("Every bolt costs the penalty." if v == 1 else
                                 f"Every {ordinal(v)} bolt costs the penalty and resets the count."),
    "bolts.penalty": lambda v, r: f"The bolt penalty is {v}.",
    "bolts.counting": _choice(cumulative="Bolts count whether consecutive or not.", consecutive="Only consecutive bolts count."),
    "bolts.on_barrel": _yes_no("Bolts count on the barrel.", "No bolts on the barrel."),
    "bolts.in_give_up_deal": _yes_no("A give-up deal can create bolts.", "A give-up deal creates no bolts."),
    "bolts.declarer": _yes_no("A declarer who takes nothing gets a bolt too.", "Only defenders get bolts."),
    "barrel.enabled": _yes_no("The barrel is in play.", "There is no barrel."),
    "barrel.threshold": lambda v, r: f"The barrel is at {v}.",
    "barrel.jump_over_wins": _yes_no("Jumping from below the barrel straight to the target wins.", "Nobody jumps over the barrel: the score is capped there."),
    "barrel.attempts": _off_or("A player stays on the barrel for {value} deals.", "A player stays on the barrel for any number of deals."),
    "barrel.attempts_penalty": lambda v, r: f"Failing to win in those deals costs {v}.",
    "barrel.attempt_counts": _choice(every_deal="Every completed deal counts as an attempt, whoever is declarer.", as_declarer="Only deals as declarer count as attempts."),
    "barrel.give_up_deal_counts": _yes_no("A give-up deal counts as an attempt.", "A give-up deal is not an attempt."),
    "barrel.min_contract": lambda v, r: f"Winning from the barrel needs a made contract of at least {v}.",
    "barrel.defender_points": _choice(suspended="Defending scores nothing on the barrel.", counted="Defending scores as usual on the barrel."),
    "barrel.max_occupants": _off_or("At most {value} may sit on the barrel.", "Any number may sit on the barrel."),
    "barrel.knock_off_penalty": lambda v, r: f"A player knocked off the barrel loses {v}.",
    "barrel.failed_visit_reset": _off_or("After {value} failed visits the score is reset to 0.", "Failed visits are not counted."),
    "barrel.failed_contract": _choice(
        leave="A failed contract on the barrel is subtracted and ends the visit.", stay="A failed contract on the barrel costs nothing but uses an attempt."
    ),
    "barrel.arrival_cap": _choice(capped="A score past the barrel is set back to the barrel.", uncapped="A score past the barrel stands as it is (below the target)."),
    "barrel.win_by": _choice(
        made_contract="Only a made contract wins from the barrel.", any_gain="Any deal that lifts a player on the barrel to the target wins, defending too."
    ),
    "barrel.crowding": _choice(
        knock_off_occupants="A newcomer on a full barrel knocks the occupants off.",
        arrivals_fall_back="A newcomer on a full barrel falls back; the occupants stay.",
        all_fall="A newcomer on a full barrel and the occupants all fall back.",
    ),
    "barrel.arrivals_over_limit": _choice(
        all_fall_back="When more arrive at once than there are places, they all fall back.",
        highest_stay="When more arrive at once than there are places, the highest totals stay.",
    ),
    "defender_lock.enabled": _yes_no("The 800 rule limits what defending can add.", "There is no 800 rule."),
    "defender_lock.from": lambda v, r: f"The defender lock starts at {v}.",
    "defender_lock.mode": _choice(stop_counting="From the lock on, defending adds nothing; below it, it counts in full.", cap="Defending never lifts a score above the lock."),
    "defender_lock.defender_max": _off_or("A defender's score stops at {value}.", "No separate defender maximum."),
    "dump.enabled": _yes_no("A total landing exactly on the dump score goes back to 0.", "There is no dump: 555 is just a score."),
    "dump.score": lambda v, r: f"The dump score is {v}.",
    "dump.negative": _yes_no("The negative dump score also goes back to 0.", "Only the positive dump score is dumped."),
    "redeals.rules": _redeal_rules,
    "redeals.four_nines_bonus": _off_or("A player dealt all four nines scores {value}.", "Four nines earn no bonus."),
    "redeals.after_exchange_window": _choice(
        after_contract="A redeal after the exchange is claimed once the contract is fixed.",
        before_contract="A redeal after the exchange is claimed before the contract is fixed.",
    ),
    "match_end.target": lambda v, r: f"The match is played to {v}.",
    "match_end.defenders_can_win": _yes_no("A defender can win by reaching the target.", "Only a declarer making the contract can win."),
    "match_end.tie_break": _choice(
        declarer_then_highest="If several reach the target at once, the declarer wins, else the highest score, else a draw.",
        highest="If several reach the target at once, the highest score wins, else a draw.",
        highest_then_play_on="If several reach the target at once, the highest score wins; equal highest scores play on.",
        declarer_then_highest_then_play_on="If several reach the target at once, the declarer wins, else the highest score; equal highest scores play on.",
        draw="If several reach the target at once, the match is drawn.",
    ),
    "match_end.over_target": _choice(reach="Reaching the target or more wins.", exact_only="Only a score of exactly the target wins."),
}


def sentence(knob: str, value: Any, rules: RuleValues) -> str:
    """The readable sentence for a knob's value; falls back to the raw value."""
    make = SENTENCES.get(knob)
    return make(value, rules) if make else f"`{knob}` = `{format_value(value)}`."


def anchor(knob: str) -> str:
    """The page anchor of a knob: `auction.stop_at` -> `auction-stop-at`."""
    return knob.replace(".", "-").replace("_", "-")


def ordinal(number: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st..."""
    if 10 <= number % 100 <= 20:
        return f"{number}th"
    return f"{number}" + {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")


def format_value(value: Any) -> str:
    """A knob value as a profile writes it: YAML scalars (null, true, false), JSON for
    lists and mappings (JSON is YAML too, so the text can be copied into a profile)."""
    plain = thaw(value)
    if isinstance(plain, (dict, list, bool)) or plain is None:
        return json.dumps(plain, ensure_ascii=False)
    return str(plain)
