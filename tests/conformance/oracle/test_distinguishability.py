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

Each option (``name+option``) is held to the same for the knobs it sets: every other value
of them plays differently on some case of the option.

Every gap is either closed by a case or listed in spec/equivalent-values.yaml with the
reason no deal can show it. Thin spots (``THIN_SPOTS``): rule sets a house may play side by side
with a neighbour one value away, which the corpus once told apart by one or two cases only, are
held to three cases of different deals each (a case replaying another's cards under other
scores is the same deal). Knobs that are inert under a profile (``x-applies-when``: bolts knobs where bolts are
off) are out of scope: no deal of that profile can show them. Cost: the 6 profiles with
about 1,000 values and the options with about 130, one record per case and value until
the first difference (cases whose ``knobs`` name the knob are tried first), in-process.
"""

from __future__ import annotations

import functools
import json
from typing import Any, Iterator, Mapping

import pytest
from tools.case_knobs import in_process

import variants
from conformance.oracle import fit
from conformance.harness.runner import DEFAULT_MATCH_STATE
from conformance.corpus.transcripts import CASES_DIR, GENERATED_DIR, Transcript, discover
from variants.checks import CONSISTENCY_CHECKS

PROFILES = ("gambler-club", "repino-2013", "polish", "polish-tournament", "skill-games", "classic")
OPTIONS = tuple(name for name in variants.all_names() if "+" in name)

# "profile knob=value" (the value in JSON) -> why no deal of that profile can show it.
ALLOWED: dict[str, str] = {item.label: item.reason for item in variants.load_equivalents()}

Step = tuple[Any, ...]


@functools.cache
def corpus() -> tuple[Transcript, ...]:
    return tuple(item for item in discover([CASES_DIR, GENERATED_DIR]) if isinstance(item, Transcript))


def cases_of(profile: str) -> list[Transcript]:
    return [case for case in corpus() if profile in case.profiles]


def record(ask: Any, profile: str, document: Mapping[str, Any], case: Transcript) -> Iterator[Step]:
    """What the reference shows on the case's actions under ``document``, step by step; it
    ends after the first action whose acceptance differs from the transcript's."""
    reply = ask("match", profile=profile, document=document, state={**DEFAULT_MATCH_STATE, **(case.match or {})})
    yield ("match", reply.get("ok"))
    for deal in case.deals:
        reply = ask("deal", dealer=deal["dealer"], hands=deal["hands"], talon=deal["talon"])
        yield ("deal", reply.get("ok"), reply.get("events"), ask("state").get("state"))
        for step in deal["steps"]:
            legal = ask("legal").get("actions")
            reply = ask("apply", action=step["action"])
            accepted = reply.get("ok") is True
            yield (sorted(legal) if isinstance(legal, list) else legal, accepted, reply.get("events"),
                   reply.get("refusal", {}).get("reason"), ask("state").get("state"))
            if accepted == ("refused" in step):
                return  # the game has left the transcript's path


def differs(ask: Any, profile: str, base: list[Step], document: Mapping[str, Any], case: Transcript) -> bool:
    count = 0
    for count, step in enumerate(record(ask, profile, document, case), 1):
        if count > len(base) or step != base[count - 1]:
            return True
    return count != len(base)


def changed_rules(profile: str) -> list[tuple[str, Any, dict[str, Any]]]:
    """``(knob, value, document)`` for every single value worth trying under the profile."""
    resolved = variants.resolve(profile)
    document = {key: value for key, value in resolved.to_document().items() if key != "provenance"}
    rules = document["rules"]
    found = []
    for knob in fit.applying_knobs(resolved, variants.thaw(resolved.rules)):
        section, _, name = knob.partition(".")
        for value in fit.knob_domain(knob, rules[section][name]):
            changed = {**rules, section: {**rules[section], name: value}}
            if any(check(changed) is not None for check in CONSISTENCY_CHECKS):
                continue  # no valid profile has it: it proves nothing
            found.append((knob, value, {**document, "rules": changed}))
    return found


@functools.cache
def gaps(profile: str) -> tuple[tuple[str, Any], ...]:
    """The values of the profile no case tells apart from its own; for an option
    (``name+option``), only the values of the knobs the option sets."""
    ask = in_process()
    resolved = variants.resolve(profile)
    own = {key: value for key, value in resolved.to_document().items() if key != "provenance"}
    mine = {knob for knob, origin in resolved.provenance.items() if origin.get("from") == profile} if "+" in profile else None
    cases = cases_of(profile)
    base = {case.id: list(record(ask, profile, own, case)) for case in cases}
    found = []
    for knob, value, document in changed_rules(profile):
        if mine is not None and knob not in mine:
            continue
        ordered = sorted(cases, key=lambda case: knob not in case.knobs)  # the likely ones first
        if not any(differs(ask, profile, base[case.id], document, case) for case in ordered):
            found.append((knob, value))
    return tuple(found)


def label(profile: str, knob: str, value: Any) -> str:
    return f"{profile} {knob}={json.dumps(value, sort_keys=True)}"


@pytest.mark.slow
@pytest.mark.parametrize("profile", PROFILES)
def test_every_value_that_applies_is_told_apart(profile: str) -> None:
    missing = [name for name in (label(profile, *gap) for gap in gaps(profile)) if name not in ALLOWED]
    assert not missing, "no case plays differently under " + "; ".join(missing)


@pytest.mark.slow
@pytest.mark.parametrize("option", OPTIONS)
def test_every_value_of_an_option_is_told_apart(option: str) -> None:
    """The knobs an option sets: each other value plays differently on some case of the option."""
    missing = [name for name in (label(option, *gap) for gap in gaps(option)) if name not in ALLOWED]
    assert not missing, "no case plays differently under " + "; ".join(missing)


@pytest.mark.slow
@pytest.mark.parametrize("profile", PROFILES + OPTIONS)
def test_the_allow_list_holds_only_gaps(profile: str) -> None:
    """An allowed value some case now tells apart is taken off the list."""
    found = {label(profile, *gap) for gap in gaps(profile)}
    stale = [name for name in ALLOWED if name.startswith(profile + " ") and name not in found]
    assert not stale, "allowed but told apart: " + "; ".join(stale)


# ------------------------------------------------------------------ thin spots
# A value told apart by one case only hides behind any other difference an engine shows in
# that case: fit then misses it. Rule sets a house may play, each against a neighbour one
# value away, are held to SITUATIONS cases of different deals (a case replaying another's
# deal under other scores is the same situation): (profile, the house's changes, knob, value).
SITUATIONS = 3
THIN_SPOTS: tuple[tuple[str, dict[str, Any], str, Any], ...] = (
    ("polish", {"defender_lock.enabled": False}, "match_end.defenders_can_win", True),
    ("polish", {}, "play.must_overtrump", False),
    ("polish", {}, "defender_lock.from", 900),
    ("classic", {"talon.shown": "from_bid", "talon.shown_from_bid": 110}, "talon.shown_from_bid", 120),
    ("skill-games+no-barrel", {}, "match_end.tie_break", "declarer_then_highest_then_play_on"),
    ("classic", {}, "auction.ends_at_max_bid", True),
    ("classic+barrel-no-attempt-limit", {}, "barrel.attempts", 3),
)


def changed(document: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    rules = {section: dict(knobs) for section, knobs in document["rules"].items()}
    for knob, value in changes.items():
        section, _, name = knob.partition(".")
        rules[section][name] = value
    return {**document, "rules": rules}


def situations_telling_apart(profile: str, house: Mapping[str, Any], knob: str, value: Any) -> set[str]:
    """The deals (by their cards) of the profile's cases whose record differs between the
    house's rules and the same with ``knob`` set to ``value``."""
    ask = in_process()
    own = {key: item for key, item in variants.resolve(profile).to_document().items() if key != "provenance"}
    base = changed(own, house)
    other = changed(base, {knob: value})
    found = set()
    for case in cases_of(profile):
        deal = json.dumps([[item["hands"], item["talon"]] for item in case.deals], sort_keys=True)
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
