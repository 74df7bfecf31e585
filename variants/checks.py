"""Checks a schema cannot express: citations, completeness, and consistency across knobs."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from spec.vocabulary import RuleValues
from variants.errors import ProfileError, raise_all
from variants.loader import DocPath, Marks
from variants.schema import display_path, rule_sections


@dataclass(frozen=True)
class Origin:
    """Where a knob's value was written: file, position and field path."""

    file: str
    line: int
    column: int
    path: str
    order: int = 0  # later writers (children, options) have higher numbers


def rule_entries(rules: Mapping[str, Any], prefix: DocPath) -> Iterator[tuple[str, str, DocPath, Mapping[str, Any]]]:
    """(section, knob, path, entry) for every knob entry of a rules mapping."""
    for section, knobs in rules.items():
        for knob, entry in knobs.items():
            yield section, knob, prefix + (section, knob), entry


def check_document(data: Mapping[str, Any], marks: Marks, file: str, stem: str) -> None:
    """File-level checks after the schema passed: every problem found is reported at once."""
    problems: list[ProfileError] = []
    if data["profile"] != stem:
        pos = marks.of_value(("profile",))
        problems.append(ProfileError(
            file,
            f"the profile is named {data['profile']!r} but the file is {stem}.yaml: they must match",
            line=pos.line, column=pos.column, path="profile",
        ))
    problems += _check_citations(data, marks, file)
    if data["extends"] is None:
        problems += _check_complete(data["rules"], marks, file)
    problems += _check_ruling_knobs(data, marks, file)
    raise_all(problems)


def _all_rule_blocks(data: Mapping[str, Any]) -> Iterator[tuple[DocPath, Mapping[str, Any]]]:
    yield ("rules",), data["rules"]
    for name, option in data.get("options", {}).items():
        yield ("options", name, "rules"), option["rules"]


def _check_citations(data: Mapping[str, Any], marks: Marks, file: str) -> list[ProfileError]:
    known = sorted(data["sources"])
    problems = []
    for prefix, rules in _all_rule_blocks(data):
        for _section, _knob, path, entry in rule_entries(rules, prefix):
            if "source" not in entry:
                continue
            key = entry["source"].split(" ", 1)[0]
            if key not in data["sources"]:
                pos = marks.of_value(path + ("source",))
                listed = ", ".join(known) if known else "none"
                problems.append(ProfileError(
                    file,
                    f"cites {key!r}, which is not a key of 'sources' (sources: {listed})",
                    line=pos.line, column=pos.column, path=display_path(path + ("source",)),
                ))
    return problems


def _check_complete(rules: Mapping[str, Any], marks: Marks, file: str) -> list[ProfileError]:
    problems = []
    for section, knobs in rule_sections().items():
        if section not in rules:
            pos = marks.of_key(("rules",))
            problems.append(ProfileError(
                file,
                f"missing section {section!r}: a root profile (extends: null) states every knob",
                line=pos.line, column=pos.column, path="rules",
            ))
            continue
        for knob in knobs:
            if knob not in rules[section]:
                pos = marks.of_key(("rules", section))
                problems.append(ProfileError(
                    file,
                    f"missing knob {knob!r}: a root profile (extends: null) states every knob",
                    line=pos.line, column=pos.column, path=f"rules.{section}",
                ))
    return problems


def _check_ruling_knobs(data: Mapping[str, Any], marks: Marks, file: str) -> list[ProfileError]:
    sections = rule_sections()
    problems = []
    for index, ruling in enumerate(data.get("rulings", [])):
        for k, name in enumerate(ruling.get("knobs", [])):
            section, _, knob = name.partition(".")
            if knob not in sections.get(section, []):
                path: DocPath = ("rulings", index, "knobs", k)
                pos = marks.of_value(path)
                problems.append(ProfileError(file, f"no such knob {name!r}", line=pos.line, column=pos.column,
                                             path=display_path(path)))
    return problems


# Consistency across knobs of a resolved profile ---------------------------------------

# A check returns (the knobs involved, message) or None; the error points at the involved
# knob written last, which is the one most likely to have introduced the conflict.
Check = Callable[[RuleValues], tuple[tuple[str, ...], str] | None]


def legal_bid(rules: RuleValues, amount: int) -> bool:
    """Is ``amount`` on the auction's grid (ignoring marriages)?"""
    auction = rules["auction"]
    if amount < auction["opening_bid"] or amount > auction["max_bid"]:
        return False
    if amount == auction["opening_bid"]:
        return True
    step = auction["bid_step"]
    high_step = auction["high_bid_step"]
    if high_step is not None and amount > auction["high_bid_from"]:
        step = high_step
    return bool(amount % step == 0)


def _barrel_threshold(rules: RuleValues) -> tuple[tuple[str, ...], str] | None:
    barrel, target = rules["barrel"], rules["match_end"]["target"]
    if barrel["enabled"] and barrel["threshold"] >= target:
        return ("barrel.threshold", "match_end.target"), f"the barrel threshold {barrel['threshold']} must be below the target {target}"
    return None


def _barrel_min_contract(rules: RuleValues) -> tuple[tuple[str, ...], str] | None:
    barrel, max_bid = rules["barrel"], rules["auction"]["max_bid"]
    if barrel["enabled"] and barrel["min_contract"] > max_bid:
        return ("barrel.min_contract", "auction.max_bid"), f"min_contract {barrel['min_contract']} is above max_bid {max_bid}: nobody could win from the barrel"
    return None


def _lock_from(rules: RuleValues) -> tuple[tuple[str, ...], str] | None:
    lock, target = rules["defender_lock"], rules["match_end"]["target"]
    if lock["enabled"] and lock["from"] >= target:
        return ("defender_lock.from", "match_end.target"), f"defender_lock.from {lock['from']} must be below the target {target}"
    return None


def _lock_max(rules: RuleValues) -> tuple[tuple[str, ...], str] | None:
    lock, target = rules["defender_lock"], rules["match_end"]["target"]
    top = lock["defender_max"]
    if lock["enabled"] and top is not None and top >= target:
        return ("defender_lock.defender_max", "match_end.target"), f"defender_max {top} must be below the target {target}"
    if lock["enabled"] and top is not None and top < lock["from"]:
        return ("defender_lock.defender_max", "defender_lock.from"), f"defender_max {top} must not be below defender_lock.from {lock['from']}"
    return None


def _max_bid(rules: RuleValues) -> tuple[tuple[str, ...], str] | None:
    auction = rules["auction"]
    if auction["max_bid"] < auction["opening_bid"]:
        return ("auction.max_bid", "auction.opening_bid"), f"max_bid {auction['max_bid']} is below opening_bid {auction['opening_bid']}"
    return None


def _stop_at(rules: RuleValues) -> tuple[tuple[str, ...], str] | None:
    stop = rules["auction"]["stop_at"]
    if stop is not None and not legal_bid(rules, stop):
        return ("auction.stop_at", "auction.bid_step", "auction.opening_bid", "auction.max_bid"), f"stop_at {stop} is not a legal bid amount (opening_bid, then multiples of bid_step, up to max_bid)"
    return None


def _high_step(rules: RuleValues) -> tuple[tuple[str, ...], str] | None:
    auction = rules["auction"]
    high = auction["high_bid_step"]
    if high is not None and high % auction["bid_step"] != 0:
        return ("auction.high_bid_step", "auction.bid_step"), f"high_bid_step {high} is not a multiple of bid_step {auction['bid_step']}"
    return None


def _ceiling(rules: RuleValues) -> tuple[tuple[str, ...], str] | None:
    auction = rules["auction"]
    if auction["ceiling"] == "marriages_held" and auction["marriage_needed_above"] is None:
        return ("auction.ceiling", "auction.marriage_needed_above"), "ceiling 'marriages_held' counts from marriage_needed_above, which is null"
    return None


def _talon_shown(rules: RuleValues) -> tuple[tuple[str, ...], str] | None:
    talon, opening = rules["talon"], rules["auction"]["opening_bid"]
    if talon["shown"] == "from_bid" and talon["shown_from_bid"] <= opening:
        return ("talon.shown_from_bid", "talon.shown", "auction.opening_bid"), f"shown_from_bid {talon['shown_from_bid']} is not above opening_bid {opening}: write shown: always"
    return None


def _four_aces(rules: RuleValues) -> tuple[tuple[str, ...], str] | None:
    marriages = rules["marriages"]
    if marriages["four_aces"] is not None and marriages["declaration"] == "automatic":
        return ("marriages.four_aces", "marriages.declaration"), "four aces are declared with 'play AS aces', which automatic declaration refuses; set declaration: optional or four_aces: null"
    return None


def _redeal_points(rules: RuleValues) -> tuple[tuple[str, ...], str] | None:
    seen: set[tuple[str, str]] = set()
    for index, rule in enumerate(rules["redeals"]["rules"]):
        condition = rule["condition"]
        if condition.endswith("_under_points") and "points" not in rule:
            return ("redeals.rules",), f"rule {index + 1} ({condition}) needs 'points'"
        if not condition.endswith("_under_points") and "points" in rule:
            return ("redeals.rules",), f"rule {index + 1} ({condition}) takes no 'points'"
        if (condition, rule["when"]) in seen:
            return ("redeals.rules",), f"rule {index + 1} repeats {condition} {rule['when']}"
        seen.add((condition, rule["when"]))
    return None


def _dump_score(rules: RuleValues) -> tuple[tuple[str, ...], str] | None:
    dump, target = rules["dump"], rules["match_end"]["target"]
    if dump["enabled"] and dump["score"] >= target:
        return ("dump.score", "dump.enabled", "match_end.target"), f"the dump score {dump['score']} must be below the target {target}"
    return None


def _contract_step(rules: RuleValues) -> tuple[tuple[str, ...], str] | None:
    giving_up = rules["giving_up"]
    if not rules["talon"]["contract_step"] and giving_up["allowed"] and giving_up["moment"] == "with_contract":
        return ("talon.contract_step", "giving_up.moment"), "without a contract step there is no moment 'with_contract' to give up: set giving_up.moment: before_exchange"
    return None


def _pre_talon_max(rules: RuleValues) -> tuple[tuple[str, ...], str] | None:
    cap = rules["auction"]["pre_talon_max"]
    if cap is not None and not legal_bid(rules, cap):
        return ("auction.pre_talon_max", "auction.bid_step", "auction.opening_bid", "auction.max_bid"), f"pre_talon_max {cap} is not a legal bid amount (opening_bid, then multiples of bid_step, up to max_bid)"
    return None


def _barrel_min_bid(rules: RuleValues) -> tuple[tuple[str, ...], str] | None:
    auction = rules["auction"]
    least, cap = auction["barrel_min_bid"], auction["pre_talon_max"]
    if least is not None and cap is not None and least > cap:
        return ("auction.barrel_min_bid", "auction.pre_talon_max"), f"barrel_min_bid {least} is above pre_talon_max {cap}: a player on the barrel could never bid"
    return None


def _nines_bonus(rules: RuleValues) -> tuple[tuple[str, ...], str] | None:
    redeals = rules["redeals"]
    if redeals.get("four_nines_bonus") is not None and any(r["condition"] == "four_nines" for r in redeals["rules"]):
        return ("redeals.four_nines_bonus", "redeals.rules"), "four_nines_bonus replaces the four-nines redeal: drop the four_nines redeal rule or the bonus"
    return None


CONSISTENCY_CHECKS: tuple[Check, ...] = (
    _max_bid,
    _high_step,
    _stop_at,
    _ceiling,
    _talon_shown,
    _four_aces,
    _barrel_threshold,
    _barrel_min_contract,
    _lock_from,
    _lock_max,
    _dump_score,
    _redeal_points,
    _contract_step,
    _pre_talon_max,
    _barrel_min_bid,
    _nines_bonus,
)


def check_consistency(rules: RuleValues, origins: Mapping[str, Origin], context: str) -> None:
    """Raise a ProfileError at the offending knob for each inconsistency (the first carries the others)."""
    problems = []
    for check in CONSISTENCY_CHECKS:
        found = check(rules)
        if found is None:
            continue
        knobs, message = found
        origin = max((origins[knob] for knob in knobs), key=lambda o: o.order)
        suffix = f" (in {context})" if context else ""
        problems.append(ProfileError(origin.file, message + suffix, line=origin.line, column=origin.column, path=origin.path))
    raise_all(problems)
