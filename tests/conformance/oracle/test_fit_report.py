"""fit's smaller items (issue 48): "# changed" names only knobs the fitted rules leave at
another value than the profile's; progress shows in a log too; and a residual cause is called
a rule the schema has no knob for only once pairs of its switches were tried."""

from __future__ import annotations

from pathlib import Path

import pytest

import variants
from spec.vocabulary import ResidualVerdict
from conformance.harness.runner import REFERENCE_COMMAND
from conformance.oracle import fit, residual
from conformance.oracle.policy import Policy
from conformance.terminal import terminal_progress

MUST_BEAT = "polish/play/must-beat-the-card-led"
NO_BEAT = """\
profile: no-beat
title: Polish without the duty to beat
status: draft
summary: Polish where a player following suit need not beat the card winning the trick.
extends: polish
sources: {}
rules:
  play:
    must_beat: {value: false, ruling: "The test table has no duty to beat."}
"""


def test_changed_names_only_knobs_left_at_another_value_than_the_profiles() -> None:
    profile = variants.resolve("polish")
    rules = variants.thaw(profile.rules)
    bid = rules["auction"]["opening_bid"]
    ceiling = rules["auction"]["ceiling"]
    rules["auction"]["opening_bid"] = bid + 10
    # the second change of the record puts a knob back where the profile has it
    record = fit.Accepted((fit.Change("auction.opening_bid", bid + 10), fit.Change("auction.ceiling", ceiling)), 1, 1,
                          "a case, deal 1 step 1 (legal)", 3)
    back = fit.Accepted((fit.Change("auction.ceiling", ceiling),), 1, 1, "another case", 2)
    result = fit.FitResult("polish", rules, [record, back], {}, 1)
    lines = [line for line in fit.report(result, "", ()).splitlines() if line.startswith("# changed")]
    assert lines == [f"# changed auction.opening_bid: {bid + 10}: reproduces 3 more observation(s) (1 whole case(s)), "
                     "e.g. a case, deal 1 step 1 (legal)"]


def test_progress_goes_to_a_log_as_plain_lines_at_most_every_so_often(capsys: pytest.CaptureFixture[str]) -> None:
    show = terminal_progress("fit", 3600.0)  # stderr is captured: no terminal
    show("observing the implementation: 1/9 cases")  # within the first hour: not written
    assert capsys.readouterr().err == "", "a short run (an error in one line) stays as it was"
    every = terminal_progress("fit", 0.0)
    every("observing the implementation: 1/9 cases")
    every("searching \x1b[2Jauction.max_bid")
    assert capsys.readouterr().err == ("fit: observing the implementation: 1/9 cases\n"
                                       "fit: searching \\x1b[2Jauction.max_bid\n"), "plain text, no control character"
    quiet = terminal_progress("verify")
    quiet("anything")
    assert capsys.readouterr().err == "", "the other commands stay silent in a log"


def test_a_cause_a_switch_reproduces_is_not_called_no_knob(tmp_path: Path) -> None:
    """The engine plays polish without the duty to beat. Weighed under polish's own rules (no
    search run), its case differs, and the residual alone would call that a rule with no knob;
    fit's search of the cause's switches (alone, then in pairs) finds must_beat switched off,
    and the cause is said to be reproduced by knob values fit did not adopt."""
    house = tmp_path / "no-beat.yaml"
    house.write_text(NO_BEAT, encoding="utf-8")
    variants.resolve(str(house))
    cases = fit.cases_for({"polish"}, [], [MUST_BEAT])
    assert [c.id for c in cases] == [MUST_BEAT]
    fitter = fit.Fitter("polish", cases, [*REFERENCE_COMMAND, "--rules", str(house)])
    try:
        result = _under_the_profile(fitter)
        assert result.residual
        plain = residual.causes(result.weighed, fitter.impl_records, result.exercised, "polish", {}, fitter.by_id)
        assert plain and plain[0].verdict == ResidualVerdict.NO_KNOB
        found = fitter.causes(result)
    finally:
        fitter.close()
    assert found[0].verdict == ResidualVerdict.PAIRED
    assert found[0].why.startswith('play.must_beat: false reproduces')
    assert 0 < fitter.pairs_tried <= fitter.policy.pair_budget


MARRIAGE_CASE = "polish/marriages/declare-on-second-trick"
ODD_TABLE = """\
profile: odd-table
title: Polish with a marriage table no profile uses
status: draft
summary: Polish whose marriages are worth 35, 90, 110 and 75 (spades, clubs, diamonds, hearts).
extends: polish
sources: {}
rules:
  marriages:
    values: {value: {S: 35, C: 90, D: 110, H: 75}, ruling: "The test table's own worths."}
"""


@pytest.mark.parametrize("pair_causes", [Policy().pair_causes, 0])  # 0: past the budget of causes searched in pairs
def test_a_cause_a_table_decides_is_not_called_a_rule_with_no_knob(tmp_path: Path, pair_causes: int) -> None:
    """The engine plays polish with a marriage table of its own. Weighed under polish's rules
    (no search run), the declaration's points differ; no switch reproduces that, and fit tried
    only a few tables of the thousands the schema allows, so the cause cannot be called a rule
    the schema has no knob for: the verdict says values fit did not try may explain it and
    names marriages.values."""
    house = tmp_path / "odd-table.yaml"
    house.write_text(ODD_TABLE, encoding="utf-8")
    variants.resolve(str(house))
    cases = fit.cases_for({"polish"}, [], [MARRIAGE_CASE])
    fitter = fit.Fitter("polish", cases, [*REFERENCE_COMMAND, "--rules", str(house)], policy=Policy(pair_causes=pair_causes))
    try:
        found = fitter.causes(_under_the_profile(fitter))
    finally:
        fitter.close()
    assert found and all(cause.verdict == ResidualVerdict.UNTRIED for cause in found)
    assert all("marriages.values" in cause.why for cause in found)
    assert ResidualVerdict.NO_KNOB not in "\n".join(residual.describe(found))


def _under_the_profile(fitter: fit.Fitter) -> fit.FitResult:
    """The fitter's one case weighed under its profile's own rules, as a result with no search run."""
    fitter.observe_implementation()
    rules = variants.thaw(fitter.profile.rules)
    (case,) = fitter.cases
    weighed = fitter.weigh(rules, [case.id])
    return fit.FitResult("polish", rules, [], {c: e.differing for c, e in weighed.items() if e.differs}, 1,
                         exercised={case.id: case.knobs}, weighed=weighed)
