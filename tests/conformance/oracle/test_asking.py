"""fit asks the implementation where the corpus cannot tell values apart (conformance.oracle.asking)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.cli import main
from conformance.harness.findings import Finding, Known, Observed, RootCause
from conformance.harness.runner import REFERENCE_COMMAND
from conformance.oracle.asking import decide, grid
from conformance.oracle.policy import Policy
from tests.support.paths import FIXTURES

TALON_FROM_110 = FIXTURES / "house" / "talon-from-110.yaml"
# an engine's other difference in the same cases (the marriage values of diamonds and hearts
# swapped): it shows in most defender_lock cases of polish, as the engines' other differences did
OTHER_DIFFERENCE = "marriage-values-hearts-diamonds-swapped"
LOCK_FROM_805 = FIXTURES / "house" / "lock-from-805.yaml"


def _keys(*steps: tuple[int, str]) -> frozenset[tuple[int, int, str]]:
    """Missed observations of deal 0, each (step, what)."""
    return frozenset((0, step, what) for step, what in steps)


def test_the_rules_playing_the_first_telling_observation_are_kept() -> None:
    # the other rules miss the legal set at step 4, the rules kept play it: the kept ones
    assert decide(_keys(), _keys((4, "legal"), (9, "reply"))) == "fitted"
    assert decide(_keys((4, "legal")), _keys()) == "other"
    # more misses later do not outweigh the first telling step (what follows it is downstream)
    assert decide(_keys((6, "state.scores"), (7, "reply"), (8, "reply")), _keys((4, "legal"))) == "fitted"
    assert decide(_keys((2, "reply")), _keys((2, "reply"))) == "untold"  # nothing tells them apart


def test_an_answer_the_implementation_s_other_difference_may_have_made_decides_nothing() -> None:
    # an observation neither rule set plays at the telling step (a bonus the engine adds to the
    # last trick, beside the barrel's minimum contract asked about) or before it: untold
    bug = (29, "reply")
    assert decide(_keys(bug, (29, "state.scores"), (29, "state.barrel")), _keys(bug)) == "untold"
    assert decide(_keys((3, "reply"), (5, "legal")), _keys((3, "reply"))) == "untold"
    # the same difference past the telling step leaves the answer standing
    assert decide(_keys((5, "legal"), (9, "reply")), _keys((9, "reply"))) == "other"
    # a self-contradiction at that step (card points past the deck's 120), set aside by both
    assert decide(_keys((29, "reply")), _keys(), _keys((29, "state.card_points"))) == "untold"
    assert decide(_keys((29, "reply")), _keys(), _keys((30, "state.card_points"))) == "other"
    # a telling step that goes both ways (each rule set plays one of its observations): untold
    assert decide(_keys((5, "legal")), _keys((5, "state.scores"))) == "untold"


def test_a_number_s_grid_lies_around_the_fitted_value_nearest_first() -> None:
    # fit listed 105 beside its 120: the true threshold may lie between them, or on either side
    # where no case reaches it; the lower of two as near first, the listed values left out
    assert grid(120, [105], Policy(grid=6)) == [115, 125, 110, 130, 135, 100]
    assert grid(3, [5], domain=(1, 120)) == [2, 4, 1, 6, 7, 8, 9, 10, 11, 12, 13, 14]
    assert grid(3, [5], Policy(grid=3), domain=(3, 4)) == [4]  # within the schema's bounds
    assert grid(120, [105, None]) == []  # not numbers alone: no grid
    assert grid(100, [40], Policy(grid=3)) == [95, 105, 90]


def fitted_threshold(tmp_path: Path, *options: str) -> object:
    out = tmp_path / "fitted.yaml"
    code = main(["fit", "--profile", "classic", "-k", "classic/talon/*", "--output", str(out), *options, "--",
                 *REFERENCE_COMMAND, "--rules", str(TALON_FROM_110)])
    assert code == 0
    return yaml.safe_load(out.read_text(encoding="utf-8"))["rules"]["talon"]["shown_from_bid"]


@pytest.mark.slow
def test_a_threshold_the_corpus_cannot_pin_is_asked_and_found(tmp_path: Path) -> None:
    """No talon case of classic has a winning bid from 105 to 115: the corpus alone leaves 105,
    110 and 120 equally consistent, and fit keeps 120. Asking plays questions at those bids."""
    without = fitted_threshold(tmp_path, "--no-ask")
    assert without["value"] != 110  # what asking has to fix (fit keeps 120 here)
    questions = tmp_path / "questions"
    asked = fitted_threshold(tmp_path, "--save-questions", str(questions))
    assert asked["value"] == 110
    deciding = asked["ruling"].split("asked by ")[1].split(" ")[0]
    assert (questions / f"{deciding}.yaml").is_file()  # the ruling names a question the author can read
    # the saved question replays: the implementation passes it under the rules fit kept
    assert main(["verify", "--cases", str(questions), "--rules", str(TALON_FROM_110), "-k", deciding, "--",
                 *REFERENCE_COMMAND, "--rules", str(TALON_FROM_110)]) == 0


def fitted_polish(tmp_path: Path, house: str) -> dict[str, dict[str, object]]:
    out = tmp_path / "fitted.yaml"
    code = main(["fit", "--profile", "polish", "-k", "polish/defender_lock/*", "-k", "polish/match_end/*",
                 "-k", "polish/marriages/*", "--output", str(out), "--",
                 sys.executable, "-m", "mutants.serve", "--rules", str(FIXTURES / "house" / house), OTHER_DIFFERENCE])
    assert code == 0
    return yaml.safe_load(out.read_text(encoding="utf-8"))["rules"]


@pytest.mark.slow
def test_a_lock_from_900_is_fitted_and_asked_beside_another_difference(tmp_path: Path) -> None:
    """Issue 50, row 2 (a Rust engine fitted with no lock): 900, confirmed by questions
    against the values between 880 and 895, although the marriage values differ in the same cases."""
    rules = fitted_polish(tmp_path, "lock-900.yaml")
    assert rules["marriages"]["values"]["value"] == {"S": 40, "C": 60, "D": 100, "H": 80}
    lock = rules["defender_lock"]["from"]
    assert lock["value"] == 900 and "asked by polish/fuzz-ask-defender-lock-from" in lock["ruling"]
    assert "enabled" not in rules["defender_lock"]


@pytest.mark.slow
def test_defenders_who_may_win_without_the_lock_are_fitted_beside_another_difference(tmp_path: Path) -> None:
    """Issue 50, row 3 (TypeScript and Rust engines fitted with defenders_can_win: false)."""
    rules = fitted_polish(tmp_path, "defenders-win.yaml")
    assert rules["defender_lock"]["enabled"]["value"] is False
    assert rules["match_end"]["defenders_can_win"]["value"] is True


@pytest.mark.slow
def test_no_limit_on_the_barrel_s_attempts_is_fitted_and_asked_beside_another_difference(tmp_path: Path) -> None:
    """Issue 50, row 4 (a TypeScript engine fitted with attempts counted as declarer, where it
    counts none): no limit (null) is a value of the attempt count's domain, so the search finds
    it, and questions against other counts (4, 5) confirm it; how attempts are counted stays
    classic's, although the marriage values differ in the same cases."""
    out = tmp_path / "fitted.yaml"
    assert main(["fit", "--profile", "classic", "-k", "classic/barrel/*", "--output", str(out), "--",
                 sys.executable, "-m", "mutants.serve", "--rules", str(FIXTURES / "house" / "no-attempt-limit.yaml"),
                 OTHER_DIFFERENCE]) == 0
    barrel = yaml.safe_load(out.read_text(encoding="utf-8"))["rules"]["barrel"]
    assert barrel["attempts"]["value"] is None
    assert "asked by classic/fuzz-ask-barrel-attempts" in barrel["attempts"]["ruling"]
    assert "attempt_counts" not in barrel  # classic's every deal, not the as_declarer once fitted


@pytest.mark.slow
def test_a_line_below_every_value_fit_listed_is_asked_and_found(tmp_path: Path) -> None:
    """Under a lock from 805 the defender_lock cases of polish leave 805 to 830 equally
    consistent: fit keeps 820 and lists 810 and 830. The grid once spanned only the values
    listed (815, 825), so 805 was never asked; around the fitted value it is."""
    out = tmp_path / "fitted.yaml"
    assert main(["fit", "--profile", "polish", "-k", "polish/defender_lock/*", "--output", str(out), "--",
                 *REFERENCE_COMMAND, "--rules", str(LOCK_FROM_805)]) == 0
    lock = yaml.safe_load(out.read_text(encoding="utf-8"))["rules"]["defender_lock"]["from"]
    assert lock["value"] == 805
    assert "asked by" in lock["ruling"]


@pytest.mark.slow
def test_knobs_no_observation_pins_are_asked(tmp_path: Path) -> None:
    """Issues 48 and 50 on the npm engine 1k: its redeal under 18 points ends most
    defender_lock cases of polish before a defender's score is capped, so nothing the engine
    shows pins the cap of 990; with no cap a defender can reach the target, where
    defenders_can_win, inert under polish, starts to apply. Both are asked, and both found."""
    out = tmp_path / "fitted.yaml"
    assert main(["fit", "--profile", "polish", "-k", "polish/defender_lock/*", "--output", str(out), "--",
                 *REFERENCE_COMMAND, "--rules", str(FIXTURES / "house" / "defender-uncapped-behind-redeals.yaml")]) == 0
    rules = yaml.safe_load(out.read_text(encoding="utf-8"))["rules"]
    assert rules["defender_lock"]["defender_max"]["value"] is None
    assert "asked by polish/fuzz-ask-defender-lock-defender-max" in rules["defender_lock"]["defender_max"]["ruling"]
    assert rules["match_end"]["defenders_can_win"]["value"] is True


@pytest.mark.slow
def test_where_the_references_meet_no_question_the_implementation_s_own_play_is_searched(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 48 on the npm engine 1k: a defender under the lock who scores past the cap of 990
    shows about once in a hundred deals under its fitted rules, and the two references, played
    against each other for 200 deals a question, met none; fuzz then found it in the engine's own
    play as a finding that no cap and defenders who may win explain. Here the references get
    one deal (none parts them), so only the implementation's own play can tell: both values
    are found, and their ruling names the hunt's transcript."""
    from conformance.oracle import fit

    monkeypatch.setattr(fit, "POLICY", Policy(deals=1, questions=1, hunt_deals=300))
    out = tmp_path / "fitted.yaml"
    assert main(["fit", "--profile", "polish", "-k", "polish/defender_lock/*", "--output", str(out), "--",
                 *REFERENCE_COMMAND, "--rules", str(FIXTURES / "house" / "defender-uncapped-behind-redeals.yaml")]) == 0
    rules = yaml.safe_load(out.read_text(encoding="utf-8"))["rules"]
    assert rules["defender_lock"]["defender_max"]["value"] is None
    assert rules["match_end"]["defenders_can_win"]["value"] is True
    for knob in (rules["defender_lock"]["defender_max"], rules["match_end"]["defenders_can_win"]):
        assert "asked by polish/fuzz-hunt-" in knob["ruling"], knob["ruling"]


@pytest.mark.slow
def test_a_knob_no_question_reached_is_decided_by_the_implementation_s_own_play(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The npm engine 1k on classic: its redeal under 18 points ends classic's case of a void
    player who must trump before the play, so nothing the engine showed there pins the duty to
    trump, and asking's questions went to other knobs. The engine's own deals, hunted once a
    question stayed untold, show a void player free to play any card: that finding is the
    answer, though no question was about that knob. Here the references get one deal (the
    talon's line stays untold) and no knob is asked as unpinned."""
    from conformance.oracle import fit

    monkeypatch.setattr(fit, "POLICY", Policy(deals=1, questions=1, unpinned_knobs=0, hunt_deals=300))
    out = tmp_path / "fitted.yaml"
    assert main(["fit", "--profile", "classic", "-k", "classic/play/must-trump-when-void", "-k", "classic/talon/*",
                 "--output", str(out),
                 "--", *REFERENCE_COMMAND, "--rules", str(FIXTURES / "house" / "void-free-behind-redeals.yaml")]) == 0
    play = yaml.safe_load(out.read_text(encoding="utf-8"))["rules"]["play"]
    assert play["must_trump"]["value"] is False
    assert "asked by classic/fuzz-hunt-" in play["must_trump"]["ruling"]



EXACT_1095 = FIXTURES / "house" / "exact-target-1095.yaml"


def fit_exact_1095(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any], str]:
    out = tmp_path / "fitted.yaml"
    code = main(["fit", "--profile", "classic", "-k", "classic/match_end/*", "--output", str(out), "--",
                 *REFERENCE_COMMAND, "--rules", str(EXACT_1095)])
    return code, yaml.safe_load(out.read_text(encoding="utf-8"))["rules"]["match_end"], capsys.readouterr().out


@pytest.mark.slow
def test_answers_the_kept_rules_do_not_play_are_searched_again_with_the_corpus(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A match won at exactly 1095: no match_end case of classic reaches a score near it, and
    the search keeps a target line of 1120 there. Questions about the line get answers neither
    value plays (a score of 1125 does not win, nor does one of 1100); the search, run again
    with those answers among its cases, reads 1095 off them and finds that only exactly it wins."""
    code, match_end, out = fit_exact_1095(tmp_path, capsys)
    assert match_end["target"]["value"] == 1095
    assert match_end.get("over_target", {}).get("value") == "exact_only"
    assert "searched again with the implementation's answers" in out
    assert code == 0


@pytest.mark.slow
def test_answers_the_fitted_rules_do_not_play_fail_the_fit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """With one search only, the answers about the line stay unplayed: fit names them and exits
    1, as for a residual, although the corpus alone shows no difference."""
    from conformance.oracle import fit

    monkeypatch.setattr(fit, "POLICY", Policy(rounds=1))
    code, match_end, out = fit_exact_1095(tmp_path, capsys)
    assert match_end["target"]["value"] != 1095
    assert "# not played by these rules: the implementation's answer to classic/fuzz-ask-match-end-target" in out
    assert "# residual: none on the corpus, but these rules do not play" in out
    assert code == 1


class _Missed:
    def __init__(self, missed: set[tuple[int, int]]) -> None:
        self.missed = frozenset(missed)
        self.set_aside: frozenset[tuple[int, int]] = frozenset()


class _StubFitter:
    """A fitter whose implementation's answers are a table: (rules' target, case) -> observations missed."""

    def __init__(self, table: dict[tuple[int, str], set[tuple[int, int]]]) -> None:
        self.table = table
        self.policy = Policy(questions=1)
        self.profile_name, self.document = "classic", {"profile": "classic"}
        self.added: list[str] = []

    def weigh(self, rules: dict[str, Any], case_ids: list[str]) -> dict[str, _Missed]:
        return {c: _Missed(self.table.get((rules["match_end"]["target"], c), set())) for c in case_ids}

    def add_cases(self, cases: list[Any]) -> None:
        self.added += [case.id for case in cases]


def test_a_question_an_earlier_answer_refutes_is_reported_and_decides_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rules kept: a target of 1120. An earlier answer (q1) is played by 1120 and missed by
    1130 in 2 observations; the new question (q2) is missed by 1120 in 3 and played by 1130.
    On q2 alone 1130 wins (3 against 0), but q1 refutes it: the answer is untold, it names q1,
    and both questions stay evidence."""
    from types import SimpleNamespace

    from conformance.oracle import asking

    monkeypatch.setattr(asking, "question", lambda *args: tmp_path / "q2.yaml")
    monkeypatch.setattr(asking, "loaded", lambda path, folder: SimpleNamespace(id="q2"))
    fitter = _StubFitter({(1130, "q1"): {(1, 1), (1, 2)}, (1120, "q2"): {(1, 1), (1, 2), (1, 3)}})
    kept, other = {"match_end": {"target": 1120}}, {"match_end": {"target": 1130}}
    answered = ["q1"]
    found = asking._asked(fitter, kept, other, "match_end.target", "match_end.target: 1120",  # type: ignore[arg-type]
                          "match_end.target: 1130", lambda rules: "", tmp_path, answered)
    assert (found.answer, found.contradicts, found.missed) == ("untold", "q1", (3, 0))
    assert "q1 answered against it" in found.text()
    assert answered == ["q1", "q2"]
    # without the earlier answer the same question decides for 1130
    fresh = asking._asked(fitter, kept, other, "match_end.target", "match_end.target: 1120",  # type: ignore[arg-type]
                          "match_end.target: 1130", lambda rules: "", tmp_path, [])
    assert (fresh.answer, fresh.contradicts) == ("other", None)


class _Differing:
    def __init__(self, found: tuple[Finding, ...]) -> None:
        self.differing = found


def test_an_answer_that_first_differs_as_a_residual_cause_is_that_cause() -> None:
    """An engine that adds a bonus to the last trick shows it in the corpus (the residual's
    cause ``state.scores``) and in every answer: an answer whose first difference has that
    signature is the same finding, and no reason to search again; one that first differs in
    a legal set is news."""
    from conformance.oracle import asking

    scores = Finding(Observed.STATE, "play", "scores")
    legal = Finding(Observed.LEGAL, "auction", "missing bid 105")
    answers = {"bonus-again": (scores, legal), "news": (legal, scores), "played": ()}

    class Stub:
        def weigh(self, rules: Any, case_ids: list[str]) -> dict[str, _Differing]:
            return {c: _Differing(answers[c]) for c in case_ids}

    known = Known((RootCause("state.scores", signatures=frozenset({"state.scores"})),), "fit's residual")
    assert asking.known_first(Stub(), {}, known, list(answers)) == {"bonus-again": "state.scores"}  # type: ignore[arg-type]
    assert asking.known_first(Stub(), {}, Known(), list(answers)) == {}  # type: ignore[arg-type]


def test_an_untold_answer_says_why() -> None:
    """Both rule sets play all the implementation showed on a question they part on: it did not
    show the steps that part them (a give-up it does not support), and no other difference of
    its comes first; where both miss something, its other differences do."""
    from conformance.oracle.asking import Asked

    unshown = Asked("giving_up.allowed", "giving_up.allowed: true", "giving_up.allowed: false", "q", "untold", (0, 0))
    assert "nothing the implementation showed there tells them apart" in unshown.text() and "other differences" not in unshown.text()
    other = Asked("barrel.attempts", "barrel.attempts: 3", "barrel.attempts: null", "q", "untold", (4, 4))
    assert "other differences come there or before (4 observation(s) missed" in other.text()


def test_a_pair_the_implementation_shows_nothing_of_is_asked_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both targets play all the implementation showed on the question (the deal parts them at
    a step it does not show): another deal would part them at the same kind of step, so the
    pair is not asked again; one that misses something on both is asked up to the budget."""
    from types import SimpleNamespace

    from conformance.oracle import asking

    asked: list[str] = []

    def question(*args: Any) -> Path:
        asked.append(args[4])
        return tmp_path / "q.yaml"

    monkeypatch.setattr(asking, "question", question)
    monkeypatch.setattr(asking, "loaded", lambda path, folder: SimpleNamespace(id=f"q{len(asked)}"))
    kept, other = {"match_end": {"target": 1120}}, {"match_end": {"target": 1130}}
    fitter = _StubFitter({})
    fitter.policy = Policy(questions=3)
    found = asking._asked(fitter, kept, other, "match_end.target", "match_end.target: 1120",  # type: ignore[arg-type]
                          "match_end.target: 1130", lambda rules: "", tmp_path, [])
    assert (found.answer, len(asked)) == ("untold", 1)
    both = {(t, f"q{n}"): {(1, 1)} for t in (1120, 1130) for n in (1, 2, 3)}  # the same miss under both
    fitter, asked[:] = _StubFitter(both), []
    fitter.policy = Policy(questions=3)
    found = asking._asked(fitter, kept, other, "match_end.target", "match_end.target: 1120",  # type: ignore[arg-type]
                          "match_end.target: 1130", lambda rules: "", tmp_path, [])
    assert (found.answer, len(asked)) == ("untold", 3)
