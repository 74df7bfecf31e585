"""Every knob value that applies under a profile plays differently on some case of it.

For every bundled profile, every knob that applies there (``fit.applying_knobs``) and every
value of the domain fit searches (``fit.knob_domain``: the enum, both booleans, for numbers
the bundled values, the schema default and neighbours ±1, 2 or ±10, 20, and null where
allowed), the reference replays the actions of each case of the profile (hand-written and
generated) under the rules with that one value changed, and records what it shows: per
step the legal set, the reply (events, or refusal class and reason) and the whole state,
as an observation record of ``thousand fit`` does. The value is told apart when some
record differs from the record under the profile's own rules. A value no case tells apart
is a corpus gap: ``fit`` cannot name it, and a house rule with that value passes as the
profile. Changes a valid profile cannot make (the cross-knob checks of ``variants``) prove
nothing and are skipped.

Each option (``name+option``) is a profile too, held to the same for the knobs it sets (its
other knobs are its bundled profile's, held there): every other value of them plays
differently on some case of the option.

Every gap is either closed by a case or listed in spec/equivalent-values.yaml with the
reason no deal can show it. A value told apart by one case only hides behind any other
difference an engine shows in that case, so under a bundled profile or an option every
applicable value is held to three cases of different deals (``SITUATIONS``; a case replaying another's cards under
other scores is the same deal), or listed in ``FEW_SITUATIONS`` with the reason; the test prints
the counts per profile and option (values with 0, 1, 2 and 3+ deals). The targeted generated
transcripts (``conformance/oracle/targeted.yaml``, found by ``python tools/situations.py --search``) are
there for these counts. Thin spots (``THIN_SPOTS``): rule sets a house may play side by side
with a neighbour one value away, held to three deals each too. Knobs that are inert under a
profile (``x-applies-when``: bolts knobs where bolts are off) are out of scope: no deal of that
profile can show them; the count test prints them with the knob that makes them inert. Cost:
the 6 profiles with about 900 values, one record per case and value until the third deal
that differs (cases whose ``knobs`` name the knob are tried first), and the 53 options with
about 140 likewise, in-process.
"""

from __future__ import annotations

import functools
from typing import Any, Mapping

import pytest
from tools.case_knobs import in_process
from tools.situations import (OPTIONS, PROFILES, SITUATIONS, changed, count_situations, differs, option_knobs, record,
                              situation, tally)

import variants
from conformance.corpus.transcripts import CASES_DIR, GENERATED_DIR, Transcript, discover

# "profile knob=value" (the value in JSON) -> why no deal of that profile can show it.
ALLOWED: dict[str, str] = {item.label: item.reason for item in variants.load_equivalents()}


@functools.cache
def corpus() -> tuple[Transcript, ...]:
    return tuple(item for item in discover([CASES_DIR, GENERATED_DIR]) if isinstance(item, Transcript))


def cases_of(profile: str) -> list[Transcript]:
    return [case for case in corpus() if profile in case.profiles]


@functools.cache
def situations(profile: str) -> dict[str, frozenset[str]]:
    """Every applicable value of a bundled profile, or of the knobs an option sets (by its
    label) -> the deals, at most SITUATIONS, that tell it apart (``tools.situations.count_situations``)."""
    counts = count_situations(profile, cases_of(profile), SITUATIONS, in_process())
    return {key: frozenset(deals) for key, deals in counts.items()}


@functools.cache
def gaps(profile: str) -> tuple[str, ...]:
    """The values of the profile no case tells apart from its own; for an option
    (``name+option``), only the values of the knobs the option sets."""
    return tuple(name for name, deals in situations(profile).items() if not deals)


@pytest.mark.slow
@pytest.mark.parametrize("profile", PROFILES + OPTIONS)
def test_every_value_that_applies_is_told_apart(profile: str) -> None:
    missing = [name for name in gaps(profile) if name not in ALLOWED]
    assert not missing, "no case plays differently under " + "; ".join(missing)


# "profile knob=value" -> why fewer than SITUATIONS deals of the profile (or option) tell the value
# apart (at least one does). Each is a position a random search did not reach again within its budget.
FEW_SITUATIONS: dict[str, str] = {
}


@pytest.mark.slow
@pytest.mark.parametrize("profile", PROFILES + OPTIONS)
def test_every_value_that_applies_is_told_apart_by_three_situations(profile: str) -> None:
    """Each applicable value (of an option: of the knobs it sets) is told apart by SITUATIONS deals
    of different cards, or is listed: in spec/equivalent-values.yaml (no deal can show it) or
    FEW_SITUATIONS (with the reason). Prints the counts, and the knobs inert under the profile
    (of an option: those it sets) with the knob that makes them so."""
    counts = situations(profile)
    figures = tally(counts, SITUATIONS)
    print(f"\n{profile}: {len(counts)} applicable values; deals telling each apart: "
          + ", ".join(f"{n}{'+' if n == SITUATIONS else ''}: {c}" for n, c in figures.items()))
    for name, deals in counts.items():
        if len(deals) < SITUATIONS:
            print(f"  {len(deals)}  {name}  ({ALLOWED.get(name) or FEW_SITUATIONS.get(name) or 'not listed'})")
    mine = option_knobs(profile)
    for knob, reason in variants.inert_knobs(variants.resolve(profile)).items():
        if mine is None or knob in mine:
            print(f"  inert  {profile} {knob}: {reason}")
    short = [f"{name} ({len(deals)})" for name, deals in counts.items()
             if len(deals) < SITUATIONS and name not in ALLOWED and name not in FEW_SITUATIONS]
    assert not short, f"fewer than {SITUATIONS} deals tell apart: " + "; ".join(short)


@pytest.mark.slow
@pytest.mark.parametrize("profile", PROFILES + OPTIONS)
def test_few_situations_lists_only_short_values(profile: str) -> None:
    """A value listed in FEW_SITUATIONS that now has SITUATIONS deals, or none, is taken off."""
    counts = situations(profile)
    stale = [name for name in FEW_SITUATIONS if name.startswith(profile + " ")
             and not 0 < len(counts.get(name, ())) < SITUATIONS]
    assert not stale, "listed as told apart by few deals, but: " + "; ".join(stale)


@pytest.mark.slow
@pytest.mark.parametrize("profile", PROFILES + OPTIONS)
def test_the_allow_list_holds_only_gaps(profile: str) -> None:
    """An allowed value some case now tells apart is taken off the list."""
    found = set(gaps(profile))
    stale = [name for name in ALLOWED if name.startswith(profile + " ") and name not in found]
    assert not stale, "allowed but told apart: " + "; ".join(stale)


# ------------------------------------------------------------------ thin spots
# A value told apart by one case only hides behind any other difference an engine shows in
# that case: fit then misses it. Rule sets a house may play, each against a neighbour one
# value away, are held to SITUATIONS cases of different deals (a case replaying another's
# deal under other scores is the same situation): (profile, the house's changes, knob, value).
THIN_SPOTS: tuple[tuple[str, dict[str, Any], str, Any], ...] = (
    ("polish", {"defender_lock.enabled": False}, "match_end.defenders_can_win", True),
    ("polish", {}, "play.must_overtrump", False),
    ("polish", {}, "defender_lock.from", 900),
    ("classic", {"talon.shown": "from_bid", "talon.shown_from_bid": 110}, "talon.shown_from_bid", 120),
    ("skill-games+no-barrel", {}, "match_end.tie_break", "declarer_then_highest_then_play_on"),
    ("classic", {}, "auction.ends_at_max_bid", True),
    ("classic+barrel-no-attempt-limit", {}, "barrel.attempts", 3),
)


def situations_telling_apart(profile: str, house: Mapping[str, Any], knob: str, value: Any) -> set[str]:
    """The deals (by their cards) of the profile's cases whose record differs between the
    house's rules and the same with ``knob`` set to ``value``."""
    ask = in_process()
    own = {key: item for key, item in variants.resolve(profile).to_document().items() if key != "provenance"}
    base = changed(own, house)
    other = changed(base, {knob: value})
    found = set()
    for case in cases_of(profile):
        deal = situation(case)
        if deal in found:
            continue
        if differs(ask, profile, list(record(ask, profile, base, case)), other, case):
            found.add(deal)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("profile,house,knob,value", THIN_SPOTS,
                         ids=[f"{p}{''.join(f' {k}={v}' for k, v in h.items())} {k}={v}" for p, h, k, v in THIN_SPOTS])
def test_a_thin_spot_is_told_apart_by_three_situations(profile: str, house: dict[str, Any], knob: str, value: Any) -> None:
    found = situations_telling_apart(profile, house, knob, value)
    assert len(found) >= SITUATIONS, f"{len(found)} deal(s) tell {knob}={value} apart under {profile} {house}"
