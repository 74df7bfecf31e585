"""``thousand fit``, ``thousand fuzz``, ``verify --rules`` and ``thousand-reference --rules``:
small, seeded runs against knob-shifted references and one mutant, all as subprocesses."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import variants
from conformance.oracle import evidence, fit, fuzz, observe
from conformance.cli import main
from conformance.harness.runner import REFERENCE_COMMAND
from conformance.corpus.transcripts import CASES_DIR, load

HOUSE = """\
profile: {name}
title: A table that never beats
status: stable
summary: Polish rules, except that nobody has to beat the card leading the trick.
extends: polish
sources:
  table: {{title: "What the test table agreed"}}
rules:
  play:
    must_beat: {{value: false, source: "table play"}}
"""
MUST_BEAT_CASES = ("polish/play/must-beat-the-card-led", "polish/play/must-beat-the-current-winner",
                   "polish/play/cannot-beat-any-card-of-suit")


@pytest.fixture()
def house(tmp_path: Path) -> Path:
    path = tmp_path / "no-beat.yaml"
    path.write_text(HOUSE.format(name="no-beat"), encoding="utf-8")
    return path


def test_the_reference_plays_the_house_rules_whatever_match_names(house: Path) -> None:
    lines = ['{"cmd":"start","seq":1,"version":1}',
             '{"cmd":"match","seq":2,"profile":"polish","state":null}',
             '{"cmd":"stop","seq":3}']
    done = subprocess.run([*REFERENCE_COMMAND, "--rules", str(house)], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert '"seq":2,"ok":true' in done.stdout  # no document needed: the house rules are played
    assert "no-beat" in done.stdout.splitlines()[0]


def test_a_bad_rules_file_is_exit_2_with_one_line(tmp_path: Path) -> None:
    done = subprocess.run([*REFERENCE_COMMAND, "--rules", str(tmp_path / "missing.yaml")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--rules" in done.stderr and "Traceback" not in done.stderr


def test_signatures_name_the_kind_the_phase_and_the_shape_of_a_difference() -> None:
    state = {"phase": "play", "scores": [0, 0, 0]}
    want = observe.CaseRecord("c", (observe.StepRecord(1, 1, "play AS", ("play AS",), observe.Reply(True), state),))
    got = observe.CaseRecord("c", (observe.StepRecord(1, 1, "play AS", ("play 9S", "play AS"),
                                                      observe.Reply(True), {**state, "scores": [0, 5, 0]}),))
    found = [f.signature for f in observe.findings(observe.compare(want, got))]
    assert found == ["legal[deal]: unexpected leads", "state.scores"]
    assert observe.action_shape("play QD marriage") == "play marriage"


@pytest.mark.slow
def test_fit_recovers_one_changed_knob_on_a_few_cases(house: Path) -> None:
    cases = [load(CASES_DIR / f"{case_id}.yaml", CASES_DIR) for case_id in MUST_BEAT_CASES]
    fitter = fit.Fitter("polish", cases, [*REFERENCE_COMMAND, "--rules", str(house)])
    try:
        result = fitter.run()
    finally:
        fitter.close()
    assert not result.residual
    assert fit.changed_knobs(variants.resolve("polish"), result.rules) == ["play.must_beat"]
    text = fit.house_yaml(variants.resolve("polish"), result.rules, result.accepted, "fitted", "the table")
    path = house.parent / "fitted.yaml"
    path.write_text(text, encoding="utf-8")
    assert variants.resolve(str(path)).rules["play"]["must_beat"] is False  # a valid house profile
    assert "polish/play/" in text  # the ruling names a case as evidence


@pytest.mark.slow
def test_fuzz_finds_a_mutant_and_saves_a_valid_transcript(tmp_path: Path) -> None:
    document = variants.resolve("polish").to_document()
    outcome = fuzz.fuzz([sys.executable, "-m", "mutants.serve", "must-beat-missing"], "polish", document,
                        deals=60, seed="7", save_to=tmp_path)
    assert outcome.divergence is not None and outcome.saved is not None
    case = load(outcome.saved, tmp_path)  # schema-valid, with the seed in its description
    assert case.generated and "--seed 7" in case.description
    assert main(["verify", "--cases", str(tmp_path), "--profile", "polish"]) == 0  # the reference passes it


@pytest.mark.slow
def test_fuzz_of_the_reference_against_itself_finds_nothing() -> None:
    assert main(["fuzz", "--profile", "classic", "--deals", "8", "--seed", "3", "--", *REFERENCE_COMMAND]) == 0


@pytest.mark.parametrize("argv", [
    ["fuzz", "--profile", "classic", "--deals", "0", "--", "x"],
    ["fuzz", "--profile", "no-such-profile", "--", "x"],
    ["fuzz", "--profile", "classic"],
    ["fit", "--profile", "classic"],
    ["fit", "--profile", "classic", "--output", "Bad Name.yaml", "--", "x"],
    ["verify", "--rules", "nowhere.yaml", "--", "x"],
])
def test_option_errors_exit_2(argv: list[str]) -> None:
    assert main(argv) == 2


def test_fuzz_needs_exactly_one_source_of_rules() -> None:
    with pytest.raises(SystemExit) as stop:
        main(["fuzz", "--deals", "3", "--", "x"])
    assert stop.value.code == 2


@pytest.mark.slow
def test_verify_rules_uses_the_reference_under_the_house_file_as_the_oracle(house: Path, tmp_path: Path) -> None:
    name = "polish/play/must-beat-the-card-led.yaml"
    (tmp_path / "cases" / name).parent.mkdir(parents=True)
    (tmp_path / "cases" / name).write_bytes((CASES_DIR / name).read_bytes())
    one_case = ["--cases", str(tmp_path / "cases")]
    assert main(["verify", "--rules", str(house), *one_case, "--", *REFERENCE_COMMAND, "--rules", str(house)]) == 0
    assert main(["verify", "--rules", str(house), *one_case, "--", *REFERENCE_COMMAND, "--rules", "polish"]) == 1


def _fitted(tmp_path: Path, profile: str, rules: str, case_ids: list[str]) -> fit.FitResult:
    path = tmp_path / "secret.yaml"
    path.write_text("profile: secret\ntitle: A secret table\nstatus: draft\nsummary: A table that changed a rule or two.\n"
                    f"extends: {profile}\nsources:\n  table: {{title: \"What the table agreed\"}}\nrules:\n{rules}",
                    encoding="utf-8")
    cases = [load(CASES_DIR / f"{case_id}.yaml", CASES_DIR) for case_id in case_ids]
    fitter = fit.Fitter(profile, cases, [*REFERENCE_COMMAND, "--rules", str(path)])
    try:
        return fitter.run()
    finally:
        fitter.close()


@pytest.mark.slow
def test_fit_weighs_every_value_that_explains_the_sample(tmp_path: Path) -> None:
    # 780 and 790 both set the 800 rule's line past the 770 + 40 case; only 790 also counts the
    # 780-plus-40 case in full: the first value tried must not end the search
    result = _fitted(tmp_path, "polish", "  defender_lock:\n    from: {value: 790, source: \"table lock\"}\n",
                     ["polish/defender_lock/770-plus-40-is-810-house", "polish/defender_lock/seed-004-780-plus-40-is-820",
                      "polish/defender_lock/790-counts-in-full-house"])
    assert not result.residual
    assert result.rules["defender_lock"]["from"] == 790
    assert [[c.knob for c in record.changes] for record in result.accepted] == [["defender_lock.from"]]


@pytest.mark.slow
def test_fit_finds_two_knobs_that_change_the_same_deltas(tmp_path: Path) -> None:
    # a fourth bomb: the penalty from the second and 80 to each defender; either alone leaves
    # "deal_scored differs in deltas", but each sets some of the deltas right
    result = _fitted(tmp_path, "polish-tournament",
                     "  giving_up:\n    penalty_from: {value: 2, source: \"table bombs\"}\n"
                     "    defender_gain_amount: {value: 80, source: \"table bombs\"}\n",
                     ["polish/giving_up/fourth-bomb-no-penalty-no-limit", "polish/giving_up/second-bomb-in-a-later-deal"])
    assert not result.residual
    assert fit.changed_knobs(variants.resolve("polish-tournament"), result.rules) == [
        "giving_up.defender_gain_amount", "giving_up.penalty_from"]


def test_values_apart_counts_plain_values_field_by_field() -> None:
    assert evidence.values_apart({"deltas": [-120, 60, 60]}, {"deltas": [-120, 80, 80]}) == 2
    assert evidence.values_apart(["play AS"], ["play AS", "play 9S"]) == 1
    assert evidence.values_apart({"a": 1}, {"a": 1, "b": 2}) == 1


@pytest.mark.slow
def test_fit_keeps_the_candidate_that_breaks_no_matching_case(tmp_path: Path) -> None:
    # the 800 rule from 810, or no 800 rule at all: both fix the cases where a defender goes
    # from 780 past 800, but only 810 keeps the defender capped at 990 from 775
    result = _fitted(tmp_path, "polish", "  defender_lock:\n    from: {value: 810, source: \"table lock\"}\n",
                     ["polish/defender_lock/seed-004-780-plus-40-is-820", "polish/giving_up/bomb-gain-under-800-rule-house",
                      "polish-tournament/defender_lock/declarer-above-800-scores-in-full",
                      "polish/defender_lock/caught-defender-max-ignored-775-plus-220", "polish/defender_lock/defender-stops-at-990"])
    assert not result.residual
    assert fit.changed_knobs(variants.resolve("polish"), result.rules) == ["defender_lock.from"]
