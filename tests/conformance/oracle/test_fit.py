"""``thousand fit`` on doubles as engines really are: values read from the implementation's
replies, coupled knobs searched together, an honest residual and the stop rule (no single
change still helps). The doubles are the reference under house files written here (several knob
differences at once, values no bundled profile uses, a bug no knob expresses, an action declared
unsupported)."""

from __future__ import annotations

import contextlib
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Iterator, Sequence

import jsonschema
import pytest
import yaml

import variants
from conformance.corpus.transcripts import Transcript
from conformance.harness.runner import REFERENCE_COMMAND
from conformance.oracle import candidates, evidence, fit, observe, residual
from tests.support.paths import ROOT


PARTIAL = [sys.executable, str(ROOT / "benchmarks" / "partial_engine.py")]

# A maximum bid of 300, which no bundled profile uses: every bid legal set of a player who may
# bid past 300 under classic (a marriage, classic's ceiling being none) stops at 300 instead.
CAPPED = """\
profile: {name}
title: Classic capped at 300
status: draft
summary: The classic rules with no bid or contract above 300.
extends: classic
sources: {{}}
rules:
  auction:
    max_bid: {{value: 300, ruling: "The test table caps bids at 300."}}
"""
# Polish with its marriage ceiling gone and a 300 cap: two auction knobs that decide the same
# legal sets, and only the pair reproduces them (no ceiling alone lets bids reach 400).
COUPLED = """\
profile: {name}
title: Polish without a ceiling, capped at 300
status: draft
summary: Polish, bids limited only by a maximum of 300.
extends: polish
sources: {{}}
rules:
  auction:
    ceiling: {{value: none, ruling: "The test table lets any player bid up to the maximum."}}
    max_bid: {{value: 300, ruling: "The test table caps bids at 300."}}
"""
# Classic as a fixed-rules engine plays it, like a many-difference engine: four sections
# changed at once, a marriage table no bundled profile uses (every bundled profile scores
# S 40, C 60, D 80, H 100), no marriage condition and a cap of 300 no bundled profile uses.
FIXED_RULES = """\
profile: {name}
title: Classic as a fixed-rules engine plays it
status: draft
summary: Classic with its marriage table turned round, bids capped at 300, no give-up and exact defenders.
extends: classic
sources: {{}}
rules:
  auction:
    marriage_needed_above: {{value: null, ruling: "The test table has no marriage condition on bids."}}
    max_bid: {{value: 300, ruling: "The test table caps bids at 300."}}
  marriages:
    values: {{value: {{S: 80, C: 100, D: 40, H: 60}}, ruling: "The test table turns the marriage table round."}}
  giving_up:
    allowed: {{value: false, ruling: "The test table has no give-up."}}
  scoring:
    defender_rounding: {{value: exact, ruling: "The test table scores defenders exactly."}}
"""

# Classic with a marriage ceiling, a marriage needed above 495, a maximum of 530 and four aces
# worth 30 (a realistic seed-1 variant). A hand with a marriage may bid up to 530 (495 plus
# at least 40, capped at 530); a hand with four aces and no marriage up to 495 + 30 = 525.
# Neither the ceiling alone (four aces not counted: such a hand stops at 495) nor four aces
# alone (no ceiling: such a hand goes to 530) makes the 525 legal sets; only the pair does,
# and 30 is shown only as the distance between the two sides' highest bids.
ACES = """\
profile: {name}
title: Classic with four aces under a marriage ceiling
status: draft
summary: Classic, bids above 495 need a marriage or four aces and go no higher than 495 plus what they hold.
extends: classic
sources: {{}}
rules:
  auction:
    ceiling: {{value: marriages_held, ruling: "The test table caps a bid at 495 plus the marriages held."}}
    marriage_needed_above: {{value: 495, ruling: "The test table needs a marriage above 495."}}
    max_bid: {{value: 530, ruling: "The test table caps bids at 530."}}
  marriages:
    four_aces: {{value: 30, ruling: "The test table scores four aces 30."}}
"""

# Polish bidding a step at a time, capped at 305, with a marriage needed above 350 (past the
# cap: none is ever needed), as a realistic seed-2 variant: every legal set of the auction
# offers only the next bid, so the cap shows only where a bid of 310 is refused as above the
# ceiling, where under polish's maximum of 400 it is refused as a jump.
STEPWISE = """\
profile: {name}
title: Polish a step at a time, capped at 305
status: draft
summary: Polish, each bid one step above the last and none above 305.
extends: polish
sources: {{}}
rules:
  auction:
    raise: {{value: one_step, ruling: "The test table raises a bid one step at a time."}}
    max_bid: {{value: 305, ruling: "The test table caps bids at 305."}}
    marriage_needed_above: {{value: 350, ruling: "The test table needs a marriage above 350."}}
"""


# Polish with no marriage ceiling, bids before the talon capped at 350 and contracts at 380:
# a maximum of 350 plays like it in the auction (a stand-in), and only the maximum moved to 380
# with the 350 moved to the bids before the talon reproduces the contracts.
PRE_TALON = """\
profile: {name}
title: Polish with bids before the talon capped
status: draft
summary: Polish with no marriage ceiling, bids before the talon capped at 350 and contracts at 380.
extends: polish
sources: {{}}
rules:
  auction:
    ceiling: {{value: none, ruling: "The test table has no marriage ceiling."}}
    pre_talon_max: {{value: 350, ruling: "The test table caps bids before the talon at 350."}}
    max_bid: {{value: 380, ruling: "The test table caps contracts at 380."}}
"""


# Polish tournament rules with the barrel played, arrivals uncapped and a jump over it winning:
# the barrel switched on alone caps an arrival's 900 at 880; with its arrivals uncapped too it
# breaks the wins of a player jumping from below the barrel to 1000 or more, until the jump wins.
BARREL = """\
profile: {name}
title: Polish tournament with an uncapped barrel
status: draft
summary: Polish tournament rules with the barrel on, arrivals uncapped and a jump over it winning.
extends: polish-tournament
sources: {{}}
rules:
  barrel:
    enabled: {{value: true, ruling: "The test table plays the barrel."}}
    arrival_cap: {{value: uncapped, ruling: "The test table keeps an arrival's score."}}
    jump_over_wins: {{value: true, ruling: "The test table lets a jump over the barrel win."}}
"""


TALON_HAND = """\
profile: {name}
title: Skill games with a marriage counted from the talon
status: draft
summary: Skill games with bids before the talon capped at 330, a marriage needed above 340 and the talon counted.
extends: skill-games
sources: {{}}
rules:
  auction:
    ceiling: {{value: none, ruling: "The test table has no marriage ceiling."}}
    marriage_needed_above: {{value: 340, ruling: "The test table asks for a marriage above 340."}}
    max_bid: {{value: 465, ruling: "The test table caps contracts at 465."}}
    pre_talon_max: {{value: 330, ruling: "The test table caps bids before the talon at 330."}}
  talon:
    contract_ceiling_hand: {{value: hand_with_talon, ruling: "The test table counts a marriage the talon brings."}}
"""


# realistic seed 13, variant 4 of benchmarks/fit.py: eleven knobs of polish in six sections
SEED_13_4 = """\
profile: {name}
title: Polish as a seeded secret table plays it
status: draft
summary: Eleven knobs of polish changed in six sections, as the realistic benchmark's seed 13 drew them.
extends: polish
sources: {{}}
rules:
  auction:
    opening: {{value: at_least, ruling: "The seeded table lets a bid start anywhere from the opening bid."}}
    marriage_needed_above: {{value: 545, ruling: "The seeded table asks for a marriage above 545."}}
    max_bid: {{value: 145, ruling: "The seeded table caps bids and contracts at 145."}}
  talon:
    contract_raise: {{value: false, ruling: "The seeded table keeps the contract at the winning bid."}}
  giving_up:
    defender_gain_amount: {{value: 170, ruling: "The seeded table gives each defender 170 for a give-up."}}
  play:
    must_trump: {{value: false, ruling: "The seeded table lets a player void in the suit led discard."}}
    must_beat: {{value: false, ruling: "The seeded table does not ask a follower to beat the trick."}}
  marriages:
    declaration: {{value: automatic, ruling: "The seeded table declares every marriage led from."}}
  bolts:
    enabled: {{value: true, ruling: "The seeded table counts bolts."}}
    counting: {{value: consecutive, ruling: "The seeded table counts only bolts in a row."}}
    in_give_up_deal: {{value: true, ruling: "The seeded table gives bolts in a deal given up."}}
"""


TENS = """\
profile: {name}
title: Skill games bid in tens from 110
status: draft
summary: Skill games with bids from 110 in steps of 10 up to 235, and no marriage condition within reach.
extends: skill-games
sources: {{}}
rules:
  auction:
    opening_bid: {{value: 110, ruling: "The test table opens the bidding at 110."}}
    opening: {{value: at_least, ruling: "The test table lets the first bid be any amount from 110."}}
    bid_step: {{value: 10, ruling: "The test table bids in steps of 10."}}
    ceiling: {{value: none, ruling: "The test table has no marriage ceiling."}}
    max_bid: {{value: 235, ruling: "The test table caps bids and contracts at 235."}}
    marriage_needed_above: {{value: 475, ruling: "The test table asks for a marriage only above 475, out of reach."}}
"""


FIFTH_BOMB = """\
profile: {name}
title: Polish tournament paying half the bid from the fifth bomb
status: draft
summary: Polish tournament rules whose defenders are paid half the bid, rounded down, only from a player's fifth bomb.
extends: polish-tournament
sources: {{}}
rules:
  talon:
    contract_raise: {{value: false, ruling: "The test table lets no declarer raise the contract after the talon."}}
  giving_up:
    defender_gain: {{value: half_bid, ruling: "The test table pays each defender half the bid for a bomb."}}
    half_bid_rounding: {{value: down, ruling: "The test table rounds half the bid down."}}
    defenders_paid_from: {{value: 5, ruling: "The test table pays the defenders only from a player's fifth bomb."}}
  defender_lock:
    from: {{value: 545, ruling: "The test table locks a defender from 545."}}
"""


LOSES_THE_BID = """\
profile: {name}
title: Polish tournament where a bomb costs the winning bid and a penalty from the first
status: draft
summary: Polish tournament rules whose bombing declarer loses the winning bid and the penalty from the first bomb, with the defenders paid half the bid from the third, and other changes besides.
extends: polish-tournament
sources: {{}}
rules:
  auction:
    marriage_needed_above: {{value: 545, ruling: "The test table asks for no marriage below its maximum."}}
    max_bid: {{value: 505, ruling: "The test table caps bids and contracts at 505."}}
    reentry: {{value: true, ruling: "The test table lets a player who passed bid again after a new bid."}}
  play:
    overtrump_against: {{value: declarer, ruling: "The test table owes an overtrump only against the declarer."}}
  marriages:
    first_trick: {{value: true, ruling: "The test table lets a marriage be declared on the first trick."}}
    last_trick: {{value: 8, ruling: "The test table lets a marriage be declared up to the last trick."}}
  dump:
    enabled: {{value: true, ruling: "The test table has the dump."}}
  giving_up:
    declarer_loses: {{value: winning_bid, ruling: "The test table takes the winning bid off a declarer who bombs."}}
    penalty_from: {{value: 1, ruling: "The test table charges the penalty from a player's first bomb."}}
    defender_gain: {{value: half_bid, ruling: "The test table pays each defender half the bid for a bomb."}}
    defenders_paid_from: {{value: 3, ruling: "The test table pays the defenders only from a player's third bomb."}}
"""


DECLARED_BELOW = """\
profile: {name}
title: Polish tournament with spades and diamonds declared below the profile's values
status: draft
summary: Polish tournament rules with marriages worth 45, 90, 55 and 90, a marriage needed above 255, bids up to 320 in steps of 20, one step at a time, and a free opening.
extends: polish-tournament
sources: {{}}
rules:
  auction:
    opening: {{value: at_least, ruling: "The test table lets the first bid be any amount from the opening bid."}}
    bid_step: {{value: 20, ruling: "The test table bids in steps of 20."}}
    raise: {{value: one_step, ruling: "The test table raises a bid one step at a time."}}
    marriage_needed_above: {{value: 255, ruling: "The test table asks for a marriage above 255."}}
    max_bid: {{value: 320, ruling: "The test table caps bids and contracts at 320."}}
  marriages:
    values: {{value: {{S: 45, C: 90, D: 55, H: 90}}, ruling: "The test table gives its marriages these values."}}
"""


STOPPED_HOLDERS = """\
profile: {name}
title: Polish with a stop at 180 that hides the holders' ceilings
status: draft
summary: Polish rules with a stop at 180, a marriage needed above 100, marriages worth 120, 145, 105 and 90, four aces worth 45, bids up to 450, the talon never shown, no step on the contract and no giving up.
extends: polish
sources: {{}}
rules:
  auction:
    stop_at: {{value: 180, ruling: "The test table lets no bid pass 180 before the auction stands at it."}}
    marriage_needed_above: {{value: 100, ruling: "The test table asks for a marriage above 100."}}
    max_bid: {{value: 450, ruling: "The test table caps bids at 450."}}
  talon:
    shown: {{value: never, ruling: "The test table never shows the talon."}}
    contract_step: {{value: false, ruling: "The test table fixes contracts at any amount."}}
  giving_up:
    allowed: {{value: false, ruling: "The test table does not allow giving up."}}
  marriages:
    values: {{value: {{S: 120, C: 145, D: 105, H: 90}}, ruling: "The test table gives its marriages these values."}}
    four_aces: {{value: 45, ruling: "The test table counts four aces as 45."}}
"""


LOW_LOCK = """\
profile: {name}
title: Skill games with a low lock on the defenders
status: draft
summary: Skill-games rules with the defenders locked from 115, a declarer who loses nothing on giving up, a marriage needed above 105, bids up to 130, one marriage setting the trump, a bolt for no tricks, no barrel and no redeals.
extends: skill-games
sources: {{}}
rules:
  auction:
    marriage_needed_above: {{value: 105, ruling: "The test table asks for a marriage above 105."}}
    max_bid: {{value: 130, ruling: "The test table caps bids at 130."}}
  giving_up:
    declarer_loses: {{value: nothing, ruling: "The test table charges a declarer who gives up nothing."}}
    half_bid_rounding: {{value: exact, ruling: "The test table pays the defenders exactly half the bid."}}
  marriages:
    one_trump: {{value: true, ruling: "The test table lets one marriage set the trump."}}
  bolts:
    zero: {{value: no_tricks, ruling: "The test table gives a bolt for no tricks."}}
  barrel:
    enabled: {{value: false, ruling: "The test table has no barrel."}}
  defender_lock:
    enabled: {{value: true, ruling: "The test table locks the defenders."}}
    from: {{value: 115, ruling: "The test table locks them from 115."}}
  redeals:
    rules: {{value: [], ruling: "The test table has no redeals."}}
"""


CLUBS_40 = """\
profile: {name}
title: Polish tournament with a clubs marriage of 40 no deal declares
status: draft
summary: Polish tournament rules with other marriage values, a marriage needed above 240, bids up to 430 and a free opening.
extends: polish-tournament
sources: {{}}
rules:
  auction:
    opening: {{value: at_least, ruling: "The test table lets the first bid be any amount from the opening bid."}}
    marriage_needed_above: {{value: 240, ruling: "The test table asks for a marriage above 240."}}
    max_bid: {{value: 430, ruling: "The test table caps bids and contracts at 430."}}
  marriages:
    values: {{value: {{S: 135, C: 40, D: 40, H: 130}}, ruling: "The test table gives its marriages these values."}}
"""


HOLDERS = """\
profile: {name}
title: Polish tournament with marriage values no declaration shows
status: draft
summary: Polish tournament rules with a marriage needed above 460, bids up to 600 and marriages worth 20, 35, 35 and 70.
extends: polish-tournament
sources: {{}}
rules:
  auction:
    marriage_needed_above: {{value: 460, ruling: "The test table asks for a marriage above 460."}}
    max_bid: {{value: 600, ruling: "The test table caps bids and contracts at 600."}}
  marriages:
    values: {{value: {{S: 20, C: 35, D: 35, H: 70}}, ruling: "The test table gives its marriages these values."}}
"""


FOUR_ACES_OPEN = """\
profile: {name}
title: Polish with no ceiling, a condition of 375 and four aces counted as a marriage
status: draft
summary: Polish rules raised one step at a time, with no marriage ceiling, a marriage needed above 375, bids up to 600, four aces worth 55 that count as a marriage, an opener who may pass, half the bid to the defenders on giving up, the next dealer after a redeal, no duty to trump or overtrump and a match won only on the target exactly.
extends: polish
sources: {{}}
rules:
  deal:
    dealer_after_redeal: {{value: next, ruling: "The test table moves the deal on after a redeal."}}
  auction:
    raise: {{value: one_step, ruling: "The test table raises one step at a time."}}
    marriage_needed_above: {{value: 375, ruling: "The test table asks for a marriage above 375."}}
    ceiling: {{value: none, ruling: "The test table has no marriage ceiling."}}
    max_bid: {{value: 600, ruling: "The test table caps bids at 600."}}
    opener_may_pass: {{value: true, ruling: "The test table lets the opener pass."}}
  giving_up:
    defender_gain: {{value: half_bid, ruling: "The test table pays the defenders half the bid."}}
  play:
    must_trump: {{value: false, ruling: "The test table asks no one to trump."}}
    must_overtrump: {{value: false, ruling: "The test table asks no one to overtrump."}}
  marriages:
    four_aces: {{value: 55, ruling: "The test table counts four aces as 55."}}
  match_end:
    over_target: {{value: exact_only, ruling: "The test table ends the match on the target exactly."}}
"""


LOW_DUMP = """\
profile: {name}
title: Polish tournament with a dump at 110 among many other changes
status: draft
summary: Polish tournament rules with a dump of a score of exactly 110, bids and contracts up to 130 with no marriage ceiling and a marriage needed above 205, defenders paid from the sixth give-up, no duty to beat or undertrump, marriages declared up to the fifth trick, four aces worth 215, bolts, the barrel, a lock that stops counting and a target of 2470.
extends: polish-tournament
sources: {{}}
rules:
  auction:
    marriage_needed_above: {{value: 205, ruling: "The test table asks for a marriage above 205."}}
    ceiling: {{value: none, ruling: "The test table has no marriage ceiling."}}
    max_bid: {{value: 130, ruling: "The test table caps bids at 130."}}
    pre_talon_max: {{value: 130, ruling: "The test table caps bids before the talon at 130."}}
  giving_up:
    defenders_paid_from: {{value: 6, ruling: "The test table pays the defenders from the sixth give-up."}}
  play:
    must_beat: {{value: false, ruling: "The test table asks no one to beat."}}
    must_undertrump: {{value: false, ruling: "The test table asks no one to undertrump."}}
  marriages:
    last_trick: {{value: 5, ruling: "The test table allows declarations up to the fifth trick."}}
    four_aces: {{value: 215, ruling: "The test table counts four aces as 215."}}
  bolts:
    enabled: {{value: true, ruling: "The test table counts bolts."}}
  barrel:
    enabled: {{value: true, ruling: "The test table has a barrel."}}
  defender_lock:
    mode: {{value: stop_counting, ruling: "The test table stops the defenders' counting."}}
  dump:
    enabled: {{value: true, ruling: "The test table dumps a score of exactly its dump score."}}
    score: {{value: 110, ruling: "The test table dumps a score of 110."}}
  match_end:
    target: {{value: 2470, ruling: "The test table plays to 2470."}}
"""


ONE_STEP = """\
profile: {name}
title: Polish raised one step of 20 at a time
status: draft
summary: Polish rules in which each bid raises the last by one step of 20, with no marriage ceiling, and no contract raise.
extends: polish
sources: {{}}
rules:
  auction:
    bid_step: {{value: 20, ruling: "The test table bids in steps of 20."}}
    raise: {{value: one_step, ruling: "The test table lets a bid raise the last by one step only."}}
    ceiling: {{value: none, ruling: "The test table has no marriage ceiling."}}
    marriage_needed_above: {{value: null, ruling: "The test table asks for no marriage to bid high."}}
    max_bid: {{value: 535, ruling: "The test table caps bids and contracts at 535."}}
    opener_may_pass: {{value: true, ruling: "The test table lets the opener pass."}}
  talon:
    contract_raise: {{value: false, ruling: "The test table lets no declarer raise the contract after the talon."}}
"""


ACES_FIRST = """\
profile: {name}
title: Polish tournament declaring four aces on the first trick
status: draft
summary: Polish tournament rules with four aces worth 250 that may be declared from the first trick on.
extends: polish-tournament
sources: {{}}
rules:
  marriages:
    four_aces: {{value: 250, ruling: "The test table scores four aces declared at 250."}}
    first_trick: {{value: true, ruling: "The test table allows declarations on the first trick."}}
"""


SHIFTED = """\
profile: {name}
title: Classic with a marriage ceiling over 160 and an opening of 205
status: draft
summary: Classic rules with a marriage ceiling over a condition of 160, an opening bid of 205 and bids up to 330.
extends: classic
sources: {{}}
rules:
  auction:
    ceiling: {{value: marriages_held, ruling: "The test table caps a bidder at the condition plus the marriages held."}}
    marriage_needed_above: {{value: 160, ruling: "The test table asks for a marriage above 160."}}
    max_bid: {{value: 330, ruling: "The test table caps bids and contracts at 330."}}
    opening_bid: {{value: 205, ruling: "The test table opens the bidding at 205."}}
"""


def _house(tmp_path: Path, text: str, name: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text.format(name=name), encoding="utf-8")
    variants.resolve(str(path))  # the double is a valid house profile
    return path


def _fit(profile: str, command: list[str], *patterns: str) -> tuple[fit.FitResult, fit.Fitter]:
    cases = fit.cases_for({profile}, [], patterns)
    fitter = fit.Fitter(profile, cases, command)
    try:
        return fitter.run(), fitter
    finally:
        fitter.close()


def _value(rules: fit.Rules, knob: str) -> object:
    section, _, name = knob.partition(".")
    return rules[section][name]



@pytest.mark.slow
def test_a_stand_in_maximum_moves_to_the_bids_before_the_talon(tmp_path: Path) -> None:
    """Marriage holders bid up to 350 and take contracts up to 380. A maximum of 350 plays
    like the cap on bids before the talon in every auction; raising it to 380 alone lets
    holders bid 380 (it breaks auctions that matched), and a cap of 350 on the bids before
    the talon alone changes nothing while the maximum is 350. Only the maximum raised with its
    350 moved to the bids before the talon reproduces both."""
    path = _house(tmp_path, PRE_TALON, "pre-talon")
    result, _ = _fit("polish", [*REFERENCE_COMMAND, "--rules", str(path)])
    assert not result.residual
    assert _value(result.rules, "auction.max_bid") == 380
    assert _value(result.rules, "auction.pre_talon_max") == 350


@pytest.mark.slow
def test_a_condition_the_contracts_show_is_found_with_the_two_switches_it_needs(tmp_path: Path) -> None:
    """Bids before the talon stop at 330, so only the contracts show the marriage condition of
    340: a hand with no marriage, even counting the talon's cards, is offered contracts up to
    340. Under the auction's earlier readings (330, the auctions' top) 340 is never tried, and
    340 alone, under the profile's marriage ceiling, breaks the contracts of every marriage
    holder: it needs the ceiling gone and then the talon's cards counted, two switches beside
    it. No residual is left that a knob explains. No case has a bid of 330 before the talon,
    so an auction stopped at 330 plays as bids capped at 330: the file keeps one and names
    the other as equally consistent in its place."""
    path = _house(tmp_path, TALON_HAND, "talon-hand")
    result, _ = _fit("skill-games", [*REFERENCE_COMMAND, "--rules", str(path)])
    assert not result.residual
    assert _value(result.rules, "auction.marriage_needed_above") == 340
    assert _value(result.rules, "auction.ceiling") == "none"
    assert _value(result.rules, "talon.contract_ceiling_hand") == "hand_with_talon"
    capped = {k: _value(result.rules, k) for k in ("auction.stop_at", "auction.pre_talon_max")}
    kept, other = ("auction.stop_at", "auction.pre_talon_max") if capped["auction.stop_at"] else (
        "auction.pre_talon_max", "auction.stop_at")
    assert capped == {kept: 330, other: None}
    assert fit.Change(other, 330) in result.in_its_place[kept]
    text = fit.house_yaml(variants.resolve("skill-games"), result.rules, result.accepted, "fitted", "the table",
                          result.equivalents, result.in_its_place)
    ruling = yaml.safe_load(text)["rules"]["auction"][kept.partition(".")[2]]["ruling"]
    assert f"with this knob at null as skill-games has it: {other}: 330." in ruling


@pytest.mark.slow
def test_a_bid_step_every_auction_shows_is_searched_in_a_wide_group(tmp_path: Path) -> None:
    """Every case bids 100 first, which this table refuses (it opens at 110), so each case
    shows one legal set: bids from 110 to 230 in tens. Their group is decided by thirteen
    knobs, more than are searched without the sample's own knob lists, and the sample's
    cases were written for other rules than the step: the step is searched because the two
    sides offered bids at other steps. No residual is left that a knob explains."""
    path = _house(tmp_path, TENS, "tens")
    result, _ = _fit("skill-games", [*REFERENCE_COMMAND, "--rules", str(path)])
    assert not result.residual
    assert _value(result.rules, "auction.bid_step") == 10


@pytest.mark.slow
def test_a_count_the_give_up_events_show_is_tried_for_a_count_knob(tmp_path: Path) -> None:
    """Defenders are paid nothing for a player's first four bombs and half the bid (100: 50
    each) for the fifth. The fifth shows only as the give-up of count 5 scored apart, among
    the score numbers of the locked defenders' deals, which crowd a 5 out of the numbers read.
    A gain of 0 plays the first four bombs right and leaves the fifth as a residual no knob
    explains (false); read from the give-up events, paid from the fifth with half the bid
    plays all five."""
    path = _house(tmp_path, FIFTH_BOMB, "fifth-bomb")
    result, _ = _fit("polish-tournament", [*REFERENCE_COMMAND, "--rules", str(path)])
    assert not result.residual
    assert _value(result.rules, "giving_up.defenders_paid_from") == 5
    fixed_50 = _value(result.rules, "giving_up.defender_gain") == "fixed" and _value(
        result.rules, "giving_up.defender_gain_amount") == 50
    assert _value(result.rules, "giving_up.defender_gain") == "half_bid" or fixed_50


@pytest.mark.slow
def test_a_count_that_does_nothing_alone_is_searched_beside_the_switch_it_needs(tmp_path: Path) -> None:
    """Four give-up knobs move together and each alone changes no observation: the penalty
    from the first bomb shows only where the declarer also loses the winning bid (a deal's
    deltas: the bid and the 120 penalty off the declarer, where polish tournament takes
    nothing), and the defenders' half bid only from the third bomb. Beside them the table
    changes seven knobs of other sections, and the engine answers marriages ``unsupported``
    (the benchmark's seed 27, v20): the give-up group is searched among some thirty knobs. The joint search carries
    a count that does nothing alone beside a switch, as it carries a switch; before, the
    penalty count was dropped as a number and the whole give-up score was left as a residual
    no knob explains (false)."""
    path = _house(tmp_path, LOSES_THE_BID, "loses-the-bid")
    engine = [*PARTIAL, "marriage", "--rules", str(path)]
    result, _ = _fit("polish-tournament", engine)
    assert not result.residual
    assert _value(result.rules, "giving_up.declarer_loses") == "winning_bid"
    assert _value(result.rules, "giving_up.penalty_from") == 1
    assert _value(result.rules, "giving_up.defender_gain") == "half_bid"


@pytest.mark.slow
def test_a_marriage_table_read_from_the_declarations_is_completed_by_the_condition_that_keeps_a_ceiling(
        tmp_path: Path) -> None:
    """The declarations show spades at 45 and diamonds at 55. Taken alone under the profile's
    marriage ceiling, that table lowers a spades holder's ceiling by 15 and breaks the cases
    whose auctions the engine plays up to the condition plus the worth. A condition moved up
    by the same 15 (240 to 255) keeps the holders' ceilings where the auctions showed them:
    the pair plays every case (the benchmark's seed 31, v15). Before, the condition was
    completed only by small counts, and the declared points were left as a residual no knob
    explains (false), beside a table of 60, 60, 60 and 90."""
    path = _house(tmp_path, DECLARED_BELOW, "declared-below")
    result, _ = _fit("polish-tournament", [*REFERENCE_COMMAND, "--rules", str(path)])
    assert not result.residual
    table = _value(result.rules, "marriages.values")
    assert (table["S"], table["D"], table["H"]) == (45, 55, 90)


@pytest.mark.slow
def test_a_marriage_table_hidden_by_a_stop_is_read_from_a_refusal_above_a_holders_ceiling(tmp_path: Path) -> None:
    """Under a stop at 180 every holder's legal set ends at 180 until the auction stands
    there, so each shows only the stop. Only a hearts holder then offered 190 alone and
    refused 200 as above its ceiling shows its worth over the condition of 100: 90 to 99
    (condition plus worth reaches 190, stays below 200). On the parent the wide search
    never tried a table, took no ceiling at all with a cap of 190 before the talon (both
    wrong), and called the three refusals "a rule the schema has no knob for" (false); the
    benchmark's seed 26, v18, which also changes four more knobs."""
    path = _house(tmp_path, STOPPED_HOLDERS, "stopped-holders")
    result, _ = _fit("polish", [*REFERENCE_COMMAND, "--rules", str(path)])
    assert not result.residual
    assert _value(result.rules, "auction.ceiling") == "marriages_held"
    assert _value(result.rules, "auction.pre_talon_max") is None
    assert 90 <= _value(result.rules, "marriages.values")["H"] <= 95


@pytest.mark.slow
def test_a_switch_completing_a_change_brings_the_number_it_switches_on(tmp_path: Path) -> None:
    """A lock on the defenders from 115 stops their points on scores the corpus reaches,
    a give-up's half bid included. Defenders paid from the hundredth give-up (never) stand in
    for it on the give-ups; put back, the lock switched on beside it still does nothing from
    the profile's 800. The completing switch now takes the numbers it switches on at their
    first readings, and the three together reproduce every case. On the parent fit kept the
    stand-in (wrong) and left 15 observations as a residual (the benchmark's seed 29, v10,
    which also has a mutant)."""
    path = _house(tmp_path, LOW_LOCK, "low-lock")
    result, _ = _fit("skill-games", [*REFERENCE_COMMAND, "--rules", str(path)])
    assert not result.residual
    assert _value(result.rules, "defender_lock.enabled") is True
    assert _value(result.rules, "giving_up.defenders_paid_from") == 1


@pytest.mark.slow
def test_a_marriage_no_deal_declares_is_read_from_its_holders_highest_bids(tmp_path: Path) -> None:
    """No deal of the corpus declares a clubs marriage under these rules, so the events show
    spades, diamonds and hearts at 135, 40 and 130 but nothing of clubs at 40. Under the
    marriage ceiling (the condition, 240, plus the marriages held) a holder of clubs alone is
    offered bids up to 280 where the reference, with clubs at 60, offers 300: 20 below. The clubs value is
    read from those legal sets; the table with clubs at 60 leaves them as a residual no knob
    explains (false)."""
    path = _house(tmp_path, CLUBS_40, "clubs-40")
    result, _ = _fit("polish-tournament", [*REFERENCE_COMMAND, "--rules", str(path)])
    assert not result.residual
    assert _value(result.rules, "marriages.values") == {"S": 135, "C": 40, "D": 40, "H": 130}


@pytest.mark.slow
def test_a_marriage_table_is_read_from_the_holders_highest_bids_when_no_declaration_shows(tmp_path: Path) -> None:
    """The engine answers every marriage declaration ``unsupported``, so no event shows a
    marriage's points. Under the marriage ceiling a holder is offered bids up to the
    condition (460) plus the marriages held, to the step below: spades alone up to 480
    (20 to 29), clubs or diamonds alone 490 (30 to 39 each), hearts alone 530 (70 to 79),
    clubs with diamonds 530 (70 to 79 together: 35 each on a grid of 5). Only that table
    plays every holder's bids; on the parent fit took a maximum of 530 for the hearts
    holders' bids and left 55 cases as a residual no knob explains (false)."""
    path = _house(tmp_path, HOLDERS, "holders")
    result, _ = _fit("polish-tournament", [*PARTIAL, "marriage", "--rules", str(path)])
    assert not result.residual
    assert _value(result.rules, "marriages.values") == {"S": 20, "C": 35, "D": 35, "H": 70}
    assert _value(result.rules, "auction.max_bid") == 600


@pytest.mark.slow
def test_a_sample_set_right_by_a_stand_in_is_widened_by_the_cases_it_broke(tmp_path: Path) -> None:
    """Bids are raised one step at a time, so each bid legal set offers one amount and the
    contracts show the caps: a declarer with no marriage up to 370 (a marriage above 375),
    holders of a marriage or of four aces (55, counted as a marriage) up to 600 (no ceiling).
    Marriages are answered ``unsupported``. The group's sample held three declarers with no
    marriage, all set right by a maximum of 370, which breaks every holder over all cases; on
    the parent fit then kept a condition of 500 with no ceiling on the contract and called 31
    cases "a rule the schema has no knob for" (false; the benchmark's seed 39, v29). On the
    sample widened by the cases the maximum broke, the search from the contract's ceiling put
    back finds no ceiling with the condition, and four aces that count follow."""
    path = _house(tmp_path, FOUR_ACES_OPEN, "four-aces-open")
    result, _ = _fit("polish", [*PARTIAL, "marriage", "--rules", str(path)])
    assert not result.residual
    assert _value(result.rules, "auction.ceiling") == "none"
    assert _value(result.rules, "auction.marriage_needed_above") in (370, 375)
    assert _value(result.rules, "marriages.four_aces") is not None


@pytest.mark.slow
def test_an_event_only_the_engine_sent_names_the_knobs_a_wide_group_searches_first(tmp_path: Path) -> None:
    """In two cases a defender reaches 110 exactly and the engine dumps the score to 0 with a
    ``dump`` event. The observation's finding is the deal's score, decided by some forty
    knobs; the beam over them spent its budget before the dump section, last in the list,
    and on the parent fit left the dump off and the two cases as "a rule the schema has no
    knob for" (false; the benchmark's seed 36, v17, which also answers give-ups ``unsupported``).
    The event type only one side sent names the dump's knobs, searched first."""
    path = _house(tmp_path, LOW_DUMP, "low-dump")
    result, _ = _fit("polish-tournament", [*PARTIAL, "give_up", "--rules", str(path)])
    assert not result.residual
    assert _value(result.rules, "dump.enabled") is True
    assert _value(result.rules, "dump.score") == 110


@pytest.mark.slow
def test_a_step_shown_only_from_the_high_bid_to_the_one_bid_offered_is_read(tmp_path: Path) -> None:
    """Each bid raises the last by one step of 20, so each bid legal set offers one amount
    (120 over a high bid of 100) and shows no step between its amounts. The step is read
    from the high bid to the least bid offered over it. On the parent fit took a step of 4
    and left 178 cases as a residual no knob explains (false)."""
    path = _house(tmp_path, ONE_STEP, "one-step")
    result, _ = _fit("polish", [*REFERENCE_COMMAND, "--rules", str(path)])
    assert not result.residual
    assert _value(result.rules, "auction.bid_step") == 20
    assert _value(result.rules, "auction.raise") == "one_step"


@pytest.mark.slow
def test_four_aces_offered_on_the_first_lead_are_searched_with_the_first_trick(tmp_path: Path) -> None:
    """With marriages unsupported, the only declarations the engine offers are four aces, on
    the first lead too. The legal sets that differ there are decided by the trick
    declarations may be made on as well as by the aces' worth (spec/diagnosis.yaml,
    ``legal.play.aces``); on the parent only the worth and the declaration were searched,
    and 8 cases were left as a residual no knob explains (false)."""
    path = _house(tmp_path, ACES_FIRST, "aces-first")
    result, _ = _fit("polish-tournament", [*PARTIAL, "marriage", "--rules", str(path)])
    assert not result.residual
    assert _value(result.rules, "marriages.first_trick") is True
    assert _value(result.rules, "marriages.four_aces") == 250


@pytest.mark.slow
def test_a_marriage_table_is_not_read_over_a_condition_the_bidders_contradict(tmp_path: Path) -> None:
    """A bidder with no marriage is offered no bid (the condition, 160, is below the opening
    of 205), so only holders show the ceiling: clubs alone up to 220 (160 + 60), diamonds
    alone 240, clubs with diamonds 300. Read over classic's condition of 120, clubs alone
    would be worth 100 and diamonds 120, 220 together, where the pair shows 180: no table
    agrees over 120. Over 160, the condition under which the holders keep classic's worths,
    the table is classic's and the condition is the change. On the parent fit took clubs,
    diamonds and hearts 40 above classic's with a maximum of 300 and left a residual."""
    path = _house(tmp_path, SHIFTED, "shifted")
    result, _ = _fit("classic", [*REFERENCE_COMMAND, "--rules", str(path)])
    assert not result.residual
    assert _value(result.rules, "auction.marriage_needed_above") == 160
    assert _value(result.rules, "marriages.values") == {"S": 40, "C": 60, "D": 80, "H": 100}
    assert _value(result.rules, "auction.max_bid") == 330


@pytest.mark.slow
def test_a_group_searched_in_vain_is_not_searched_again_under_the_same_rules() -> None:
    """A later pass that reaches the same rules finds the same nothing: the search is asked
    once for them, and again once the rules differ."""
    cases = fit.cases_for({"classic"}, [], ["classic/auction/*"])
    fitter = fit.Fitter("classic", cases, REFERENCE_COMMAND)
    asked: list[str] = []

    def searching(rules: fit.Rules, group: fit.Group, ids: list[str]) -> None:
        asked.append(json.dumps(rules, sort_keys=True))

    fitter._searching = searching  # type: ignore[method-assign]
    try:
        rules = variants.thaw(variants.resolve("classic").rules)
        group = fit.Group(("auction.max_bid",), 3, ("classic/auction/a",), fitter.policy.sample)
        ids = [case.id for case in cases]
        assert fitter._searched(rules, group, ids) is None
        assert fitter._searched(variants.thaw(variants.resolve("classic").rules), group, ids) is None
        assert len(asked) == 1
        assert fitter._searched(fit.set_knob(rules, [fit.Change("auction.max_bid", 300)]), group, ids) is None
        assert len(asked) == 2
    finally:
        fitter.close()


@pytest.mark.slow
def test_a_switch_and_the_switches_it_needs_are_found_in_a_wide_group(tmp_path: Path) -> None:
    """The barrel's observations are decided by some sixty knobs, and switched on it brings a
    dozen numbers of ten values each: its arrival cap, a switch, is tried beside it before
    they are. The two set the barrel's cases right and break the wins by a jump over the
    barrel, which the jump's own switch then completes: no residual is left that a knob
    explains."""
    path = _house(tmp_path, BARREL, "barrel")
    result, _ = _fit("polish-tournament", [*REFERENCE_COMMAND, "--rules", str(path)])
    assert not result.residual
    assert fit.changed_knobs(variants.resolve("polish-tournament"), result.rules) == [
        "barrel.enabled", "barrel.jump_over_wins", "barrel.arrival_cap"]


@pytest.mark.slow
def test_a_maximum_no_bundled_profile_uses_is_read_from_the_replies(tmp_path: Path) -> None:
    path = _house(tmp_path, CAPPED, "capped")
    result, _ = _fit("classic", [*REFERENCE_COMMAND, "--rules", str(path)], "classic/auction/*")
    assert not result.residual
    assert fit.changed_knobs(variants.resolve("classic"), result.rules) == ["auction.max_bid"]
    assert result.rules["auction"]["max_bid"] == 300
    assert result.accepted[0].observations_fixed > 0


@pytest.mark.slow
def test_a_maximum_shown_only_by_a_refusal_reason_is_found(tmp_path: Path) -> None:
    """A cap no legal set shows (bids go a step at a time) is read from the bid it refuses
    for another reason than the transcript: no residual is left that a knob explains."""
    path = _house(tmp_path, STEPWISE, "stepwise")
    result, _ = _fit("polish", [*REFERENCE_COMMAND, "--rules", str(path)], "polish/auction/*")
    assert not result.residual
    assert _value(result.rules, "auction.raise") == "one_step"
    assert _value(result.rules, "auction.max_bid") in (300, 305)  # the same on a grid of ten


@pytest.mark.slow
def test_coupled_knobs_move_together(tmp_path: Path) -> None:
    path = _house(tmp_path, COUPLED, "coupled")
    result, fitter = _fit("polish", [*REFERENCE_COMMAND, "--rules", str(path)], "polish/auction/ceiling-*")
    assert not result.residual
    assert _value(result.rules, "auction.max_bid") == 300
    assert _value(result.rules, "auction.ceiling") == "none"
    _no_single_change_helps(fitter, result)


@pytest.mark.slow
def test_a_ceiling_and_the_four_aces_it_counts_move_together(tmp_path: Path) -> None:
    path = _house(tmp_path, ACES, "aces")
    result, fitter = _fit("classic", [*REFERENCE_COMMAND, "--rules", str(path)], "classic/auction/*", "classic/talon/*")
    assert not result.residual, "the pair reproduces every legal set: no missing axis, no bug"
    secret = variants.thaw(variants.resolve(str(path)).rules)
    assert {k: _value(result.rules, k) for k in fit.changed_knobs(variants.resolve("classic"), result.rules)} == {
        k: _value(secret, k) for k in ("auction.ceiling", "auction.marriage_needed_above", "auction.max_bid",
                                       "marriages.four_aces")}
    _no_single_change_helps(fitter, result)


def _no_single_change_helps(fitter: fit.Fitter, result: fit.FitResult) -> None:
    """The stop rule, checked from outside: every single change of a knob that decides a
    differing observation, to each of its candidate values, on every case."""
    ids = [case.id for case in fitter.cases]
    fitter.reference = observe.Pool(REFERENCE_COMMAND, 1, batch=True)
    try:
        now = fitter.weigh(result.rules, ids)
        before = evidence.missed(now.values())
        knobs = {k for e in now.values() for d in e.differing for k in evidence.deciding_knobs(d)} & fitter.live(result.rules)
        for knob in sorted(knobs):
            for value in fitter._values(knob, result.rules):
                changed = fit.set_knob(result.rules, [fit.Change(knob, value)])
                if not fitter.consistent(changed):
                    continue
                after = fitter.weigh(changed, ids)
                breaks = any(now[c].matches and not after[c].matches for c in ids)
                assert breaks or evidence.missed(after.values()) >= before, f"{knob}: {value!r} still helps"
    finally:
        fitter.reference.close()


@pytest.mark.slow
def test_a_many_difference_engine_with_a_bug_keeps_to_the_stop_rule(tmp_path: Path) -> None:
    """Five knobs of four sections, the marriage table among them, and a card order no knob
    writes down (ten below king): the marriage cases show the table in their events, so it is
    read from them; what the bug leaves differing no single change can set right."""
    path = _house(tmp_path, FIXED_RULES, "fixed-rules")
    command = [sys.executable, "-m", "mutants.serve", "--rules", str(path), "ten-below-king"]
    result, fitter = _fit("classic", command, "classic/marriages/*", "classic/play/*")
    # no marriage or play case of classic declares spades: that suit keeps the profile's own 40
    assert _value(result.rules, "marriages.values") == {"S": 40, "C": 100, "D": 40, "H": 60}
    secret = variants.thaw(variants.resolve(str(path)).rules)
    classic = variants.resolve("classic")
    wrong = [k for k in fit.changed_knobs(classic, result.rules) if k != "marriages.values"
             and _value(result.rules, k) != _value(secret, k) and _value(secret, k) not in result.equivalents.get(k, [])]
    assert wrong == []
    assert result.residual, "the card order shows on classic's play cases"
    _no_single_change_helps(fitter, result)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [3])
def test_a_seeded_variant_keeps_to_the_stop_rule(tmp_path: Path, seed: int) -> None:
    """A seeded secret: four knobs of classic changed to values fit may try, served with a bug
    no knob expresses so that differences are left over; when fit stops, no single change
    of a knob that decides them to any of its values reproduces more without breaking a
    matching case."""
    import random

    from variants.checks import CONSISTENCY_CHECKS

    rng = random.Random(seed)
    classic = variants.resolve("classic")
    rules: fit.Rules = variants.thaw(classic.rules)
    while len(fit.changed_knobs(classic, rules)) < 4:
        knob = rng.choice([k for k in fit.searchable_knobs(classic, rules) if k.startswith(("auction.", "scoring.", "marriages."))])
        section, _, name = knob.partition(".")
        changed = fit.set_knob(rules, [fit.Change(knob, rng.choice(candidates.values(knob, rules[section][name])))])
        rules = changed if all(check(changed) is None for check in CONSISTENCY_CHECKS) else rules
    path = tmp_path / "seeded.yaml"
    path.write_text(fit.house_yaml(classic, rules, [], "seeded", "a seeded table"), encoding="utf-8")
    variants.resolve(str(path))
    command = [sys.executable, "-m", "mutants.serve", "--rules", str(path), "king-queen-points-swapped"]
    result, fitter = _fit("classic", command, "classic/scoring/*")
    assert result.residual, "the card points show on classic's scoring cases"
    _no_single_change_helps(fitter, result)


@pytest.mark.slow
def test_the_stop_rule_runs_again_once_a_change_with_only_downstream_evidence_is_out(tmp_path: Path) -> None:
    """Seed 13, variant 4, served with the declarer scoring the points taken: a marriage line
    fit took early reproduces only observations downstream of differences left, so it goes
    last; without it a discard while void (``play.must_trump: false``, the table's rule) sets
    right 406 observations and breaks nothing, and the stop rule, run again, takes it."""
    path = _house(tmp_path, SEED_13_4, "seed-13-4")
    command = [sys.executable, "-m", "mutants.serve", "--rules", str(path), "declarer-scores-total"]
    result, fitter = _fit("polish", command)
    assert _value(result.rules, "play.must_trump") is False
    assert _value(result.rules, "marriages.last_trick") == _value(variants.thaw(variants.resolve("polish").rules),
                                                                  "marriages.last_trick")
    fitter.reference = observe.Pool(REFERENCE_COMMAND, 1, batch=True)
    try:
        assert fitter._single_change(result.rules, [case.id for case in fitter.cases]) is None
    finally:
        fitter.reference.close()


@pytest.mark.slow
def test_a_bug_no_knob_expresses_is_the_residual_and_named(tmp_path: Path) -> None:
    from mutants.catalogue import CATALOGUE
    from mutants.matrix import names_the_mistake

    path = _house(tmp_path, CAPPED, "capped")
    name = "ten-below-king"  # a card order no knob writes down
    result, fitter = _fit("classic", [sys.executable, "-m", "mutants.serve", "--rules", str(path), name], "classic/play/*")
    causes = fit.residual.causes(result.weighed, fitter.impl_records, result.exercised, "classic", fitter.tried)
    assert causes, "the mutant shows on classic's play cases"
    assert all(names_the_mistake(c.signature, list(c.knobs), CATALOGUE[name].knobs) for c in causes)
    # the residual claims what the stop rule tried, knob by knob, and no joint value it never tried
    for cause in causes:
        tried = [k for k in cause.knobs if fitter.tried.get(k)]
        assert tried, "the stop rule tried values of the knobs deciding the residual"
        assert all(f"{k}: {fitter.tried[k]}" in cause.why for k in tried)
        assert "joint" not in cause.why


@pytest.mark.slow
def test_an_action_declared_unsupported_is_unchecked(tmp_path: Path) -> None:
    path = _house(tmp_path, CAPPED, "capped")
    result, _ = _fit("classic", [*PARTIAL, "give_up", "--rules", str(path)], "classic/giving_up/*")
    assert not result.residual  # what the partial engine does not play is no evidence against any rule
    assert result.unchecked > 0
    assert fit.changed_knobs(variants.resolve("classic"), result.rules) == []



@pytest.mark.slow
def test_fit_writes_a_valid_house_file_and_a_verify_shaped_report(tmp_path: Path) -> None:
    path = _house(tmp_path, CAPPED, "capped")
    out, report = tmp_path / "fitted.yaml", tmp_path / "fit.json"
    thousand = [sys.executable, "-m", "conformance.cli"]
    done = subprocess.run([*thousand, "fit", "--profile", "classic", "-k", "classic/auction/*", "--output", str(out),
                           "--report", str(report), "--", *REFERENCE_COMMAND, "--rules", str(path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "max_bid" in out.read_text(encoding="utf-8") and "observation" in out.read_text(encoding="utf-8")
    assert subprocess.run([*thousand, "validate", str(out)], capture_output=True, timeout=120).returncode == 0
    document = json.loads(report.read_text(encoding="utf-8"))
    schema = json.loads((ROOT / "spec" / "schema" / "report.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(document, schema)
    assert document["groups"] == [] and document["exit_code"] == 0
    checked = subprocess.run([*thousand, "verify", "--rules", str(out), "-k", "classic/auction/*", "--",
                              *REFERENCE_COMMAND, "--rules", str(path)], capture_output=True, text=True, timeout=600)
    assert checked.returncode == 0, checked.stdout[-2000:]


@pytest.mark.parametrize("argv", [["fit", "--profile", "classic", "--report", "x.json"]])
def test_fit_without_a_command_is_a_usage_error(argv: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", "conformance.cli", *argv], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2



@pytest.mark.slow
def test_a_replay_repeating_an_earlier_reply_keeps_that_replays_evidence(tmp_path: Path) -> None:
    """A cap of 300 changes the cases whose bids reach past it and leaves the others alone:
    their replays repeat the replies under classic, and keep their evidence; every case's
    evidence is that of a replay weighed on its own."""
    cases = fit.cases_for({"classic"}, [], ["classic/auction/*"])
    ids = [case.id for case in cases]
    with _observing("classic", cases, [*REFERENCE_COMMAND, "--rules", str(_house(tmp_path, CAPPED, "capped"))]) as fitter:
        rules: fit.Rules = variants.thaw(fitter.profile.rules)
        capped = fit.set_knob(rules, [fit.Change("auction.max_bid", 300)])
        before, after = fitter.weigh(rules, ids), fitter.weigh(capped, ids)
        alone = observe.Pool(REFERENCE_COMMAND, batch=True)
        try:
            for case in cases:
                record = alone.observers[0].observe(case, "classic", {**fitter.document, "rules": capped})
                cut, unchecked = fitter.shown[case.id]
                assert after[case.id] == evidence.weigh(record, cut, fitter.partial, unchecked), case.id
        finally:
            alone.close()
    kept = [case_id for case_id in ids if after[case_id] is before[case_id]]
    assert kept and len(kept) < len(ids)


@contextlib.contextmanager
def _observing(profile: str, cases: Sequence[Transcript], command: list[str]) -> Iterator[fit.Fitter]:
    """A fitter of the profile that has observed the implementation on the cases, closed after."""
    fitter = fit.Fitter(profile, cases, command)
    try:
        fitter.observe_implementation()
        yield fitter
    finally:
        fitter.close()


def _observed_mutant(profile: str, pattern: str, mutant: str) -> fit.Fitter:
    """A fitter (closed) that has observed the mutant on the profile's cases matching ``pattern``."""
    with _observing(profile, fit.cases_for({profile}, [], [pattern]), [sys.executable, "-m", "mutants.serve", mutant]) as fitter:
        return fitter


def _benchmark() -> object:
    import importlib.util

    spec = importlib.util.spec_from_file_location("benchmark_fit", ROOT / "benchmarks" / "fit.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_mutant_a_knob_value_expresses_is_named_by_that_knob() -> None:
    """The mutant letting the opener pass plays as ``auction.opener_may_pass: true`` but for
    the all-pass ending: with no residual, fit named it when every value that changes play
    expresses the mistake, and missed it when some other value changes play too."""
    bench: object = _benchmark()
    named = getattr(bench, "mistake_named")
    about = getattr(bench, "about_the_mistake")
    assert about("opener-may-pass", "auction.opener_may_pass") and not about("opener-may-pass", "play.must_trump")
    knob = ["auction.opener_may_pass"]
    assert named("opener-may-pass", [], knob, knob, False) == "yes (a knob value expresses it)"
    assert named("opener-may-pass", [], [*knob, "play.must_trump"], knob, False) == "NO"
    assert named("opener-may-pass", [], knob, [], False) == "NO"
    assert named("opener-may-pass", [], [], [], True) == "unseen"


def test_a_value_adopted_for_another_that_plays_the_same_is_not_wrong() -> None:
    """Under classic (no ceiling, a maximum of 400) a marriage needed above 400 and above 570
    both mean never needed: putting 570 back changes no play; 200 in place of 400 does (a
    hand without a marriage may bid 205 to 400 under the one and not the other)."""
    bench: object = _benchmark()
    changes_play = getattr(bench, "changes_play")
    classic = variants.resolve("classic")
    cases = fit.cases_for({"classic"}, [], ["classic/auction/*"])
    rules = fit.set_knob(variants.thaw(classic.rules), [fit.Change("auction.marriage_needed_above", 400)])
    assert not changes_play(cases, classic, rules, "auction.marriage_needed_above", 570, 1)
    assert changes_play(cases, classic, rules, "auction.marriage_needed_above", 200, 1)


@pytest.mark.slow
def test_a_value_writing_down_a_mutants_legal_sets_expresses_it() -> None:
    """Polish asks a follower to beat the winning card and to overtrump. Under a mutant whose
    trick the highest card of the suit led wins, trumped or not, the winning card after a
    trump is still the led suit's: beating the led card after a trump is what its legal sets
    ask, so ``play.beat_after_trump: true`` reproduces more of them than polish's own false;
    a knob the play cases do not decide (the defenders' rounding) reproduces nothing more."""
    bench: object = _benchmark()
    expresses = getattr(bench, "expresses")
    fitter = _observed_mutant("polish", "polish/play/*", "trump-does-not-win")
    polish: fit.Rules = variants.thaw(variants.resolve("polish").rules)
    fitted = fit.set_knob(polish, [fit.Change("play.beat_after_trump", True)])
    assert expresses(fitter, fitted, "play.beat_after_trump", False, 1)
    rounded = fit.set_knob(polish, [fit.Change("scoring.defender_rounding", "exact")])
    assert not expresses(fitter, rounded, "scoring.defender_rounding", polish["scoring"]["defender_rounding"], 1)


@pytest.mark.slow
def test_arrivals_falling_back_express_the_mutant_that_sends_the_newcomer_back() -> None:
    """Under a mutant that makes an arriving player fall back instead of knocking off the
    occupant, ``barrel.crowding: arrivals_fall_back`` (the occupants stay, arrivals beyond the
    free places fall back) reproduces the barrel observations the mutant changes, and the
    mistake is about that knob: the value is counted as expressing it, not as wrong."""
    bench: object = _benchmark()
    expresses, about = getattr(bench, "expresses"), getattr(bench, "about_the_mistake")
    fitter = _observed_mutant("gambler-club", "gambler-club/barrel/*", "knock-off-penalises-newcomer")
    club: fit.Rules = variants.thaw(variants.resolve("gambler-club").rules)
    assert club["barrel"]["max_occupants"] is not None and club["barrel"]["crowding"] == "knock_off_occupants"
    fitted = fit.set_knob(club, [fit.Change("barrel.crowding", "arrivals_fall_back")])
    assert expresses(fitter, fitted, "barrel.crowding", "knock_off_occupants", 1)
    assert about("knock-off-penalises-newcomer", "barrel.crowding")


# Classic with a least contract of 380 to win from the barrel: a barrel player's made 120
# (880 + 120 = 1000) does not end the match. A match target of 1010 sets right the same two
# barrel cases, yet makes the declarer's 1000 on the tie case no win (two observations more
# missed on a case that was already missing some, so it breaks no matching case).
MIN_CONTRACT = """\
profile: {name}
title: Classic with a least barrel contract of 380
status: draft
summary: Classic, a player on the barrel wins only with a contract of 380 or more.
extends: classic
sources: {{}}
rules:
  barrel:
    min_contract: {{value: 380, ruling: "The test table needs a contract of 380 to win from the barrel."}}
"""


@pytest.mark.slow
@pytest.mark.parametrize("order", [1, -1])
def test_of_changes_that_each_help_the_one_fixing_most_over_every_case_is_taken(tmp_path: Path, order: int) -> None:
    """Both the least contract and a target of 1010 fix observations over every case and break
    no matching case; the least contract fixes more, so it is taken whichever the sample put
    first: a target taken instead is never undone (putting it back alone loses)."""
    path = _house(tmp_path, MIN_CONTRACT, "min-contract")
    cases = [case for case in fit.cases_for({"classic"}, [], ["classic/barrel/*", "classic/match_end/*"])
             if case.id in ("classic/barrel/arrive-then-win-next-deal", "classic/barrel/win-from-the-barrel-with-120",
                            "classic/match_end/tie-goes-to-the-declarer")]
    with _observing("classic", cases, [*REFERENCE_COMMAND, "--rules", str(path)]) as fitter:
        rules = variants.thaw(fitter.profile.rules)
        ids = [case.id for case in cases]
        target, least = (fit.Change("match_end.target", 1010),), (fit.Change("barrel.min_contract", 380),)
        now = fitter.weigh(rules, ids)
        for cand in (target, least):  # each alone is a change the search may take
            assert fitter._fixes(fit.set_knob(rules, cand), {cand[0].knob}, ids, now, math.inf)
        assert fitter._best_over_all(rules, [target, least][::order], ids) == least


# A marriage condition of 115 under a marriage ceiling, with no ceiling on the contract. A
# condition of 480 (the maximum: no condition at all) with bids before the talon capped at
# 200 stands in for it on many cases, and leaves the contract's ceiling nothing to cap.
STAND_IN = """\
profile: {name}
title: Gambler club with a marriage condition of 115 and uncapped contracts
status: draft
summary: Gambler club, a marriage needed above 115, bids up to 480 and no ceiling on the contract.
extends: gambler-club
sources: {{}}
rules:
  auction:
    marriage_needed_above: {{value: 115, ruling: "The test table needs a marriage above 115."}}
    max_bid: {{value: 480, ruling: "The test table caps bids at 480."}}
  talon:
    contract_ceiling: {{value: none, ruling: "The test table caps no contract but by the maximum."}}
  marriages:
    values: {{value: {{S: 60, C: 130, D: 135, H: 85}}, ruling: "The test table's marriages."}}
"""


@pytest.mark.slow
def test_a_value_standing_in_for_another_is_undone_with_the_switch_it_left_idle(tmp_path: Path) -> None:
    """Under the stand-in, the right condition alone and with the cap put back each cap every
    contract and break matching cases, so neither is taken; with the contract's ceiling also
    moved (a switch deciding the contracts they made differ) the three reproduce everything."""
    path = _house(tmp_path, STAND_IN, "stand-in")
    cases = fit.cases_for({"gambler-club"}, [], ["gambler-club/*"])
    condition, cap, ceiling = "auction.marriage_needed_above", "auction.pre_talon_max", "talon.contract_ceiling"
    with _observing("gambler-club", cases, [*REFERENCE_COMMAND, "--rules", str(path)]) as fitter:
        ids = [case.id for case in cases]
        secret = variants.thaw(variants.resolve(str(path)).rules)
        stood_in = fit.set_knob(secret, [fit.Change(condition, 480), fit.Change(cap, 200), fit.Change(ceiling, "auction")])
        right = (fit.Change(condition, 115),)
        group = next(g for g in fitter.groups(stood_in, ids) if condition in g.knobs and cap in g.knobs)
        undone = fitter._undoing(stood_in, group, [right])
        assert (*right, fit.Change(cap, None)) in undone
        assert fitter._best_over_all(stood_in, [right], ids) is None
        assert fitter._best_over_all(stood_in, undone, ids) is None
        whole = (*right, fit.Change(cap, None), fit.Change(ceiling, "none"))
        completed = fitter._completed(stood_in, undone, group, ids)
        assert whole in completed
        assert fitter._best_over_all(stood_in, completed, ids) == whole
        assert all(e.matches for e in fitter.weigh(fit.set_knob(stood_in, whole), ids).values())


PAID_FROM_THE_THIRD = """\
profile: {name}
title: Classic paying half the bid, from the third give-up on
status: draft
summary: Classic, where defenders are paid half the bid, and only from a player's third give-up.
extends: classic
sources: {{}}
rules:
  giving_up:
    defender_gain: {{value: half_bid, ruling: "The test table pays the defenders half the bid."}}
    defenders_paid_from: {{value: 3, ruling: "The test table pays them from a player's third give-up on."}}
"""


@pytest.mark.slow
def test_a_count_that_changed_nothing_alone_completes_a_change_with_a_stand_in_undone(tmp_path: Path) -> None:
    """A fixed gain of 0 stands in for payment from the third give-up: both leave the first two
    give-ups unpaid. Half the bid alone then pays those too and breaks them, and so does half
    the bid with the gain of 0 put back; with the count of 3 as well (a number, which alone
    changed nothing while nothing was paid) they play like the table on every case, and the
    gain, idle once half the bid is paid, is left out."""
    path = _house(tmp_path, PAID_FROM_THE_THIRD, "paid-from-the-third")
    cases = fit.cases_for({"classic"}, [], ["classic/giving_up/*"])
    gain, amount, paid_from = "giving_up.defender_gain", "giving_up.defender_gain_amount", "giving_up.defenders_paid_from"
    with _observing("classic", cases, [*REFERENCE_COMMAND, "--rules", str(path)]) as fitter:
        ids = [case.id for case in cases]
        classic = variants.thaw(variants.resolve("classic").rules)
        assert classic["giving_up"]["defender_gain"] == "fixed" and classic["giving_up"]["defenders_paid_from"] == 1
        stood_in = fit.set_knob(classic, [fit.Change(amount, 0)])
        assert not all(e.matches for e in fitter.weigh(stood_in, ids).values())
        half = (fit.Change(gain, "half_bid"),)
        group = next(g for g in fitter.groups(stood_in, ids) if gain in g.knobs and paid_from in g.knobs)
        assert fitter._best_over_all(stood_in, [half], ids) is None
        undone = fitter._undoing(stood_in, group, [half])
        assert (*half, fit.Change(amount, 60)) in undone
        assert fitter._best_over_all(stood_in, undone, ids) is None
        whole = (*half, fit.Change(amount, 60), fit.Change(paid_from, 3))
        completed = fitter._completed(stood_in, undone, group, ids)
        assert whole in completed
        # the gain put back plays no part once half the bid is paid: it is left out
        best = fitter._best_over_all(stood_in, completed, ids)
        assert best == (*half, fit.Change(paid_from, 3))
        assert all(e.matches for e in fitter.weigh(fit.set_knob(stood_in, best), ids).values())


MARRIAGE_ABOVE_480 = """\
profile: {name}
title: Skill-games asking a marriage only above 480
status: draft
summary: Skill-games where bids above 480 need a marriage, with no marriage ceiling and a maximum of 595.
extends: skill-games
sources: {{}}
rules:
  auction:
    ceiling: {{value: none, ruling: "The test table lets a marriage holder bid to the maximum."}}
    marriage_needed_above: {{value: 480, ruling: "The test table asks for a marriage only above 480."}}
    max_bid: {{value: 595, ruling: "The test table caps every bid and contract at 595."}}
"""


@pytest.mark.slow
def test_an_amount_at_the_edge_of_the_differing_legal_sets_is_completed_with_the_switch_it_needs(tmp_path: Path) -> None:
    """A marriage condition of 480 under skill-games' marriage ceiling caps every marriage
    holder's bids at 120 and its marriages, so alone it breaks far more than it fixes; a stop
    at 480 under a condition of 595 then stands in for it on most cases, and the cases where a
    marriage holder bids past 480 were left as "a rule the schema has no knob for". 480 is the
    highest contract the implementation offered a player without a marriage in those legal
    sets: taken as a completing change with the ceiling gone, it is the table's rule."""
    path = _house(tmp_path, MARRIAGE_ABOVE_480, "marriage-above-480")
    result, _fitter = _fit("skill-games", [*REFERENCE_COMMAND, "--rules", str(path)], "skill-games/*/*")
    auction = result.rules["auction"]
    assert (auction["ceiling"], auction["marriage_needed_above"], auction["max_bid"], auction["stop_at"]) == ("none", 480, 595, None)
    assert result.residual == {}


COUNTED_IN_THREES = """\
profile: {name}
title: Classic counting give-ups in threes, a given-up deal no barrel attempt
status: draft
summary: Classic with low bids, one seat on the barrel, give-ups charged every third and not counted on the barrel.
extends: classic
sources: {{}}
rules:
  auction:
    marriage_needed_above: {{value: 430, ruling: "The test table asks for a marriage only above 430."}}
    max_bid: {{value: 135, ruling: "The test table caps every bid and contract at 135."}}
  giving_up:
    penalty_repeats: {{value: every_nth, ruling: "The test table counts give-ups in threes."}}
  marriages:
    last_trick: {{value: 8, ruling: "The test table lets a marriage be declared up to the eighth trick."}}
  barrel:
    max_occupants: {{value: 1, ruling: "The test table seats one player on the barrel."}}
    give_up_deal_counts: {{value: false, ruling: "The test table does not count a given-up deal as a barrel attempt."}}
"""


@pytest.mark.slow
def test_a_proposal_that_puts_a_stand_in_back_is_completed_with_the_switch_it_needs(tmp_path: Path) -> None:
    """Under a mutant that lets the highest card win every trick, barrel attempts counted only
    as declarer, taken together with give-ups counted in threes, stand in for given-up deals
    not counting on the barrel. The barrel group then proposes counting every deal again; alone
    that loses what the stand-in fixed, and the stand-in undoings put the give-up count back
    as well. Completed itself, the proposal takes the table's rule (realistic seed 3, v13).
    Every case of classic: on the hand-written ones alone the stand-in is never taken."""
    path = _house(tmp_path, COUNTED_IN_THREES, "counted-in-threes")
    command = [sys.executable, "-m", "mutants.serve", "--rules", str(path), "highest-card-wins"]
    result, _fitter = _fit("classic", command)
    assert result.rules["giving_up"]["penalty_repeats"] == "every_nth"
    assert (result.rules["barrel"]["attempt_counts"], result.rules["barrel"]["give_up_deal_counts"]) == ("every_deal", False)


ONE_TRUMP = """\
profile: {name}
title: Polish keeping the first trump, beating not owed
status: draft
summary: Polish with a marriage asked above 180, bids to 590, no duty to beat or undertrump, declarers rounded to 5, one trump a deal.
extends: polish
sources: {{}}
rules:
  auction:
    marriage_needed_above: {{value: 180, ruling: "The test table asks for a marriage above 180."}}
    max_bid: {{value: 590, ruling: "The test table lets bids go to 590."}}
  play:
    must_beat: {{value: false, ruling: "The test table owes no higher card of the suit led."}}
    must_undertrump: {{value: false, ruling: "The test table owes no lower trump."}}
  marriages:
    one_trump: {{value: true, ruling: "The test table keeps the first trump declared for the whole deal."}}
  scoring:
    declarer_rounding: {{value: nearest_5, ruling: "The test table rounds the declarer's points to 5."}}
"""


@pytest.mark.slow
def test_a_rule_the_mistake_makes_leave_the_transcript_is_weighed_as_far_as_both_replays_reach(tmp_path: Path) -> None:
    """Under a mutant that lets the highest card win every trick, the table's one trump a deal
    sets right 53 observations in six cases (no trump change after the first marriage), but
    in three others the right trump makes the reference give a trick to another player than
    the engine does, and refuse the next lead; a second trump imitated the mistake there by
    chance. Counting every later observation of those cases as missed, one trump lost 205
    observations on balance and was never taken, and the residual blamed marriages for the
    trump changes (realistic seed 8, v10). Weighed only as far as both replays reach, it
    fixes far more than it loses, and the residual is the mistake alone."""
    path = _house(tmp_path, ONE_TRUMP, "one-trump")
    command = [sys.executable, "-m", "mutants.serve", "--rules", str(path), "highest-card-wins"]
    result, fitter = _fit("polish", command)
    assert result.rules["marriages"]["one_trump"] is True
    found = residual.causes(result.weighed, fitter.impl_records, result.exercised, "polish", cases=fitter.by_id)
    assert found and all(c.signature.startswith("event[play] trick_won") for c in found), [c.signature for c in found]


SEED_41_7 = """\
profile: {name}
title: Classic as a seeded secret table plays it
status: draft
summary: Nine knobs of classic changed in six sections, as the realistic benchmark's seed 41 drew them.
extends: classic
sources: {{}}
rules:
  auction:
    marriage_needed_above: {{value: 190, ruling: "The seeded table asks for a marriage above 190."}}
    max_bid: {{value: 290, ruling: "The seeded table caps bids at 290."}}
    barrel_min_bid: {{value: 215, ruling: "The seeded table asks a player on the barrel to bid 215 at least."}}
  talon:
    shown: {{value: from_bid, ruling: "The seeded table shows the talon from a bid up."}}
  marriages:
    first_trick: {{value: true, ruling: "The seeded table lets a marriage be declared on the first trick."}}
  scoring:
    declarer_rounding: {{value: nearest_5, ruling: "The seeded table rounds a declarer's total to 5."}}
  barrel:
    defender_points: {{value: counted, ruling: "The seeded table counts a defender's points on the barrel."}}
    win_by: {{value: any_gain, ruling: "The seeded table wins from the barrel with any gain."}}
  match_end:
    tie_break: {{value: highest, ruling: "The seeded table gives a tie to the highest score."}}
"""


@pytest.mark.slow
def test_a_rounding_shown_only_beside_a_mutant_s_extra_bolt_is_found_and_the_bolt_named(tmp_path: Path) -> None:
    """Seed 41 v7 on classic's bolt and scoring cases: the declarer's total rounded to 5 shows
    only at the last card of two deals whose reply also holds the mutant's extra bolt (a
    defender's 2 points counted as a zero). The scores set right beside it are evidence, so
    fit finds the rounding, and the residual is the bolt alone, naming bolts.zero among the
    knobs it shows."""
    from mutants.catalogue import CATALOGUE
    from mutants.matrix import names_the_mistake

    path = _house(tmp_path, SEED_41_7, "seed-41-7")
    name = "bolt-for-two-points"
    command = [sys.executable, "-m", "mutants.serve", "--rules", str(path), name]
    result, fitter = _fit("classic", command, "classic/bolts/*", "classic/scoring/*")
    assert _value(result.rules, "scoring.declarer_rounding") == "nearest_5"
    causes = residual.causes(result.weighed, fitter.impl_records, result.exercised, "classic", cases=fitter.by_id)
    assert causes and all(names_the_mistake(c.signature, list(c.knobs), CATALOGUE[name].knobs) for c in causes)


SEED_23_4 = """\
profile: {name}
title: Repino 2013 as a seeded secret table plays it
status: draft
summary: The bid cap and talon of the realistic benchmark's seed 23 variant 4.
extends: repino-2013
sources: {{}}
rules:
  auction:
    opening: {{value: at_least, ruling: "The seeded table lets the opener bid any amount from the opening bid."}}
    opener_may_pass: {{value: true, ruling: "The seeded table lets the opener pass."}}
    marriage_needed_above: {{value: 575, ruling: "The seeded table asks for a marriage above 575."}}
    ceiling: {{value: none, ruling: "The seeded table caps bids by the maximum only."}}
    max_bid: {{value: 215, ruling: "The seeded table caps bids and contracts at 215."}}
    pre_talon_max: {{value: 125, ruling: "The seeded table caps bids before the talon at 125."}}
  talon:
    contract_ceiling: {{value: none, ruling: "The seeded table does not cap the contract by the auction's ceiling."}}
"""


@pytest.mark.slow
def test_a_contract_cap_shown_after_a_give_to_the_wrong_defender_is_found(tmp_path: Path) -> None:
    """Seed 23 v4 on the talon cases: the engine gives the declarer's two cards to the wrong
    defenders, so the hands differ from step 4 on, and the contracts it offers (up to 215,
    whatever marriage the declarer holds) show only after that. The declarer kept the same
    hand, so those legal sets are evidence: fit finds the maximum and the contract not capped
    by the auction, where it left both at the profile's values (400, capped) when everything
    after the give counted as downstream."""
    path = _house(tmp_path, SEED_23_4, "seed-23-4")
    command = [sys.executable, "-m", "mutants.serve", "--rules", str(path), "give-directions-swapped"]
    result, _fitter = _fit("repino-2013", command, "*/talon/*")
    assert _value(result.rules, "auction.max_bid") == 215
    assert _value(result.rules, "talon.contract_ceiling") == "none"


UNDECLARED_MARRIAGE_TABLE = """\
profile: {name}
title: Polish with ten for the last trick, no trump owed and an open auction
status: draft
summary: A many-knob table whose engine also counts a king and queen played by one player as a marriage.
extends: polish
sources: {{}}
rules:
  auction:
    opening: {{value: at_least, ruling: "The test table lets the opener bid any amount from the opening bid."}}
    marriage_needed_above: {{value: null, ruling: "The test table asks for no marriage."}}
    ceiling: {{value: none, ruling: "The test table caps bids by the maximum only."}}
    max_bid: {{value: 440, ruling: "The test table caps bids at 440."}}
  giving_up:
    defender_gain: {{value: half_bid, ruling: "The test table pays defenders half the bid."}}
  play:
    must_trump: {{value: false, ruling: "The test table owes no trump."}}
    last_trick_bonus: {{value: 10, ruling: "The test table scores 10 for the last trick."}}
  barrel:
    enabled: {{value: true, ruling: "The test table plays the barrel."}}
    attempt_counts: {{value: as_declarer, ruling: "The test table counts barrel attempts as declarer only."}}
  redeals:
    rules: {{value: [], ruling: "The test table has no redeal."}}
"""


@pytest.mark.slow
def test_a_value_that_sets_right_only_what_follows_a_difference_left_is_not_taken(tmp_path: Path) -> None:
    """An engine that scores a marriage for a king and queen played by one player, undeclared,
    puts points in deals the rules under test cannot put there. A bonus for the last trick of 50
    then sets right some of those deals' scores while their raw points still differ: it is no
    evidence of the bonus, and the fitted file does not say it (realistic seed 3, v1). Every
    knob it does change is one the table changes (a marriage condition of 440 under a maximum
    of 440 is the table's no condition)."""
    path = _house(tmp_path, UNDECLARED_MARRIAGE_TABLE, "undeclared-marriage-table")
    command = [sys.executable, "-m", "mutants.serve", "--rules", str(path), "undeclared-marriage-counted"]
    result, _fitter = _fit("polish", command, "polish/06*")
    polish = variants.resolve("polish")
    assert set(fit.changed_knobs(polish, result.rules)) <= set(fit.changed_knobs(polish, variants.thaw(variants.resolve(str(path)).rules)))
    assert _value(result.rules, "play.last_trick_bonus") in (_value(variants.thaw(polish.rules), "play.last_trick_bonus"), 10)
    assert result.residual  # the undeclared marriages stay unexplained


CAPPED_AT_250 = """\
profile: {name}
title: Polish capped at 250, contracts by the maximum only
status: draft
summary: No marriage ceiling, a marriage condition of 240, a maximum of 250, contracts capped by the maximum only.
extends: polish
sources: {{}}
rules:
  auction:
    ceiling: {{value: none, ruling: "The test table caps bids by the maximum and the marriage condition only."}}
    marriage_needed_above: {{value: 240, ruling: "The test table asks for a marriage above 240."}}
    max_bid: {{value: 250, ruling: "The test table caps every bid and contract at 250."}}
  talon:
    contract_ceiling: {{value: none, ruling: "The test table caps a raised contract by the maximum only."}}
"""


@pytest.mark.slow
def test_a_stand_in_for_a_bug_is_searched_again_from_its_knob_put_back(tmp_path: Path) -> None:
    """An engine capping bids and contracts at 250 that still takes a raised contract above its
    own legal set (mutant contract-raise-unchecked). A stop at 250 stood in for the maximum, a
    maximum of 260 then made the reference take the contract of 260, and the contract ceiling
    was never switched off (157 cases left, realistic seed 3 v10). With what follows the
    engine's contradiction set aside and the search run again from no stop, the table's
    maximum and contract ceiling are fitted and only the contradictions are left."""
    path = _house(tmp_path, CAPPED_AT_250, "capped-at-250")
    command = [sys.executable, "-m", "mutants.serve", "--rules", str(path), "contract-raise-unchecked"]
    result, _fitter = _fit("polish", command)
    assert (result.rules["auction"]["max_bid"], result.rules["auction"]["stop_at"]) == (250, None)
    assert result.rules["talon"]["contract_ceiling"] == "none"
    assert result.residual and all(e.set_aside for c, e in result.weighed.items() if c in result.residual)


HIGH_OPENING_TABLE = """\
profile: {name}
title: Classic opening at 305 under a marriage ceiling
status: draft
summary: Every bid needs a marriage and is capped by the marriages held.
extends: classic
sources: {{}}
rules:
  auction:
    opening_bid: {{value: 305, ruling: "The test table opens at 305."}}
    marriage_needed_above: {{value: 265, ruling: "The test table asks for a marriage above 265, so for every bid."}}
    ceiling: {{value: marriages_held, ruling: "The test table caps a bid at 265 and the marriages held."}}
    max_bid: {{value: 445, ruling: "The test table caps every bid at 445."}}
"""


@pytest.mark.slow
def test_a_marriage_ceiling_is_found_with_the_condition_its_holders_show(tmp_path: Path) -> None:
    """Bids from 305, each capped at 265 and the marriages held: a spades holder is offered
    305 only, a hearts holder up to 365. The condition of 265 does badly alone (it asks every
    bidder for a marriage under no ceiling); the beam carries it as a reading to the ceiling's
    side (realistic seed 4, v6: the parent stopped at a maximum of 345 with 29 cases left)."""
    path = _house(tmp_path, HIGH_OPENING_TABLE, "high-opening")
    result, _fitter = _fit("classic", [*REFERENCE_COMMAND, "--rules", str(path)])
    auction = result.rules["auction"]
    assert (auction["opening_bid"], auction["marriage_needed_above"], auction["ceiling"]) == (305, 265, "marriages_held")
    assert result.residual == {}


# Seven changes to polish (seed 6's variant 9 of the realistic benchmark). A marriage
# condition of 460 under polish's marriage ceiling comes closest to the table's bids on its
# own, and from there the table's rule is three knobs away at once.
CONDITION_405 = """\
profile: {name}
title: Polish asking a marriage above 405 with no marriage ceiling, and six other changes
status: draft
summary: Polish where bids above 405 need a marriage and bids go to 505, with no give-up, no 800 rule and an exact target.
extends: polish
sources: {{}}
rules:
  auction:
    ceiling: {{value: none, ruling: "The test table lets a marriage holder bid to the maximum."}}
    marriage_needed_above: {{value: 405, ruling: "The test table asks for a marriage only above 405."}}
    max_bid: {{value: 505, ruling: "The test table caps every bid and contract at 505."}}
  giving_up:
    allowed: {{value: false, ruling: "The test table allows no give-up."}}
  scoring:
    declarer_rounding: {{value: nearest_10, ruling: "The test table rounds the declarer's points to the nearest 10."}}
  defender_lock:
    enabled: {{value: false, ruling: "The test table has no 800 rule."}}
  match_end:
    over_target: {{value: exact_only, ruling: "The test table ends the match only on exactly 1000."}}
"""


@pytest.mark.slow
def test_a_number_moved_early_is_moved_again_beside_the_knobs_moved_after_it(tmp_path: Path) -> None:
    """The beam never moves a knob twice: from polish it first takes a condition of 460 beside
    a maximum of 500, which comes closest while the marriage ceiling stays, and the search
    from the condition put back finds no condition at all beside no ceiling. Moving the
    condition again within those changes (and keeping it when the search from it put back
    moved it) reaches the table's 405 (any condition from 400 to 405 on a grid of 10)."""
    path = _house(tmp_path, CONDITION_405, "condition-405")
    result, _fitter = _fit("polish", [*REFERENCE_COMMAND, "--rules", str(path)])
    auction = result.rules["auction"]
    assert auction["ceiling"] == "none"
    assert 400 <= auction["marriage_needed_above"] < 410 and 500 <= auction["max_bid"] < 510
    assert result.residual == {}


# Fourteen changes to classic (seed 6's variant 15 of the realistic benchmark), among them
# every third give-up charged 275. Payment from no give-up stands in for it first (the fourth
# and fifth give-ups cost nothing either way).
EVERY_THIRD_275 = """\
profile: {name}
title: Classic charging 275 for every third give-up, and twelve other changes
status: draft
summary: Classic with a marriage ceiling, a stop at 410, bids to 445, re-entry, trumping instead of following, every third give-up charged 275, a dump and a last-trick bonus of 3.
extends: classic
sources: {{}}
rules:
  auction:
    ceiling: {{value: marriages_held, ruling: "The test table caps bids by the marriages held."}}
    marriage_needed_above: {{value: 235, ruling: "The test table asks for a marriage above 235."}}
    max_bid: {{value: 445, ruling: "The test table caps every bid and contract at 445."}}
    stop_at: {{value: 410, ruling: "The test table ends the auction at a bid of 410."}}
    reentry: {{value: true, ruling: "The test table lets a player who passed bid again."}}
  scoring:
    declarer_rounding: {{value: nearest_5, ruling: "The test table rounds the declarer's points to the nearest 5."}}
  barrel:
    enabled: {{value: false, ruling: "The test table has no barrel."}}
  play:
    may_trump_instead: {{value: true, ruling: "The test table lets a player trump instead of following suit."}}
    last_trick_bonus: {{value: 3, ruling: "The test table scores 3 for the last trick."}}
  giving_up:
    penalty_repeats: {{value: every_nth, ruling: "The test table charges give-ups in threes."}}
    penalty: {{value: 275, ruling: "The test table charges 275 for every third give-up."}}
  deal:
    dealer_after_redeal: {{value: next, ruling: "The test table passes the deal on after a redeal."}}
  talon:
    contract_ceiling: {{value: none, ruling: "The test table caps no contract but by the maximum."}}
  dump:
    enabled: {{value: true, ruling: "The test table sends 555 back to zero."}}
"""


@pytest.mark.slow
def test_a_change_found_afresh_from_a_stand_in_put_back_is_completed_with_its_switch(tmp_path: Path) -> None:
    """With payment from no give-up put back, the search finds a penalty of 275, which charges
    the fourth and fifth give-ups too and breaks the cases the stand-in had set right; with
    the penalty charged every third (a switch deciding what it broke) it is the table's rule."""
    path = _house(tmp_path, EVERY_THIRD_275, "every-third-275")
    result, _fitter = _fit("classic", [*REFERENCE_COMMAND, "--rules", str(path)])
    giving_up = result.rules["giving_up"]
    assert (giving_up["penalty"], giving_up["penalty_repeats"], giving_up["penalty_from"]) == (275, "every_nth", 3)
    assert result.residual == {}


# Six changes to polish-tournament (seed 6's variant 11 of the realistic benchmark), among them
# the talon shown only from a winning bid of 240: a line on a grid of 10 that no legal set shows.
TALON_FROM_240 = """\
profile: {name}
title: Polish tournament showing the talon from a winning bid of 240, and five other changes
status: draft
summary: Polish tournament where the talon is shown only from a winning bid of 240, with five other changes.
extends: polish-tournament
sources: {{}}
rules:
  auction:
    marriage_needed_above: {{value: 260, ruling: "The test table asks for a marriage above 260."}}
    max_bid: {{value: 295, ruling: "The test table caps every bid and contract at 295."}}
  giving_up:
    allowed: {{value: false, ruling: "The test table allows no give-up."}}
  deal:
    dealer_after_redeal: {{value: next, ruling: "The test table passes the deal on after a redeal."}}
  scoring:
    declarer_scores: {{value: total, ruling: "The test table scores a made contract's total."}}
  talon:
    shown_from_bid: {{value: 240, ruling: "The test table shows the talon from a winning bid of 240."}}
"""


@pytest.mark.slow
def test_the_talon_line_is_read_from_the_winning_bids_that_showed_it_or_not(tmp_path: Path) -> None:
    """No legal set shows a talon line of 240; the auctions do: won at 250 with the talon shown,
    at 220 without. Read as a line between them, it is found; without it the talon never
    shown was taken (it sets more right than it breaks) and the cases won at 250 were left."""
    path = _house(tmp_path, TALON_FROM_240, "talon-from-240")
    result, fitter = _fit("polish-tournament", [*REFERENCE_COMMAND, "--rules", str(path)])
    lowest_shown, above_unshown = fitter.read.lines("talon.shown_from_bid")
    assert above_unshown <= 240 <= lowest_shown
    assert (result.rules["talon"]["shown"], result.rules["talon"]["shown_from_bid"]) == ("from_bid", 240)
    assert result.residual == {}


# Ten changes to skill-games (seed 6's variant 27 of the realistic benchmark), among them a
# dump at 165 (and -165) and defenders paid a fixed 60 from the third give-up.
DUMP_AT_165 = """\
profile: {name}
title: Skill-games dumping 165, paying defenders a fixed 60 from the third give-up, and eight other changes
status: draft
summary: Skill-games with no marriage ceiling, bids to 490, re-entry, a dump at 165 and defenders paid a fixed 60 from the third give-up.
extends: skill-games
sources: {{}}
rules:
  auction:
    ceiling: {{value: none, ruling: "The test table lets a marriage holder bid to the maximum."}}
    marriage_needed_above: {{value: 590, ruling: "The test table asks for a marriage only above 590."}}
    max_bid: {{value: 490, ruling: "The test table caps every bid and contract at 490."}}
    reentry: {{value: true, ruling: "The test table lets a player who passed bid again."}}
  giving_up:
    defender_gain: {{value: fixed, ruling: "The test table pays the defenders a fixed amount."}}
    defenders_paid_from: {{value: 3, ruling: "The test table pays them from a player's third give-up on."}}
  bolts:
    counting: {{value: consecutive, ruling: "The test table counts only bolts in a row."}}
  scoring:
    failed_contract_points: {{value: split_among_defenders, ruling: "The test table splits a failed contract among the defenders."}}
  dump:
    score: {{value: 165, ruling: "The test table sends 165 and -165 back to zero."}}
  marriages:
    declaration: {{value: optional, ruling: "The test table lets a player lead a king or queen without declaring."}}
"""


@pytest.mark.slow
def test_a_switch_put_back_searches_its_section_read_afresh(tmp_path: Path) -> None:
    """No dump sets right the cases written for a dump at 555, and the one deal ending on -165
    (which the table dumps) is left. From no dump put back the dump's own score is searched, read
    from that deal alone (165, once among thousands of numbers read before), and the defenders'
    pay from the third give-up is found in the part of the score group that differs after a
    give-up, which the score group's sample (deals played out) never shows."""
    path = _house(tmp_path, DUMP_AT_165, "dump-at-165")
    result, _fitter = _fit("skill-games", [*REFERENCE_COMMAND, "--rules", str(path)])
    assert (result.rules["dump"]["enabled"], result.rules["dump"]["score"]) == (True, 165)
    assert result.rules["giving_up"]["defender_gain"] == "fixed"
    assert result.residual == {}


# Eleven changes to repino-2013 (seed 7's variant 3 of the realistic benchmark), among them
# defenders paid a fixed 155 for a give-up.
FIXED_155 = """\
profile: {name}
title: Repino paying defenders a fixed 155 for a give-up, and nine other changes
status: draft
summary: Repino with no marriage ceiling, bids to 510, no contract raise, no barrel and defenders paid a fixed 155 for a give-up.
extends: repino-2013
sources: {{}}
rules:
  auction:
    ceiling: {{value: none, ruling: "The test table lets a marriage holder bid to the maximum."}}
    marriage_needed_above: {{value: 290, ruling: "The test table asks for a marriage above 290."}}
    max_bid: {{value: 510, ruling: "The test table caps every bid and contract at 510."}}
  talon:
    contract_raise: {{value: false, ruling: "The test table fixes the contract at the winning bid."}}
  marriages:
    half_capture_bonus: {{value: 17, ruling: "The test table scores 17 for a captured half of a marriage."}}
  barrel:
    enabled: {{value: false, ruling: "The test table has no barrel."}}
    threshold: {{value: 685, ruling: "The test table would start the barrel at 685."}}
  giving_up:
    moment: {{value: with_contract, ruling: "The test table allows a give-up only with the contract."}}
    defender_gain: {{value: fixed, ruling: "The test table pays the defenders a fixed amount."}}
    defender_gain_amount: {{value: 155, ruling: "The test table pays each defender 155."}}
  bolts:
    declarer: {{value: true, ruling: "The test table gives the declarer bolts too."}}
"""


@pytest.mark.slow
def test_a_switch_is_tried_with_the_numbers_it_switches_on(tmp_path: Path) -> None:
    """One give-up deal shows the defenders paid 155 each. A fixed gain alone pays 60 and
    sets nothing right, and the case exercising it does not list its amount (under half the
    bid the amount changes nothing), so the beam stopped before the amount it switches on:
    the fixed gain is now tried with it, and 155 is the table's rule."""
    path = _house(tmp_path, FIXED_155, "fixed-155")
    result, _fitter = _fit("repino-2013", [*REFERENCE_COMMAND, "--rules", str(path)])
    giving_up = result.rules["giving_up"]
    assert (giving_up["defender_gain"], giving_up["defender_gain_amount"]) == ("fixed", 155)
    assert result.residual == {}
