"""How many situations tell each applicable knob value apart under a profile, in-process.

Not a test module: ``tests/conformance/oracle/test_distinguishability.py`` uses it, and run as a
script it prints the counts, or with ``--search`` looks for deals that tell the short values
apart (seeded candidates recorded in-process as ``conformance.oracle.generate`` records them),
keeps the fewest that bring each value to three (an option, ``name+option``, is counted and
searched for the knobs it sets), lists them in
``conformance/oracle/targeted.yaml`` and writes their transcripts,
``conformance/generated/<profile>/targeted-<nnn>.yaml``, with their knobs (as
``python -m conformance.oracle.generate`` and ``python tools/case_knobs.py`` would; the
generator's ``--check`` checks them).

A **situation** is a deal by its cards (hands and talon): a case replaying another's cards
under other scores is the same situation. A value of ``fit.knob_domain`` that applies under
a profile (``fit.applying_knobs``) is told apart by a case when the reference's record of the
case's actions under the profile with that one value changed (per step the legal set, the
reply and the whole state, as ``thousand fit`` observes) differs from the record under the
profile's own rules.

    python tools/situations.py [--options] [PROFILE ...]  # the counts per profile or option (0, 1, 2, 3+)
    python tools/situations.py --search [--budget N] [--start N] [PROFILE ...]  # targeted deals for the short values
    python tools/situations.py --write [PROFILE ...]    # only write the transcripts targeted.yaml lists
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

if __package__ in (None, ""):  # run as a script: the project root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import variants
from conformance.corpus.transcripts import CASES_DIR, GENERATED_DIR, Transcript, discover
from conformance.harness.runner import DEFAULT_MATCH_STATE
from conformance.oracle import fit, fuzz, generate, positions
from tools.case_knobs import in_process
from variants.checks import CONSISTENCY_CHECKS

PROFILES = ("gambler-club", "repino-2013", "polish", "polish-tournament", "skill-games", "classic")
OPTIONS = tuple(name for name in variants.all_names() if "+" in name)  # profiles too, for the knobs they set
SITUATIONS = 3  # an applicable value is told apart by at least this many deals
Ask = Callable[..., dict[str, Any]]
Step = tuple[Any, ...]


def corpus() -> tuple[Transcript, ...]:
    return tuple(item for item in discover([CASES_DIR, GENERATED_DIR]) if isinstance(item, Transcript))


def own_document(profile: str) -> dict[str, Any]:
    return {key: value for key, value in variants.resolve(profile).to_document().items() if key != "provenance"}


def record(ask: Ask, profile: str, document: Mapping[str, Any], case: Any) -> Iterator[Step]:
    """What the reference shows on the case's actions under ``document``, step by step; it
    ends after the first action whose acceptance differs from the transcript's. ``case`` is a
    Transcript or anything with its ``match`` and ``deals``."""
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


def differs(ask: Ask, profile: str, base: list[Step], document: Mapping[str, Any], case: Any) -> bool:
    count = 0
    for count, step in enumerate(record(ask, profile, document, case), 1):
        if count > len(base) or step != base[count - 1]:
            return True
    return count != len(base)


def changed(document: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    rules = {section: dict(knobs) for section, knobs in document["rules"].items()}
    for knob, value in changes.items():
        section, _, name = knob.partition(".")
        rules[section][name] = value
    return {**document, "rules": rules}


def option_knobs(profile: str) -> set[str] | None:
    """The knobs an option (``name+option``) sets itself; None for a bundled profile. An
    option's other knobs are its bundled profile's, counted there."""
    if "+" not in profile:
        return None
    return {knob for knob, origin in variants.resolve(profile).provenance.items() if origin.get("from") == profile}


def changed_rules(profile: str) -> list[tuple[str, Any, dict[str, Any]]]:
    """``(knob, value, document)`` for every single value worth trying under the profile (for
    an option, of the knobs it sets)."""
    resolved = variants.resolve(profile)
    document = {key: value for key, value in resolved.to_document().items() if key != "provenance"}
    rules = document["rules"]
    mine = option_knobs(profile)
    found = []
    for knob in fit.applying_knobs(resolved, variants.thaw(resolved.rules)):
        if mine is not None and knob not in mine:
            continue
        section, _, name = knob.partition(".")
        for value in fit.knob_domain(knob, rules[section][name]):
            changed_ = {**rules, section: {**rules[section], name: value}}
            if any(check(changed_) is not None for check in CONSISTENCY_CHECKS):
                continue  # no valid profile has it: it proves nothing
            found.append((knob, value, {**document, "rules": changed_}))
    return found


def situation(case: Any) -> str:
    """The case's deals by their cards."""
    return json.dumps([[item["hands"], item["talon"]] for item in case.deals], sort_keys=True)


def count_situations(profile: str, cases: Iterable[Transcript], stop: int = SITUATIONS,
                     ask: Ask | None = None) -> dict[str, set[str]]:
    """The value's label (``label``) -> the situations (at most ``stop``) that tell the value apart under
    the profile, for every applicable value. Cases whose ``knobs`` name the knob are tried
    first, and a value stops at ``stop`` situations."""
    ask = ask or in_process()
    own = own_document(profile)
    cases = list(cases)
    base: dict[str, list[Step]] = {}
    found: dict[str, set[str]] = {}
    for knob, value, document in changed_rules(profile):
        seen: set[str] = set()
        for case in sorted(cases, key=lambda case: knob not in case.knobs):  # the likely ones first
            deal = situation(case)
            if deal in seen:
                continue
            if case.id not in base:
                base[case.id] = list(record(ask, profile, own, case))
            if differs(ask, profile, base[case.id], document, case):
                seen.add(deal)
                if len(seen) >= stop:
                    break
        found[label(profile, knob, value)] = seen
    return found


def label(profile: str, knob: str, value: Any) -> str:
    return f"{profile} {knob}={json.dumps(value, sort_keys=True)}"


def tally(counts: Mapping[str, set[str]], stop: int = SITUATIONS) -> dict[int, int]:
    """How many values have 0, 1, ... ``stop`` (or more) situations."""
    found = {n: 0 for n in range(stop + 1)}
    for deals in counts.values():
        found[min(len(deals), stop)] += 1
    return found


# --- the search ----------------------------------------------------------------------------

def targeted_entry(profile: str, rules: dict[str, Any], seed: str, near: dict[str, Any] | None = None) -> dict[str, Any]:
    """A candidate's manifest entry: often a match state near a line where a rule bites, now and
    then a stacked deck, or one of fuzz's positions with its plans (``fuzz``'s random
    material), kept literally in the entry so that the transcript does not move with fuzz's
    random stream. The material is drawn from the rules ``near`` (the profile's with a short
    value) half of the time: their lines, where that value bites."""
    rng = random.Random(f"search/{seed}")
    entry: dict[str, Any] = {"profile": profile, "seed": seed}
    own = rules
    if near is not None and rng.random() < 0.5:
        rules = near
    roll = rng.random()
    if roll < FOUR_MARRIAGES:
        return {**entry, **four_marriages(rng, rules)}
    if roll < FOUR_MARRIAGES + POSITIONS:  # a position of fuzz, laid out for one rule, with its plans
        position = positions.random_position(rng, rules, fuzz.random_match_state(rng, rules))
        match = {key: value for key, value in position.match.items() if value != DEFAULT_MATCH_STATE.get(key)}
        plan = positions.plan_fields(position)
        if own["marriages"]["declaration"] == "automatic":  # a marriage is declared by playing the king or queen
            plan["plans"] = [[[when, action.removesuffix(" marriage")] for when, action in seat] for seat in plan["plans"]]
        return {**entry, **({"match": match} if match else {}), "dealer": position.dealer,
                "hands": [list(hand) for hand in position.hands], "talon": list(position.talon), "position": plan}
    if rng.random() < 0.6:
        state = fuzz.random_match_state(rng, rules)
        match = {key: value for key, value in state.items() if value != DEFAULT_MATCH_STATE.get(key)}
        if match:
            entry["match"] = match
    if rng.random() < 0.3:
        entry["give_up"] = 0.5
    if rng.random() < 0.4:
        deal = fuzz.shuffled_deal(rng, rng.randrange(3))
        entry.update(dealer=deal.dealer, hands=[list(hand) for hand in deal.hands], talon=list(deal.talon))
    return entry


def plausible(match: Mapping[str, Any] | None, rules: Mapping[str, Any]) -> bool:
    """Whether the profile's rules can reach the match state (material drawn from other rules
    may hold what they cannot: an occupant above a capped barrel, a seat on a barrel they lack,
    a counter past their limit, a score they would have dumped)."""
    state = {**DEFAULT_MATCH_STATE, **(match or {})}
    barrel, end, dump, bolts, limit = rules["barrel"], rules["match_end"], rules["dump"], rules["bolts"], rules["giving_up"]["limit"]
    threshold, target = barrel["threshold"], end["target"]
    if barrel["enabled"] and barrel["max_occupants"] and sum(seat["on"] for seat in state["barrel"]) > barrel["max_occupants"]:
        return False
    for score, seat, bolt, give_ups in zip(state["scores"], state["barrel"], state["bolts"], state["give_ups"]):
        if barrel["enabled"]:
            if seat["on"]:
                if score != threshold and not (barrel["arrival_cap"] == "uncapped" and threshold <= score < target):
                    return False
                if barrel["attempts"] is not None and seat["attempts"] >= barrel["attempts"]:
                    return False
            elif score >= threshold or seat["attempts"]:
                return False
            if barrel["failed_visit_reset"] is not None and seat["failed_visits"] >= barrel["failed_visit_reset"]:
                return False
        elif seat["on"] or seat["attempts"] or seat["failed_visits"] or (score >= target and end["over_target"] != "exact_only"):
            return False
        if dump["enabled"] and (score == dump["score"] or (dump["negative"] and score == -dump["score"])):
            return False
        if bolt and (not bolts["enabled"] or bolt >= bolts["every"]):
            return False
        if limit is not None and give_ups > limit:
            return False
    return True


def giving_up_at(entry: dict[str, Any], count: int, rules: Mapping[str, Any]) -> dict[str, Any]:
    """The entry with every seat one give-up short of ``count`` and giving up wherever it can."""
    limit = rules["giving_up"]["limit"]
    before = max(0, count - 1) if limit is None else min(max(0, count - 1), limit - 1)
    match = {**entry.get("match", {}), "give_ups": [before] * 3}
    return {**{key: value for key, value in entry.items() if key not in ("match", "position")}, "match": match,
            "give_up": 0.9}


def shared_finish(ask: Ask, entry: dict[str, Any], own: dict[str, Any], rng: random.Random) -> dict[str, Any] | None:
    """The entry's deal played from zero, then started again from scores where the two
    defenders who gained the most land on the same score at or past the target (the
    declarer elsewhere): a shared finish the declarer is not part of. None when the
    defenders' gains cannot get them there from below the barrel (or the target)."""
    bare = {key: value for key, value in entry.items() if key != "match"}
    try:
        expect = generate.record_entry(ask, bare, own, 0)["deals"][0]["expect"]
    except generate.GenerationError:
        return None
    deltas, declarer = (expect.get("deal_result") or {}).get("deltas"), expect.get("declarer")
    if not isinstance(deltas, list) or not isinstance(declarer, int):
        return None
    rules = own["rules"]
    ceiling = rules["barrel"]["threshold"] if rules["barrel"]["enabled"] else rules["match_end"]["target"]
    finish = rules["match_end"]["target"] + 5 * rng.randint(0, 3)
    scores = [finish - delta for delta in deltas]
    scores[declarer] = 5 * rng.randint(0, (ceiling - 5) // 5 - 30)
    if any(score >= ceiling or score < 0 for score in scores):
        return None
    return {**bare, "match": {"scores": scores}}


def four_marriages(rng: random.Random, rules: dict[str, Any]) -> dict[str, Any]:
    """The declarer holds three marriages and the talon the fourth: a contract near the
    maximum bid (all four marriages over 120) becomes possible, and the declarer asks for one."""
    suits = rng.sample(positions.SUITS, 4)
    rest = [card for card in positions.DECK if card[:-1] not in ("K", "Q")]
    rng.shuffle(rest)
    declarer = rng.randrange(3)
    hands: list[list[str]] = [[], [], []]
    hands[declarer] = [f"{rank}{suit}" for suit in suits[:3] for rank in ("K", "Q")] + rest[:1]
    others = [seat for seat in range(3) if seat != declarer]
    hands[others[0]], hands[others[1]] = rest[1:8], rest[8:15]
    talon = [f"K{suits[3]}", f"Q{suits[3]}", rest[15]]
    top = int(rules["auction"]["max_bid"] or 400)
    least = rng.choice([top - 20, top - 10, top, top + 10])
    return {"dealer": (declarer - 1) % 3, "hands": [list(positions.in_order(h)) for h in hands],
            "talon": list(positions.in_order(talon)),
            "position": {"declarer": declarer, "plans": [[], [], []], "scripted": False, "least_contract": least}}


POSITIONS = 0.0  # the share of candidates laid out as a position (--positions)
FOUR_MARRIAGES = 0.05  # the share laid out with all four marriages to the declarer


def save_targeted(entries: list[dict[str, Any]], path: Path = generate.TARGETED_FILE) -> None:
    """The manifest, one entry per line (flow style), grouped by profile in PROFILES order."""
    order = {name: index for index, name in enumerate(PROFILES + OPTIONS)}
    entries = sorted(entries, key=lambda entry: order.get(entry["profile"], len(order)))  # stable within a profile
    lines = [HEADER.rstrip("\n"), "targeted:"]
    for entry in entries:
        lines.append("  - " + json.dumps(entry))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


HEADER = """\
# Targeted deals (generated by tools/situations.py --search; do not edit by hand): seeded deals
# that tell apart knob values few cases told apart under their profile. conformance/oracle/generate.py
# records each as conformance/generated/<profile>/targeted-NNN.yaml (NNN counts the profile's
# entries in this order) and checks them with --check; the match state and cards, where given,
# were chosen by the search.
"""


class Candidate:
    """A targeted deal recorded in-process as ``conformance.oracle.generate`` records it."""

    def __init__(self, entry: dict[str, Any], transcript: dict[str, Any]) -> None:
        self.entry = entry
        self.id = transcript["id"]
        self.match = transcript.get("match")
        self.deals = transcript["deals"]
        self.knobs: tuple[str, ...] = ()


def is_targeted(case: Any) -> bool:
    return "/targeted-" in case.id


def telling(ask: Ask, profile: str, candidate: Candidate, keys: Iterable[str], counts: Mapping[str, set[str]],
            documents: Mapping[str, dict[str, Any]]) -> set[str]:
    """The values among ``keys`` the candidate tells apart in a situation ``counts`` lacks."""
    own = own_document(profile)
    deal = situation(candidate)
    base = list(record(ask, profile, own, candidate))
    return {key for key in keys if deal not in counts[key] and differs(ask, profile, base, documents[key], candidate)}


def search(profile: str, counts: dict[str, set[str]], taken: set[str], budget: int, ask: Ask, start: int = 0,
           log: Callable[[str], None] = print) -> list[Candidate]:
    """Seeded candidates (``targeted_entry``) that tell apart some value still short of
    ``SITUATIONS`` in a new situation (``counts`` grows with them); at most ``budget`` tried."""
    own = own_document(profile)
    documents = {label(profile, knob, value): document for knob, value, document in changed_rules(profile)}
    equivalent = {item.label for item in variants.load_equivalents()}  # no deal can show them: not searched
    short = {key for key, deals in counts.items() if len(deals) < SITUATIONS and key not in equivalent}
    kept: list[Candidate] = []
    for attempt in range(start, start + budget):
        if not short:
            break
        seed = f"{profile}/{attempt}"
        if seed in taken:
            continue
        draw = random.Random(seed)
        pick = draw.choice(sorted(short))
        entry = targeted_entry(profile, own["rules"], seed, documents[pick]["rules"])
        counted = pick.split(" ", 1)[1].partition("=")
        if counted[0].startswith("giving_up.") and counted[2].isdigit() and draw.random() < 0.5:
            entry = giving_up_at(entry, int(counted[2]), own["rules"])  # the give-up a count names, by anyone
        if counted[0] == "match_end.tie_break" and draw.random() < 0.9:
            entry = shared_finish(ask, entry, own, draw) or entry
        if not plausible(entry.get("match"), own["rules"]):
            continue
        try:
            candidate = Candidate(entry, generate.record_entry(ask, entry, own, number=0))
        except generate.GenerationError:
            continue  # a match state the profile cannot have (drawn from the other rules)
        found = telling(ask, profile, candidate, sorted(short), counts, documents)
        if found:
            kept.append(candidate)
            for key in found:
                counts[key].add(situation(candidate))
                if len(counts[key]) >= SITUATIONS:
                    short.discard(key)
            log(f"  {seed}: {'; '.join(sorted(found))}")
    return kept


def select(profile: str, base: Mapping[str, set[str]], candidates: list[Candidate], ask: Ask) -> list[Candidate]:
    """The fewest candidates (greedily) that bring every value short in ``base`` as near
    ``SITUATIONS`` as all of them do; in their given order."""
    documents = {label(profile, knob, value): document for knob, value, document in changed_rules(profile)}
    short = sorted(key for key, deals in base.items() if len(deals) < SITUATIONS)
    tells = {id(c): telling(ask, profile, c, short, base, documents) for c in candidates}
    have = {key: set(base[key]) for key in short}
    chosen: list[Candidate] = []

    def gain(candidate: Candidate) -> int:
        deal = situation(candidate)
        return sum(1 for key in tells[id(candidate)] if len(have[key]) < SITUATIONS and deal not in have[key])

    while True:
        best = max(candidates, key=gain, default=None)  # the first of the best
        if best is None or gain(best) == 0:
            break
        chosen.append(best)
        for key in tells[id(best)]:
            have[key].add(situation(best))
    return [c for c in candidates if c in chosen]


def write(profile: str, chosen: list[Candidate], ask: Ask) -> None:
    """The profile's targeted transcripts, with their knobs (as generate and case_knobs write them)."""
    from conformance.corpus.transcripts import load
    from tools.case_knobs import case_knobs, with_knobs

    folder = GENERATED_DIR / profile
    for stale in folder.glob("targeted-*.yaml"):
        stale.unlink()
    folder.mkdir(exist_ok=True)  # an option's first targeted deals
    own = variants.resolve(profile).to_document()
    for number, candidate in enumerate(chosen):
        path = GENERATED_DIR / generate.targeted_path(profile, number)
        path.write_text(generate.to_yaml(generate.record_entry(ask, candidate.entry, own, number)), encoding="utf-8")
        case = load(path, GENERATED_DIR)
        path.write_text(with_knobs(path.read_text(encoding="utf-8"), case_knobs(case, ask)), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/situations.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--search", action="store_true", help="add targeted deals for the values short of three")
    parser.add_argument("--write", action="store_true", help="only write the targeted transcripts the list names")
    parser.add_argument("--budget", type=int, default=2000, help="candidate deals tried per profile (default 2000)")
    parser.add_argument("--positions", type=float, default=0.5,
                        help="the share of candidates laid out as one of fuzz's positions (default 0.5)")
    parser.add_argument("--start", type=int, default=0, help="the first candidate seed number (default 0)")
    parser.add_argument("--options", action="store_true",
                        help="the options (name+option; the knobs each sets) in place of the bundled profiles")
    parser.add_argument("profiles", nargs="*")
    args = parser.parse_args(argv)
    args.profiles = args.profiles or list(OPTIONS if args.options else PROFILES)
    global POSITIONS
    POSITIONS = args.positions
    ask = in_process()
    entries = generate.load_targeted()
    if args.write:
        for profile in args.profiles:
            write(profile, [Candidate(entry, {"id": "", "deals": []}) for entry in entries if entry["profile"] == profile], ask)
        return 0
    cases = corpus()
    for profile in args.profiles:
        started = time.perf_counter()
        mine = [case for case in cases if profile in case.profiles]
        counts = count_situations(profile, [case for case in mine if not (args.search and is_targeted(case))], ask=ask)
        figures = tally(counts)
        print(f"{profile}: {len(counts)} values; " + ", ".join(f"{n}{'+' if n == SITUATIONS else ''}: {c}"
                                                              for n, c in figures.items())
              + f" ({time.perf_counter() - started:.1f} s)" + (" without the targeted deals" if args.search else ""))
        for key, deals in counts.items():
            if len(deals) < SITUATIONS:
                print(f"  {len(deals)} {key}")
        if not args.search:
            continue
        base = {key: set(deals) for key, deals in counts.items()}
        own = own_document(profile)
        old = [Candidate(entry, generate.record_entry(ask, entry, own, number=0))
               for entry in entries if entry["profile"] == profile and plausible(entry.get("match"), own["rules"])]
        documents = {label(profile, knob, value): document for knob, value, document in changed_rules(profile)}
        for candidate in old:
            for key in telling(ask, profile, candidate, [k for k, d in counts.items() if len(d) < SITUATIONS],
                               counts, documents):
                counts[key].add(situation(candidate))
        new = search(profile, counts, {entry["seed"] for entry in entries}, args.budget, ask, args.start)
        chosen = select(profile, base, old + new, ask)
        entries = [entry for entry in entries if entry["profile"] != profile] + [c.entry for c in chosen]
        save_targeted(entries)
        write(profile, chosen, ask)
        print(f"{profile}: {len(chosen)} targeted deals ({len(old)} before, {len(new)} found); still short: "
              + "; ".join(f"{key} ({len(deals)})" for key, deals in counts.items() if len(deals) < SITUATIONS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
