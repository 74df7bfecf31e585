"""One record of a wrong answer and one identity across verify, fit and fuzz (issue 48): fuzz
signs a divergence by its first finding, ``--known`` explains exactly a known cause's
signatures (never by knobs in common), every reported finding is proven by replaying its
transcript as the printed command does, and ``--deals N`` plays N deals."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pytest
import yaml

import variants
from conformance.cli import main
from conformance.harness import findings
from conformance.harness.findings import Observed
from conformance.harness.runner import REFERENCE_COMMAND
from conformance.oracle import fuzz, observe
from tests.fake_impls.own_rules import TABLE_300
from tests.support.paths import FAKE_IMPLS, ROOT

pytestmark = pytest.mark.slow  # every test runs fuzz against doubles and replays its transcripts

SERVE = [sys.executable, "-m", "mutants.serve"]
# the engine's own rule, no knob expresses it (the known cause), and its bug
KNOWN, BUG = "last-trick-bonus", "marriage-values-hearts-diamonds-swapped"
CLASSIC = variants.resolve("classic").to_document()


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rules") / "table.yaml"
    path.write_text(TABLE_300.format(name="table"), encoding="utf-8")
    return path


def engine(table: Path, *mistakes: str) -> list[str]:
    return [*SERVE, "--rules", str(table), *mistakes]


def test_a_deal_end_divergence_is_signed_by_the_event_before_the_fields_derived_from_it() -> None:
    """A seat's last barrel attempt fails and the engine keeps it on: the missing barrel_left
    comes in the reply, before the state fields the same deal end writes (the next dealer, the
    barrel). The divergence is signed by the event, as verify signs the saved transcript; the
    field decided by the fewest knobs (state.next_dealer) used to sign it."""
    left = {"type": "barrel_left", "player": 1, "reason": "attempts_exhausted", "penalty": 120}
    event = observe.observed("fuzz", 1, 24, "play 9S", Observed.EVENT, "play", "missing barrel_left(attempts_exhausted)",
                             {"events": [left]}, {"events": []})
    dealer = observe.observed("fuzz", 1, 24, "play 9S", Observed.STATE, "play", "state.next_dealer", 2, None)
    barrel = observe.observed("fuzz", 1, 24, "play 9S", Observed.STATE, "play", "state.barrel.on", [], [])
    divergence = fuzz.Counterexample(fuzz.Scenario({}, ()), (event, barrel, dealer))
    assert divergence.finding.signature == "event[play] missing barrel_left(attempts_exhausted)"
    assert divergence.finding.kind is findings.Observed.EVENT


def test_a_reply_is_signed_by_its_actions_phase_in_fit_and_fuzz_as_in_verify() -> None:
    """A redeal claim refused after the deal is over: verify signs it by the action's phase
    (``claim``), and so does an observation (it signed it by the state's, ``deal_over``)."""
    refused = observe.observed("c", 1, 9, "redeal", Observed.REFUSAL, "deal_over", "illegal/wrong_phase vs accepted",
                               {"refused": ["illegal", "wrong_phase"]}, {"events": []})
    assert observe.named(refused).signature == "refusal[claim]: expected wrong_phase, accepted"


def test_a_signature_read_back_from_a_report_is_the_finding_that_was_written() -> None:
    for signed in ("legal[play]: unexpected cards that trump", "event[play] missing bolt", "state.scores",
                   "to_act[auction]", "refused[claim]: the transcript's redeal (wrong_phase)", "timeout: no reply"):
        assert findings.signature(*findings.parsed(signed)) == signed


def test_the_known_rule_is_passed_over_and_the_bug_sharing_its_knobs_is_found_and_proven(
        table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The engine plays a last-trick bonus no knob expresses (its own rule, known from a verify
    report of the engine without its bug) and values the marriages of hearts and diamonds the
    other way round (its bug). The known cause, ``event[play] deal_scored differs ...``, names
    ``marriages.values`` among its knobs, and the bug's ``marriage_declared`` differs in points:
    the same kind, its first knob among the cause's. Matched by knob overlap, the bug was
    passed over as known and fuzz said 0 findings; matched by identity it is found, and the
    transcript saved for it fails under the command fuzz prints and passes against the reference."""
    report = tmp_path / "known.json"
    assert main(["verify", "--rules", str(table), "-k", "classic/scoring/*", "--report", str(report), "--",
                 *engine(table, KNOWN)]) == 1
    known = findings.Known.read(report)
    capsys.readouterr()
    found = tmp_path / "found"
    code = main(["fuzz", "--rules", str(table), "--known", str(report), "--deals", "40", "--seed", "1",
                 "--save", str(found), "--report", str(tmp_path / "fuzz.json"), "--", *engine(table, KNOWN, BUG)])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "event[play] marriage_declared differs in points" in out
    assert re.search(r"known root causes \(.*\): [1-9][0-9]* trials? ended on one", out), out
    headlines = [line.split(". ", 1)[1].split(": ", 1)[0] for line in out.splitlines() if re.match(r"  [0-9]+\. ", line)]
    assert headlines and all(known.cause_of(signed) is None for signed in headlines), headlines
    assert "not reproducible" not in out
    # the printed command replays the saved findings: they fail against the engine, pass against its rules
    printed = next(line for line in out.splitlines() if line.startswith("next: replay the findings: thousand "))
    argv = shlex.split(printed.split("thousand ", 1)[1])
    assert main(argv) == 1
    rules_only = [*REFERENCE_COMMAND, "--rules", str(table)]
    assert main([*argv[:argv.index("--")], "--", *rules_only]) == 0
    # fuzz's report is a --known like the others': the same run passes over every cause it found
    capsys.readouterr()
    again = main(["fuzz", "--rules", str(table), "--known", str(tmp_path / "fuzz.json"), "--deals", "40", "--seed", "1",
                  "--", *engine(table, BUG)])
    assert again == 0, capsys.readouterr().out


def test_a_finding_a_knob_value_plays_is_named_a_rule_and_a_bug_no_value_plays_is_not(
        table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two engines that add 10 points for the last trick, against rules with no such bonus: the
    reference under ``play.last_trick_bonus: 10`` (a rule the rules given do not hold: the 1k
    engine's uncapped defender was such a finding, and read as a bug) and the mutant that adds
    them with no ``bonus`` event (no knob writes that). Both findings are proven as ever; only
    the first is named a rule, with the value that plays it. The mutant's marriage values of
    hearts and diamonds swapped are not a rule either: a table valuing both at 80 plays its
    deal, but breaks the diamonds of the cases of marriage values, which the rules given play."""
    bonus = tmp_path / "bonus.yaml"
    bonus.write_text(TABLE_300.format(name="bonus") + "  play:\n    last_trick_bonus: {value: 10, ruling: 'The double "
                     "adds 10 points to the winner of the last trick.'}\n", encoding="utf-8")
    runs = {}
    for name, command in (("rule", [*REFERENCE_COMMAND, "--rules", str(bonus)]), ("bug", engine(table, KNOWN, BUG))):
        code = main(["fuzz", "--rules", str(table), "--deals", "40", "--seed", "1", "--max-findings", "2",
                     "--save", str(tmp_path / name), "--", *command])
        runs[name] = capsys.readouterr().out
        assert code == 1, runs[name]
    entries = {name: re.split(r"\n  [0-9]+\. ", out)[1:] for name, out in runs.items()}
    assert entries["rule"] and all("A rule, not a bug: with play.last_trick_bonus: 10 the reference plays it as the implementation did"
                                   in entry for entry in entries["rule"]), runs["rule"]
    saved = [yaml.safe_load(path.read_text(encoding="utf-8"))["description"] for path in (tmp_path / "rule").rglob("*.yaml")]
    assert saved and all("A rule, not a bug: with play.last_trick_bonus: 10" in said for said in saved), saved
    assert len(entries["bug"]) == 2 and all("A rule, not a bug" not in entry and "No knob value tried" in entry
                                            for entry in entries["bug"]), runs["bug"]


def test_a_search_for_other_values_that_breaks_leaves_the_proven_finding_and_says_so(
        table: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The explanation is extra: when its search breaks, the finding is still reported, proven,
    and the line says the search stopped and why; it never reads as "none plays it"."""
    from conformance.oracle.fit import Fitter

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("the reference pool is gone")

    monkeypatch.setattr(Fitter, "explaining", broken)
    code = main(["fuzz", "--rules", str(table), "--deals", "10", "--seed", "1", "--", *engine(table, BUG)])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "stopped before its end (it failed: RuntimeError: the reference pool is gone)" in out, out
    assert "No knob value tried" not in out and "not reproducible" not in out


def test_a_finding_whose_transcript_does_not_reproduce_is_told_apart_and_never_saved(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An engine that goes wrong from its second match on: fuzz sees it diverge on its
    long-lived process, the saved transcript replayed by a fresh one passes. It is listed as
    not reproducible, with its trial and seed, counted apart, and no file is saved."""
    found = tmp_path / "found"
    code = main(["fuzz", "--profile", "classic", "--deals", "6", "--seed", "1", "--save", str(found), "--",
                 sys.executable, str(FAKE_IMPLS / "second_match.py")])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "no reproducible finding in 6 deals" in out
    assert "1 not reproducible" in out and "state.scores" in out and "(seed 1)" in out
    assert "does not fail against the implementation" in out
    assert not list(found.rglob("*.yaml")) and "next: replay" not in out


@pytest.mark.parametrize(("seed", "jobs"), [("2", 1), ("3", 2)])
def test_deals_n_plays_exactly_n_deals(seed: str, jobs: int) -> None:
    """Trials play one to three deals: the last ones are held to the deals left (seed 2 played
    9 deals of 7, seed 3 with two pairs 10)."""
    outcome = fuzz.fuzz(list(REFERENCE_COMMAND), "classic", CLASSIC, deals=7, seed=seed, jobs=jobs, max_findings=None)
    assert outcome.error == "" and outcome.deals_played == 7


def test_the_summary_says_why_a_finding_was_not_saved() -> None:
    """A finding the run stopped before shrinking has no transcript: the line says so, not
    "no --save" (which it said whatever the reason)."""
    difference = observe.observed("fuzz", 1, 3, "bid 120", Observed.STATE, "auction", "state.high_bid", 120, 110)
    divergence = fuzz.Counterexample(fuzz.Scenario({}, ()), (difference,))
    cause = fuzz.NewCause(divergence.finding, divergence, 4, 7, unsaved="the run stopped before it was shrunk")
    lines = fuzz.summary(fuzz.Outcome(findings=[cause]), "classic", "1", None)
    assert any("(not saved: the run stopped before it was shrunk)" in line for line in lines), lines
    assert not any("no --save" in line for line in lines)


def test_a_report_of_each_tool_reads_as_known(tmp_path: Path) -> None:
    """fuzz's report has verify's shape: one reader takes it, and its causes are its findings'."""
    difference = observe.observed("fuzz", 1, 3, "bid 120", Observed.STATE, "auction", "state.high_bid", 120, 110)
    divergence = fuzz.Counterexample(fuzz.Scenario({}, ()), (difference,))
    outcome = fuzz.Outcome(findings=[fuzz.NewCause(divergence.finding, divergence, 4, 7)])
    path = tmp_path / "fuzz.json"
    assert fuzz.write_report(path, outcome, "classic", ["engine"], "1") is None
    known = findings.Known.read(path)
    assert known.cause_of("state.high_bid") == "state.high_bid" and known.cause_of("state.scores") is None
    assert json.loads(path.read_text(encoding="utf-8"))["cases"][0]["mismatches"][0]["signature"] == "state.high_bid"


def test_a_report_into_a_missing_folder_is_a_usage_error_before_the_run(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "nowhere" / "fuzz.json"
    assert main(["fuzz", "--profile", "classic", "--deals", "1", "--report", str(report), "--", *REFERENCE_COMMAND]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--report" in err[0] and "does not exist" in err[0]


# --- issue 48 item 2: a skip is unchecked, and the hunt goes on ---------------------------

def _validated_report(path: Path) -> dict[str, object]:
    import jsonschema

    report = json.loads(path.read_text(encoding="utf-8"))
    schema = json.loads((ROOT / "spec" / "schema" / "report.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(report, schema)
    return report


def test_a_skipped_query_is_unchecked_and_the_bug_beside_it_is_found_and_proven(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The double answers every ``legal`` with ``skipped`` and values hearts and diamonds the
    other way round. fuzz stopped at the first legal set with exit 5 ("the implementation
    skipped"); a legal set changes nothing in the game, so it is counted unchecked, the
    reference's decides the play, and the bug is found in the same run. Its transcript asks
    for no legal set (verify would skip the whole case at one) and reproduces as printed."""
    found, report = tmp_path / "found", tmp_path / "fuzz.json"
    code = main(["fuzz", "--profile", "classic", "--deals", "30", "--seed", "1", "--save", str(found),
                 "--report", str(report), "--", *SERVE, "--mode", "skip-legal", BUG])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "1 finding in 30 deals" in out and "event[play] marriage_declared differs in points" in out
    assert re.search(r"unchecked: [1-9][0-9]* observations the implementation answered skipped", out), out
    counts = _validated_report(report)["fuzz"]
    assert isinstance(counts, dict) and counts["unchecked_observations"] > 0 and counts["deals"] == 30
    saved = list(found.rglob("*.yaml"))
    assert len(saved) == 1 and "legal:" not in saved[0].read_text(encoding="utf-8")
    printed = next(line for line in out.splitlines() if line.startswith("next: replay the findings: thousand "))
    argv = shlex.split(printed.split("thousand ", 1)[1])
    assert main(argv) == 1
    assert main([*argv[:argv.index("--")], "--", *REFERENCE_COMMAND]) == 0


def test_a_skipped_action_ends_its_trial_only_and_the_hunt_plays_every_deal_asked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The double plays the reference's rules but answers every ``give_up`` with ``skipped``:
    the trials that reach one end there without a finding, the run plays the 30 deals asked
    (it stopped at the first with exit 5), counts those trials by what was skipped and exits
    0, as verify passes a run some of whose cases were skipped."""
    report = tmp_path / "fuzz.json"
    code = main(["fuzz", "--profile", "classic", "--deals", "30", "--seed", "1", "--report", str(report), "--",
                 *SERVE, "--mode", "skip-give-up"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "no new divergence in 30 deals" in out
    assert re.search(r"unchecked: [1-9][0-9]* of [0-9]+ trials ended on a skip", out), out
    assert "x apply give_up skipped: giving up is not played" in out
    counts = _validated_report(report)["fuzz"]
    assert isinstance(counts, dict) and counts["deals"] == 30 and counts["trials_ended_by_skip"] > 0
    assert counts["skipped_by_reason"] == {"apply give_up skipped: giving up is not played": counts["trials_ended_by_skip"]}


def test_an_action_declared_unsupported_is_unchecked_not_a_divergence(capsys: pytest.CaptureFixture[str]) -> None:
    """The double declares ``give_up`` unsupported, leaves it out of its legal sets and answers
    ``skipped`` when asked to play one (benchmarks/partial_engine.py). Its legal sets are
    compared without it, as verify and fit compare them (each was a "missing give_up"
    divergence, ending its trial), and a trial that takes one ends there: no finding, exit 0."""
    code = main(["fuzz", "--profile", "classic", "--deals", "20", "--seed", "1", "--",
                 sys.executable, str(ROOT / "benchmarks" / "partial_engine.py"), "give_up"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "no new divergence in 20 deals" in out and "missing give_up" not in out
    assert "unchecked: the actions give_up, which the implementation declares unsupported" in out
    assert re.search(r"[1-9][0-9]* x apply give_up skipped: give_up is not supported", out), out
