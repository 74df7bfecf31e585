"""The probabilities of ``thousand fuzz``'s random play and of its positions, in one policy.

Every number that decides how often fuzz does one thing rather than another is a field here,
with the reason for its value beside it (``reason(name)``), so that a change to the policy is
one reviewed line and not a number hunted through the code. ``CHANCES`` is the policy fuzz and
positions use. A seed plays the same trials only under the same policy: changing a number
changes what every seed finds (the corpus's generated transcripts do not depend on it).

Each field is the probability that the thing named happens at the one draw that decides it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Mapping


def chance(value: float, why: str) -> Any:
    """A field of the policy: its probability and the reason for it."""
    return field(default=value, metadata={"why": why})


@dataclass(frozen=True)
class Chances:
    """How often fuzz and positions choose each way (DESIGN.md "Observation, fit and fuzz")."""

    # --- a trial -------------------------------------------------------------------------
    position_trial: float = chance(0.25, "a trial plays a position laid out for one rule: rules random play reaches once "
                                         "in thousands of deals; the rest stay random, which finds what no position "
                                         "foresaw")
    stacked_deal: float = chance(0.35, "a random deal is stacked by suit or rank (voids, long trumps, marriages, four "
                                       "of a kind), hands a fair shuffle deals once in hundreds of deals")
    stacked_by_suit: float = chance(0.6, "a stacked deck is in suit blocks (the duties to trump and overtrump) rather "
                                         "than rank blocks (four aces, nines, jacks): more rules turn on suits")
    # --- the match state a trial starts from ----------------------------------------------
    start_from_zero: float = chance(0.2, "a trial starts from a new match: the first deal's rules (the opening bid, "
                                         "the first give-up) show only from zero")
    near_target: float = chance(0.25, "two or three seats start near the target at once: a shared finish, which the "
                                      "tie-breaks decide")
    on_the_barrel: float = chance(0.25, "a seat starts on the barrel (where it is played and there is room): its "
                                        "attempts, failed visits and crowding")
    near_a_line: float = chance(0.8, "a seat's score starts near a line a rule names (target, barrel, 800 rule, dump) "
                                     "rather than zero: that is where rules bite")
    score_just_short: float = chance(0.4, "a score near a line is one to four steps short of it (a small gain lands "
                                          "on it) rather than anywhere within 24 steps either side")
    uncapped_occupant: float = chance(0.6, "under uncapped arrivals an occupant's score stands above the threshold "
                                           "rather than at it: both kinds of occupant come up")
    failed_visits_short: float = chance(0.3, "a seat off the barrel has failed visits one short of the reset (where "
                                             "there is one)")
    bolts_near_penalty: float = chance(0.4, "a seat's bolts start near the penalty (where bolts count)")
    give_ups_near_a_line: float = chance(0.3, "a seat's give-ups start near the limit, the penalty or the defenders' "
                                              "pay")
    give_ups_on_a_line: float = chance(0.7, "those give-ups are one short of (or at) a line the rules name rather "
                                            "than any count below four")
    one_short: float = chance(0.5, "a counter (attempts, failed visits, bolts) is one short of its line rather than "
                                   "any value below it: half and half, so both the penalty and the count before it show")
    level_scores: float = chance(0.15, "two seats start level: the tie-breaks and the crowding rules")
    # --- actions -------------------------------------------------------------------------
    illegal_action: float = chance(0.08, "an action is outside the legal set: refusals are checked, but each ends "
                                         "nothing, so they stay rare enough for deals to reach their end")
    near_miss: float = chance(0.8, "an illegal action is a near miss of the phase (a bid next to the high bid, a card "
                                   "held but not playable) rather than another phase's action or garbage")
    give_up: float = chance(0.15, "the declarer gives up where it may: one action among many contract amounts, "
                                  "chosen on purpose")
    pass_on_amounts: float = chance(0.4, "a player offered bids passes: auctions end early and at low amounts, where "
                                         "the opening and stop rules are")
    amount_least: float = chance(0.45, "a bid or contract is the least amount offered: contracts a random play can make")
    amount_few_steps: float = chance(0.15, "else a step to three up: odd amounts and halves")
    amount_named: float = chance(0.2, "else an amount at or next to one a rule names (the rest: the highest or any)")
    give_short: float = chance(0.5, "the declarer gives away cards of its two shortest suits (a void: it trumps and "
                                    "overtrumps early) rather than any two")
    side_suit_lead: float = chance(0.8, "a lead is a side suit where one is held: voids are trumped and trumps "
                                        "overtrumped")
    play_at_random: float = chance(0.25, "a seat plays a random card whatever its style: every card can come up")
    declare_any: float = chance(0.6, "a seat of style any declares a marriage it may declare")
    declare_low: float = chance(0.25, "a seat of style low declares: marriages kept late (the last trick a marriage "
                                      "may be declared in)")
    declare_high: float = chance(0.9, "a seat of style high declares: early trumps, so the duties to trump show")
    declare_long: float = chance(0.9, "a seat of style long declares: early trumps, so the duties to trump show")
    # --- positions (conformance/oracle/positions.py) ---------------------------------------
    either_way: float = chance(0.5, "a position's two mirror layouts (which card is led, which defender wins or holds "
                                    "the points, which trump comes first) are equally likely: a rule tied to one side "
                                    "shows as often as the other")
    shared_finish: float = chance(0.5, "the rich defender shares the finish with a declarer a made contract short of "
                                       "the target (the tie-break) rather than finishing alone")
    at_the_barrel: float = chance(0.7, "with a barrel, the three seats arrive at its threshold at once (too many "
                                       "arrivals) rather than finish at the target from seats sitting on it")
    occupant_waiting: float = chance(0.3, "where the barrel has a limit of places, a defender sits on it already: "
                                          "two arrivals are one too many")
    declarer_on_the_line: float = chance(0.5, "the declarer sits one contract short of the line, so that making it "
                                              "lands there while the defenders may pass it by more (who wins a shared "
                                              "finish)")
    bolts_one_short: float = chance(0.5, "the position's seat starts one bolt short of the penalty")

    @property
    def declaring(self) -> Mapping[str, float]:
        """How often each play style declares what it may, by style."""
        return {"any": self.declare_any, "low": self.declare_low, "high": self.declare_high, "long": self.declare_long}


def reason(name: str) -> str:
    """Why the policy's field ``name`` has its value."""
    for item in fields(Chances):
        if item.name == name:
            return str(item.metadata["why"])
    raise KeyError(name)


CHANCES = Chances()
