"""Seeded random full deals per second for each profile (random legal play, one core).

Run: ``python benchmarks/engine.py [--deals N] [--profile [NAME]]``. Each deal is dealt
from a seeded shuffle and played by a seeded random choice among the legal actions until
the deal ends (played out, given up or redealt); the table says how the deals ended, so the
rate is not flattered by short deals. ``--profile`` prints the cProfile of one profile's run
(the first bundled one, or NAME), to see where the time goes.

Where the time went (cProfile of repino-2013, the slowest profile, 3,000 deals) before the
cards became masks: ``apply`` and its ``_play`` (a hand as a list of cards, refusal checks
on lists), ``_close_trick`` with the end of the deal in ``Fraction`` arithmetic (about a
fifth of a played deal), ``legal_actions`` sorting freshly built strings, ``_allowed_cards``
building lists, the auction's amounts recomputed by ``_next_on_grid`` at every bid, and
the exchange's 90 ``give`` strings built and sorted. After: a hand is a 24-bit mask, the
legal plays come from per-suit tables of strings, the auction's amounts from a cache per
grid, scores are ints (a Fraction only while a half is held).

Next (issue 25), counted by phase in instructions per deal of repino-2013 (a count does not
move with the load of a shared machine, a time does): the legal actions of a position
were worked out twice, once by ``legal_actions`` and again by ``apply``'s refusal checks;
the auction's legal bids (about 29,000 instructions a bid, a quarter of the deal with the
bids themselves) asked the hand's marriages two or three times, each a loop over the suits,
and built a refusal to learn that no higher bid was legal; the start of a deal (about a
ninth) asked every redeal rule its window at every deal; the exchange's 90 gives, the
contract's amounts and the end of the deal took most of the rest. Now a position's legal
actions are generated once and ``apply`` checks an action against them (the refusal
functions run only for an action not listed, to name its reason), play strings and bid or
contract ranges come sorted from caches, the auction's legal bids are kept per (high bid,
barrel minimum, pass allowed, marriages held) and a hand's marriage worth per pattern of
kings, queens and aces, and each window's redeal rules are read once per state. That saves
about a sixth of the instructions (repino-2013 362.9 to 307.4 million for 300 deals,
classic 296.9 to 248.7); what is left is spread thin over ``apply``'s dispatch, ``_play``,
``_close_trick``, the end of the deal and the benchmark's own random choice (about a
seventh of the run), with no single hot spot.

Round 6 (issue 25, goal 12,000 deals/s of repino-2013): the cProfile of 1,000 deals of
repino-2013 still puts ``apply`` first (0.031 s own time of 0.485 s, 0.183 s with what it
calls), then ``_play`` (0.024 s own, 0.096 s in all), ``_legal_plays`` (0.053 s in all),
``_close_trick`` (0.068 s in all), ``legal_actions`` with ``_generate`` and ``parse_action``,
and the benchmark's own random choice (about a sixth). The only change landed: the dealt
cards go straight into the hands' masks at ``start_deal`` (no list of cards per hand), which
saves 5.2 million of 1,199.2 million instructions for 300 deals of repino-2013 under callgrind
(a whole process, dealing and start-up included: 1,193.95 million after). The larger steps
the profile asks for are not done yet: a legal list that carries its parsed actions, so that
``apply`` of a listed action neither parses nor dispatches again, and the trick's winner and
points from tables instead of a loop over the trick.

Round 9 (issue 25, same goal). Where the time went, cProfile of 3,000 deals of repino-2013
(seconds under the profiler, one after the other on a shared machine): before, 2,868,019
calls in 1.90 s: ``apply`` 0.87 in all (0.13 own) with ``_play`` 0.51 and ``_close_trick``
0.39, ``legal_actions`` 0.55 of which ``_generate`` 0.49, ``give_actions`` 0.084 (0.076 own,
its loop over four blocks per card held), ``parse_action`` 0.082 (every applied action parsed
again), ``deal_end._finish`` 0.21, 380,122 ``isinstance`` calls (a dealt hand checked card by
card, the refusal of a give-up built in every contract position to learn it is not legal).
After, 2,474,357 calls in 1.63 s: ``apply`` 0.70 (0.11 own), ``_play`` 0.44, ``_close_trick``
0.34, ``legal_actions`` 0.42 (the play phase asks ``_legal_plays`` without ``_generate``),
``give_actions`` and ``parse_action`` out of the top fifteen, 219,175 ``isinstance`` calls. A
listed action is now looked up among the canonical strings already parsed (``CANONICAL``),
the gives are rows of a table picked by the cards held, a dealt hand is one C-level OR of
table look-ups, declarations are cached by the kings, queens and aces held, and what a profile
says once (trick bonuses scored, the tricks open to a declaration, the give-up phases) is read
once per state. Counted without the machine's noise: callgrind, 300 deals of repino-2013,
1,051.6 to 966.2 thousand instructions a deal (gambler-club 1,049.5 to 966.0), of which about
132 thousand are the seeded dealing outside the timed loop; a traced count of bytecodes, 15,262
to 13,316 a deal, and of Python calls, 444 to 373 (the benchmark's own loop is 1,725 bytecodes
a deal of those). The rate gained is about a tenth, not the 3.5 times asked for: what is left
is Python's price per call (removing the one call of ``_generate`` from the 23 plays of a deal
saved 19 thousand instructions, about 800 a call) and per bytecode (about 20), spread over about
seven calls a play (``legal_actions``, ``_legal_plays``, ``_allowed_cards`` or ``lead_actions``,
``apply``, ``_play``, and a third of ``_close_trick`` and ``_winning``), most of them methods
the mutants patch by name, so they stay calls. Halving the instructions would mean a flatter
engine (a play's legal list, checks and effects in one or two functions), which the mutants and
the readability asked for here rule out.

Round 10 (issue 25, goal 12,000 deals/s for every bundled profile). Counted by callgrind, 300
deals (dealing included, about 134 thousand a deal, outside the timed loop), PYTHONHASHSEED=0
(string hashes move a count by a few thousand otherwise), thousand instructions a deal before:
gambler-club 973, repino-2013 973, classic 826, polish 782, polish-tournament 781, skill-games
828. Of gambler-club's, 42% was the bytecode loop itself and about 8% the generic look-up of
``self.method()``: ``MatchState`` has 44 attributes, more than the 30 keys CPython 3.11 keeps
in a shared instance dict, so its instances had full dicts and no method call on them was ever
specialised. Fixed slots took gambler-club from 978 to 896 alone. Then: a redeal window lists
the seats that may claim in one loop (no comprehension and ``_may_claim`` per seat), 896 to
880; the end of a deal with fewer calls (totals summed in one loop, the defenders of a seat
from a table, one ``numbers`` call per list of scores, ``_match_end`` left at once below the
target), 880 to 861; the auction's cache of legal bids keyed by the state's own fields instead
of two calls per bid, and the dealt hands read without a comprehension, 861 to 854; ``apply``
takes a listed action's parse by index from ``CANONICAL`` (``CANONICAL.get`` on an imported
name compiles to an attribute load that builds a bound method at every action), 854 to 833.
After: gambler-club 838, repino-2013 838, classic 728, polish 680, polish-tournament 681,
skill-games 720 (13 to 14% fewer; about 16% of the engine's part once dealing is taken off);
cProfile of 3,000 deals of gambler-club, 2,474,357 to 2,305,058 calls. Measured and dropped:
play strings from a table in the codes' order instead of a sort on a cache miss (12 thousand
more, not fewer), leads' plays left out of the cache (2 fewer), a per-deal cache of each seat's
marriage worth (4 fewer: not worth a field). Where gambler-club's 838 thousand go now, cutting
deals at each phase: the start of a deal with its claim window 64, the auction with the talon
110, the exchange (90 gives listed, copied and searched) 64, the contract 45, the 23 plays and
the scoring 427 (about 17 thousand a play: 240 bytecodes over about seven calls, and as much
again of C work: the caches' look-ups, the legal list copied for the caller, a new int for every
mask operation above 256, the events). The rate gained is about a fifth, not the 1.55 times asked
for: what is left is spread over every phase with no hot spot, and halving it would take the
flatter engine that round 9 ruled out.

Round 11 (goal: 8% fewer instructions a deal for repino-2013 and gambler-club, the dealing left
out). Counted as in round 10 (callgrind, 300 deals minus none, PYTHONHASHSEED=0; the seeded
dealing is 133 thousand a deal of every profile). Where it went: a miss of ``play_actions``
(9.6 a deal, most of them leads, whose hands are new) cost about 6,400 instructions, four look-ups,
a sort of up to four runs and the cache's bookkeeping; the lead's declarations were asked of a
cache keyed by the 4,096 patterns of honours (1.6 misses a deal) through ``lead_actions`` even
with nothing to declare; the exchange's give was most often parsed for the first time; the
contract's range hashed the AuctionRules (a Python ``__hash__`` of all its fields) at every call
of ``amount_actions``; ``list(legal)`` at every position is a generic call of a type. Now the play
strings and the card points come from tables of half the pack (4,096 patterns of twelve bits:
two look-ups, two sorted runs to merge), the 552 gives are built with the cards at import, a
lead asks ``declarable`` first and declarations are cached by its mask (at most 32), the
contract's ranges are kept per state, the after-exchange window's place is read once per state,
``legal_actions`` copies with a list display and lists the plays itself (``_legal_plays`` was a
call at three positions in four), a bid is recorded as its string without ``Bid.__str__``, and
a deal's scores are made whole only when a half was held. Steps, gambler-club: 839.5, half-pack
play tables 827.3, then points, gives, contract ranges, window, one sum of passes 804.4,
declarations 794.1, list display 785.9, bid string and whole 782.6, plays listed by
``legal_actions`` 774.9. Before and after, thousand instructions a deal: gambler-club 839.5 to
774.9, repino-2013 839.4 to 774.6, classic 726.4 to 677.9, polish 679.8 to 631.9,
polish-tournament 680.7 to 632.0, skill-games 721.1 to 681.0; the engine's part (dealing taken
off) 9.1% fewer for gambler-club, 9.2% for repino-2013, 8.2% classic, 8.8% polish, 8.9%
polish-tournament, 6.8% skill-games. The tables cost about 30 million instructions once at import
(1,041 to 1,071 million for a process that plays no deal). Measured and dropped: a plain dict
instead of the lru_cache for the plays (a miss costs the same: two Python calls instead of one),
a contract or bid range cut from a per-rules grid of legal amounts instead of ``next_on_grid`` at
each amount (782.6 to 782.8: the grid's own cache hashes the AuctionRules), ``.copy()`` for the
end of the deal's ``list()`` copies (no change), the trick number in a local in ``_close_trick``
(0.4 more, within what the code's layout moves a count).
"""

from __future__ import annotations

import argparse
import cProfile
import platform
import pstats
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import variants  # noqa: E402
from reference_impl import MatchState, Rules, deal_random  # noqa: E402
from spec.vocabulary import ENDED, Phase  # noqa: E402


@dataclass
class Measure:
    deals: int
    actions: int
    seconds: float
    endings: Counter[str]

    def line(self, name: str) -> str:
        played = 100 * self.endings["played"] / self.deals
        return (f"{name:28s} {self.deals / self.seconds:8.0f} deals/s {self.actions / self.seconds:9.0f} actions/s"
                f"   played out {played:5.1f}%  given up {self.endings['given_up']:4d}  redealt {self.endings['redeal']:4d}")


def run(rules: Rules, deals: int, seed: int = 1) -> Measure:
    """Random legal play of ``deals`` deals (a new match whenever one ends)."""
    rng = random.Random(seed)
    dealt = [deal_random(rng.randrange(2**32)) for _ in range(deals)]
    state = MatchState(rules)
    dealer, actions, endings = 0, 0, Counter[str]()
    getrandbits = rng.getrandbits
    began = time.process_time()  # CPU seconds: the machine is shared, wall time is not ours alone
    for hands, talon in dealt:
        if state.phase == Phase.MATCH_OVER:
            state = MatchState(rules)
        state.start_deal(dealer, hands, talon)
        while state.phase not in ENDED:
            legal = state.legal_actions()
            # rng.choice(legal) drawn as random.choice draws it (the same seeded deals, played
            # the same way), without its two Python calls: the rate is the engine's
            n = len(legal)
            k = n.bit_length()
            r = getrandbits(k)
            while r >= n:
                r = getrandbits(k)
            state.apply(legal[r])
            actions += 1
        endings[state.deal_result["kind"] if state.deal_result else "none"] += 1
        dealer = state.next_dealer if state.next_dealer is not None else 0
    return Measure(deals, actions, time.process_time() - began, endings)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--deals", type=int, default=3000, help="deals per profile (default 3000)")
    parser.add_argument("--profile", nargs="?", const=True, default=None, metavar="NAME",
                        help="show the cProfile of one profile's run (default: the first bundled profile)")
    args = parser.parse_args()
    if args.profile:
        name = variants.all_names()[0] if args.profile is True else args.profile
        rules = Rules.from_document(variants.resolve(name).to_document())
        profiler = cProfile.Profile()
        profiler.runcall(run, rules, args.deals)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
        return 0
    print(f"python {platform.python_version()} on {platform.machine()}, {args.deals} seeded deals per profile, one core")
    for name in variants.all_names():
        print(run(Rules.from_document(variants.resolve(name).to_document()), args.deals).line(name))
    return 0


if __name__ == "__main__":
    sys.exit(main())
