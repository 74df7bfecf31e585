"""The mutant catalogue, the mutant server and the kill-matrix logic (the full matrix runs as
``python -m mutants``, not here: it is too slow for pytest)."""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import variants
from mutants import matrix
from mutants.catalogue import CATALOGUE, select
from mutants.patching import Patch
from reference_impl import MatchState, RefusedActionError, Rules, deal_end
from reference_impl.cards import card
from reference_impl.rules import GivingUpRules
from tests.support.paths import ROOT


# dealer 2, so seat 0 opens; seat 0 holds the aces and tens, seat 1 the kings, seat 2 the queens
HANDS = [["AS", "10S", "AC", "10C", "AD", "10D", "10H"], ["KS", "KC", "JC", "KD", "JD", "KH", "JH"],
         ["QS", "QC", "9C", "QD", "9D", "QH", "9H"]]  # fmt: skip
TALON = ["AH", "9S", "JS"]


@functools.cache
def documents() -> dict[str, Any]:
    """Every bundled profile, and every profile with each of its options."""
    names = variants.all_names()
    return {name: variants.resolve(name).to_document() for name in names}


def rules_seen(docs: dict[str, Any]) -> dict[str, Rules]:
    return {name: Rules.from_document(doc) for name, doc in docs.items()}


@functools.cache
def pristine_rules() -> dict[str, Rules]:
    """What the engine reads of every document with no mutant applied, read once for all the
    mutants (the first test to ask runs with nothing patched, as every test ends so)."""
    return rules_seen(documents())


def play(profile: str, actions: list[str], hands: list[list[str]] = HANDS) -> tuple[MatchState, list[dict[str, Any]], list[str]]:
    """Deal the hands under the profile and apply the actions; refused ones are collected."""
    state = MatchState(Rules.from_document(variants.resolve(profile).to_document()))
    events = state.start_deal(2, hands, TALON)
    refused = []
    for action in actions:
        try:
            events += state.apply(action)
        except RefusedActionError as exc:
            refused.append(exc.reason)
    return state, events, refused


def tricks(events: list[dict[str, Any]]) -> list[int]:
    return [e["player"] for e in events if e["type"] == "trick_won"]


# ---------------------------------------------------------------- the catalogue


def test_catalogue_has_at_least_40_named_and_described_mistakes() -> None:
    assert len(CATALOGUE) >= 40
    for name, m in CATALOGUE.items():
        assert m.name == name
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name), name
        assert len(m.description) > 15 and "\n" not in m.description, name
    assert len({m.description for m in CATALOGUE.values()}) == len(CATALOGUE)


def test_the_issue_s_required_mistakes_are_catalogued() -> None:
    required = {
        "ten-below-king", "marriage-on-first-trick", "trump-from-next-trick", "no-duty-to-trump", "must-beat-missing",
        "must-overtrump-missing", "must-beat-added", "rounding-remainder-2-up", "give-up-half-rounded-up",
        "defender-rounding-to-5", "bolt-for-two-points", "bolt-for-failed-declarer", "bolt-on-barrel",
        "barrel-not-capping", "barrel-attempts-as-declarer", "knock-off-penalises-newcomer", "dump-positive-only",
        "give-up-counter-shared", "ceiling-ignores-marriages", "ceiling-counts-talon-marriage", "stop-at-ignored",
        "talon-always-shown", "lock-from-820", "declarer-rounded-before-check", "opener-may-pass",
    }  # fmt: skip
    assert required <= set(CATALOGUE)


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_each_mutant_changes_the_engine_and_undoes_itself(name: str) -> None:
    """Applied, the mutant changes what the engine reads or a function it runs; afterwards nothing is left."""
    m = CATALOGUE[name]
    patches: list[Patch] = m.build()
    assert patches
    docs = documents()
    before_rules = pristine_rules()
    before = [(p.owner, p.attribute, getattr(p.owner, p.attribute)) for p in patches]
    with m.applied():
        # one changed document is enough, and most mutants change the first one read
        changed_rules = any(Rules.from_document(doc) != before_rules[name] for name, doc in docs.items())
        changed_code = any(getattr(owner, attr) is not value for owner, attr, value in before)
        assert changed_rules or changed_code
        if all(p.owner is Rules for p in patches):
            assert changed_rules, f"{name} changes no knob of any bundled profile"
    assert rules_seen(docs) == before_rules
    assert all(getattr(owner, attr) == value for owner, attr, value in before)


def test_select_by_glob_and_unknown_names() -> None:
    assert [m.name for m in select(["ten-below-king"])] == ["ten-below-king"]
    assert all(m.name.startswith("bolt") for m in select(["bolt*"])) and len(select(["bolt*"])) >= 3
    assert len(select([])) == len(CATALOGUE)
    with pytest.raises(KeyError, match="no-such"):
        select(["no-such-mutant"])


# ------------------------------------------------- the mutants misbehave (a sample)


OPENING = ["bid 100", "pass", "pass", "give 9S JS", "contract 100"]


def test_ten_below_king_loses_the_ten_to_the_king() -> None:
    actions = OPENING + ["play 10S", "play KS", "play QS"]
    _, events, _ = play("classic", actions)
    assert tricks(events) == [0]  # the ten beats the king
    with CATALOGUE["ten-below-king"].applied():
        _, events, _ = play("classic", actions)
    assert tricks(events) == [1]


def test_king_queen_points_swapped_changes_a_trick_s_points() -> None:
    actions = OPENING + ["play 10S", "play KS", "play QS"]
    with CATALOGUE["king-queen-points-swapped"].applied():
        _, events, _ = play("classic", actions)
    # 10 + K 3 + Q 4 = 17, the same total: the swap shows in a trick with one of them only
    _, plain, _ = play("classic", actions)
    assert [e["points"] for e in events if e["type"] == "trick_won"] == [e["points"] for e in plain if e["type"] == "trick_won"]
    assert card("KS").points == 4 and card("QS").points == 3
    with CATALOGUE["king-queen-points-swapped"].applied():
        assert card("KS").points == 3 and card("QS").points == 4


def test_opener_may_pass_accepts_what_the_reference_refuses() -> None:
    _, _, refused = play("classic", ["pass"])
    assert refused == ["opener_must_bid"]
    with CATALOGUE["opener-may-pass"].applied():
        state, _, refused = play("classic", ["pass", "pass"])
    assert refused == [] and state.declarer == 2 and state.high_bid == 100


def test_rounding_remainder_2_up_rounds_62_to_65() -> None:
    assert deal_end.round_score(62, "nearest_5") == 60
    with CATALOGUE["rounding-remainder-2-up"].applied():
        assert deal_end.round_score(62, "nearest_5") == 65
        assert deal_end.round_score(61, "nearest_5") == 60
        assert deal_end.round_score(65, "nearest_10") == 70  # the other rounding untouched


def test_give_up_half_truncated_drops_the_half() -> None:
    rules = GivingUpRules(True, "give_up", "with_contract", "nothing", "half_bid", 0, "exact", 1, 120, None, None, False)
    assert deal_end.give_up_defender_gain(rules, 115) == Fraction(115, 2)
    with CATALOGUE["give-up-half-truncated"].applied():
        assert deal_end.give_up_defender_gain(rules, 115) == 57


def test_marriage_without_partner_is_accepted() -> None:
    # seat 0 holds KH without QH, wins the first trick with AC and leads KH "with its marriage"
    hands = [["AS", "10S", "AC", "10C", "AD", "10D", "KH"], ["KS", "KC", "JC", "KD", "JD", "10H", "JH"], HANDS[2]]
    actions = OPENING + ["play AC", "play KC", "play QC", "play KH marriage"]
    state, _, refused = play("classic", actions, hands)
    assert refused == ["marriage_not_held"] and state.marriages[0] == []
    with CATALOGUE["marriage-without-partner"].applied():
        state, _, refused = play("classic", actions, hands)
    assert refused == [] and state.marriages[0] == ["H"] and state.trump == "H"


def test_talon_always_shown_misreads_the_knob() -> None:
    doc = variants.resolve("polish-tournament").to_document()
    assert Rules.from_document(doc).talon.shown == "from_bid"
    with CATALOGUE["talon-always-shown"].applied():
        assert Rules.from_document(doc).talon.shown == "always"


def test_give_up_counter_shared_charges_another_player_s_give_ups() -> None:
    doc = variants.resolve("classic").to_document()  # penalty_from 3: the third give-up costs 120
    actions = ["bid 100", "pass", "pass", "give 9S JS", "give_up"]

    def scores(match: dict[str, Any]) -> list[Any]:
        state = MatchState(Rules.from_document(doc), match)
        state.start_deal(2, HANDS, TALON)
        for action in actions:
            state.apply(action)
        return state.observation()["scores"]

    match = {"give_ups": [0, 1, 1]}
    assert scores(match) == [0, 60, 60]
    with CATALOGUE["give-up-counter-shared"].applied():
        assert scores(match) == [-120, 60, 60]


def _bolts_taken(mutant: str | None, points: list[int], tricks_won: list[int]) -> list[int]:
    """The bolts deal_end gives under classic with its option of bolts for the declarer too (a
    zero judged by points) after a played deal of seat 0's, with or without a mutant."""
    document = variants.resolve("classic").to_document()
    document["rules"]["bolts"]["declarer"] = True
    state = MatchState(Rules.from_document(document))
    state.tricks_won = list(tricks_won)
    outcome = deal_end.DealOutcome("played", 0, 100, False, list(points), [])
    events: list[dict[str, Any]] = []
    if mutant is None:
        deal_end._bolts(state, outcome, events)
    else:
        with CATALOGUE[mutant].applied():
            deal_end._bolts(state, outcome, events)
    return [e["player"] for e in events if e["type"] == "bolt"]


def test_a_mutant_of_the_bolt_s_zero_still_judges_the_declarer_where_the_rules_do() -> None:
    # seat 0 declared and failed: 0 points in 0 tricks; seat 1 took 2 points in one trick
    # (a jack and two nines), seat 2 the other 118. These rules give the declarer a bolt, as
    # they do a defender; each mutant changes what a zero is and nothing else
    assert _bolts_taken(None, [0, 2, 118], [0, 1, 7]) == [0]
    assert _bolts_taken("bolt-for-two-points", [0, 2, 118], [0, 1, 7]) == [0, 1]
    assert _bolts_taken("bolt-counts-tricks", [0, 2, 118], [0, 1, 7]) == [0]
    # a declarer with 2 points is a zero for the two-point mutant; one trick won is none for
    # the trick-counting one
    assert _bolts_taken("bolt-for-two-points", [2, 0, 118], [1, 0, 7]) == [0, 1]
    assert _bolts_taken("bolt-counts-tricks", [2, 0, 118], [1, 0, 7]) == [1]


# ------------------------------------------------------------- the mutant server


def test_serve_names_the_mutant_in_the_start_reply() -> None:
    request = json.dumps({"cmd": "start", "seq": 1, "version": 1}) + "\n" + json.dumps({"cmd": "stop", "seq": 2}) + "\n"
    done = subprocess.run([sys.executable, "-m", "mutants.serve", "ten-below-king"], input=request, capture_output=True,
                          text=True, cwd=ROOT, timeout=60, check=False)  # fmt: skip
    first = json.loads(done.stdout.splitlines()[0])
    assert first["implementation"]["name"] == "reference+mutant:ten-below-king"
    assert done.returncode == 0


@pytest.mark.slow
def test_serve_under_house_rules_declares_a_list(tmp_path: Path) -> None:
    """A realistic double: house rules, a mistake no knob expresses and a list declaration."""
    house = tmp_path / "oak.yaml"
    house.write_text("profile: oak\ntitle: Oak club\nstatus: draft\nsummary: Classic with a 300 maximum bid.\nextends: classic\nsources: {}\n"
                     "rules:\n  auction:\n    max_bid: {value: 300, ruling: 'The club caps every bid at 300.'}\n", encoding="utf-8")
    request = json.dumps({"cmd": "start", "seq": 1, "version": 1}) + "\n" + json.dumps({"cmd": "stop", "seq": 2}) + "\n"
    done = subprocess.run([sys.executable, "-m", "mutants.serve", "--rules", str(house), "--declare", "classic,polish",
                           "ten-below-king"], input=request, capture_output=True, text=True, cwd=ROOT, timeout=60,
                          check=False)  # fmt: skip
    first = json.loads(done.stdout.splitlines()[0])
    assert first["implementation"]["name"] == "thousand-reference --rules oak+mutant:ten-below-king"
    assert first["profiles"] == ["classic", "polish"]


def test_serve_refuses_an_unknown_mutant() -> None:
    from mutants.serve import main

    assert main(["no-such-mutant"]) == 2
    assert main([]) == 2


def test_serve_with_a_mode_alone_skips_what_it_says_and_offers_no_extension() -> None:
    """``--mode`` needs no mistake (a hostile adapter of correct rules); its replies go one by
    one (no extension), so that every hostile reply is one a runner reads."""
    lines = [{"seq": 1, "cmd": "start", "version": 1}, {"seq": 2, "cmd": "legal"}, {"seq": 3, "cmd": "state"}]
    request = "".join(json.dumps(line) + "\n" for line in lines)
    done = subprocess.run([sys.executable, "-m", "mutants.serve", "--mode", "skip-legal"], input=request,
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    start, legal, state = (json.loads(line) for line in done.stdout.splitlines())
    assert "extensions" not in start and start["implementation"]["name"] == "reference+mutant:mode-skip-legal"
    assert legal == {"seq": 2, "skipped": {"reason": "legal sets are not served"}}
    assert "errored" in state  # no match yet: only the legal set is skipped


# -------------------------------------------------------------- the kill matrix


def fake_report(outcomes: dict[tuple[str, str], str]) -> dict[str, Any]:
    return {"cases": [{"id": case, "profile": profile, "outcome": o} for (case, profile), o in outcomes.items()]}


def test_kill_matrix_counts_only_runs_the_reference_passes() -> None:
    reference = fake_report({("a/long-case", "p"): "pass", ("a/x", "p"): "pass", ("a/x", "q"): "pass",
                             ("a/broken", "p"): "fail", ("a/skip", "p"): "pass", ("a/err", "p"): "pass"})  # fmt: skip
    baseline = matrix.passing(reference)
    assert ("a/broken", "p") not in baseline
    mutant = fake_report({("a/long-case", "p"): "fail", ("a/x", "p"): "fail", ("a/x", "q"): "fail",
                          ("a/broken", "p"): "fail", ("a/skip", "p"): "skipped", ("a/err", "p"): "timeout"})  # fmt: skip
    steps = {"a/long-case": 3, "a/x": 3, "a/err": 9}
    v = matrix.verdict("m", "a mistake", baseline, mutant, steps)
    assert v.killed
    assert v.killers == ["a/err@p", "a/long-case@p", "a/x@p", "a/x@q"]
    assert v.killing_cases == 3
    assert (v.cheapest, v.cheapest_steps) == ("a/x", 3)  # fewest steps, then the shorter id


def test_a_mutant_passing_everything_survives_and_is_listed() -> None:
    reference = fake_report({("a/x", "p"): "pass", ("a/y", "p"): "fail"})
    survivor = matrix.verdict("quiet", "a quiet mistake", matrix.passing(reference), fake_report({("a/x", "p"): "pass"}), {})
    broken = matrix.verdict("broken", "no report", set(), None, {}, problem="the runner wrote no report")
    killed = matrix.verdict("loud", "a loud mistake", matrix.passing(reference), fake_report({("a/x", "p"): "error"}), {})
    assert not survivor.killed and not broken.killed and killed.killed
    text = matrix.render([killed, survivor, broken])
    assert "quiet" in text and "SURVIVED" in text and "the runner wrote no report" in text
    assert text.splitlines()[-1] == "1 of 3 mutants killed; survivors: quiet, broken"
    assert survivor.to_json()["killed"] is False and killed.to_json()["cheapest"] == "a/x"


def test_count_steps_reads_every_deal(tmp_path: Path) -> None:
    (tmp_path / "p" / "s").mkdir(parents=True)
    (tmp_path / "p" / "s" / "two-deals.yaml").write_text(
        "id: p/s/two-deals\ndeals:\n- steps: [{action: pass}, {action: pass}]\n- steps: [{action: pass}]\n", encoding="utf-8")
    (tmp_path / "p" / "s" / "broken.yaml").write_text("id: [unclosed\n", encoding="utf-8")
    assert matrix.count_steps([tmp_path]) == {"p/s/two-deals": 3}


@pytest.mark.slow
def test_a_broken_reference_fails_naming_the_first_diverging_step_and_the_knob() -> None:
    """The reference with one rule broken (no duty to beat) fails where the duty first matters."""
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "verify", "--profile", "polish",
         "-k", "polish/play/must-beat-the-card-led", "--", sys.executable, "-m", "mutants.serve", "must-beat-missing"],
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 1
    assert "FAIL polish/play/must-beat-the-card-led [polish]" in run.stdout
    assert "at deal 1, step 7 (play 9S)" in run.stdout
    assert "knobs: play.must_beat" in run.stdout
    assert 'expected: ["play KS"]' in run.stdout


def test_the_matrix_scores_whether_the_top_root_cause_names_the_broken_knob() -> None:
    from mutants.matrix import verdict

    report = {"cases": [{"id": "a/x", "profile": "p", "outcome": "fail"}], "unexpected": 4,
              "groups": [{"signature": "state.scores", "knobs": ["scoring.declarer_rounding"], "count": 3, "cases": [], "example": ""}]}
    section = verdict("m", "d", {("a/x", "p")}, report, {}, knobs=("scoring",))
    assert section.diagnosed and section.top_share == 0.75
    assert not verdict("m", "d", {("a/x", "p")}, report, {}, knobs=("bolts.every",)).diagnosed


def test_the_matrix_fails_a_mutant_whose_report_does_not_point_at_its_mistake() -> None:
    from mutants.matrix import undiagnosed, verdict

    def report(share: int, signature: str, knobs: list[str]) -> dict[str, Any]:
        return {"cases": [{"id": "a/x", "profile": "p", "outcome": "fail"}], "unexpected": 10,
                "groups": [{"signature": signature, "knobs": knobs, "count": share, "cases": [], "example": ""}]}

    baseline = {("a/x", "p")}
    weak = verdict("weak", "d", baseline, report(7, "state.scores", ["scoring.declarer_rounding"]), {}, knobs=("scoring",))
    strong = verdict("strong", "d", baseline, report(8, "state.scores", ["scoring.declarer_rounding"]), {}, knobs=("scoring",))
    wrong = verdict("wrong", "d", baseline, report(10, "state.bolts", ["bolts.every"]), {}, knobs=("scoring.declarer_rounding",))
    fixed = verdict("fixed", "d", baseline, report(9, "event[play] trick_won differs in points", []), {}, knobs=("scoring",))
    broken = verdict("broken", "d", baseline, report(10, "timeout: no reply", []), {}, knobs=("scoring",))
    assert undiagnosed([weak, strong, wrong, fixed, broken]) == ["weak", "wrong", "broken"]
