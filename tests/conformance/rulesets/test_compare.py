"""``thousand compare`` and ``thousand replay``: rule differences and their impact on deals."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Iterator

import pytest

from conformance.rulesets import compare, explain, replay
from conformance.cli import main
from conformance.corpus.transcripts import CASES_DIR, Transcript

WORKED_EXAMPLE = "gambler-club/scoring/worked-example-contract-160-made"
HANDS = [["AD", "10D", "KD", "QD", "JD", "9D", "9C"],
         ["AS", "10S", "QS", "JS", "AC", "QC", "AH"],
         ["10C", "KC", "JC", "KH", "QH", "9H", "JH"]]
TALON = ["10H", "KS", "9S"]


def run(*argv: str) -> tuple[int, str, str]:
    """The exit code, stdout and stderr of ``thousand ARGV``."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def synthetic(steps: list[str], profiles: tuple[str, ...] = ("gambler-club",), refused: dict[int, str] | None = None) -> Transcript:
    """A one-deal transcript on the worked example's cards (dealer 2: seat 0 opens)."""
    marked = [{"action": action, **({"refused": refused[i]} if refused and i in refused else {})}
              for i, action in enumerate(steps, start=1)]
    deal = {"dealer": 2, "hands": HANDS, "talon": TALON, "steps": marked}
    return Transcript(id="test/synthetic", title="synthetic", path=Path("synthetic.yaml"),
                      profiles=profiles, knobs=("play.must_beat",), deals=(deal,))


@pytest.fixture(scope="module")
def replayer() -> Iterator[replay.Replayer]:
    with replay.Replayer() as shared:
        yield shared


@pytest.fixture(scope="module")
def gambler_club_vs_polish() -> str:
    code, out, err = run("compare", "gambler-club", "polish")
    assert code == 0, err
    return out


# --- knob differences ----------------------------------------------------------------------

def test_a_profile_compared_with_itself_has_no_difference() -> None:
    assert compare.knob_differences(["polish", "polish"]) == []
    code, out, _ = run("compare", "classic", "classic", "--no-impact")
    assert code == 0 and "No knob differs" in out


def test_an_option_differs_only_in_its_own_knobs() -> None:
    differences = compare.knob_differences(["classic", "classic+dump"])
    assert [d.knob for d in differences] == ["dump.enabled"]
    assert differences[0].values == {"classic": False, "classic+dump": True}
    assert differences[0].provenance["classic+dump"]["from"] == "classic+dump"
    for option in ("barrel-900", "four-aces"):
        knobs = {d.knob for d in compare.knob_differences(["classic", f"classic+{option}"])}
        assert knobs and all(k.split(".")[0] in {"barrel", "marriages"} for k in knobs)


@pytest.mark.slow
def test_gambler_club_and_polish_rule_differences_with_sources(gambler_club_vs_polish: str) -> None:
    rules = gambler_club_vs_polish.split("IMPACT ON THE TRANSCRIPTS")[0]
    for knob in ("auction.bid_step", "play.must_beat", "play.must_overtrump", "scoring.defender_rounding",
                 "giving_up.moment", "giving_up.defender_gain", "barrel.enabled", "defender_lock.enabled"):
        assert knob in rules, knob
    assert "[giving_up]" in rules and "[barrel]" in rules and "[defender_lock]" in rules
    assert "source: seed-004" in rules and "ruling:" in rules
    assert "play.must_trump" not in rules  # the same in both: not a difference


def test_the_matrix_counts_differing_knobs_per_pair() -> None:
    names = ["gambler-club", "polish", "polish-tournament", "classic+dump"]
    matrix = compare.knob_difference_matrix(names)
    assert all(matrix[name][name] == 0 for name in names)
    assert all(matrix[a][b] == matrix[b][a] for a in names for b in names)
    assert matrix["gambler-club"]["polish"] == len(compare.knob_differences(["gambler-club", "polish"]))
    tournament = {d.knob for d in compare.knob_differences(["polish", "polish-tournament"])}
    assert tournament == {"talon.shown", "defender_lock.mode"}  # seed 004: the talon shown from 130, the 800 cap
    assert matrix["polish"]["polish-tournament"] == 2


# --- impact on the transcripts ----------------------------------------------------------------

@pytest.mark.slow
def test_the_worked_example_scores_differently_under_polish(gambler_club_vs_polish: str) -> None:
    impact = gambler_club_vs_polish.split("IMPACT ON THE TRANSCRIPTS")[1]
    assert f"== {WORKED_EXAMPLE}" in impact
    assert "deal 1 deltas: [160, 25, 15] vs [160, 20, 10]" in impact
    assert "with a different result" in impact


@pytest.mark.slow
def test_a_refused_step_is_reported_as_a_divergence_not_skipped(gambler_club_vs_polish: str) -> None:
    assert "refused: must_beat" in gambler_club_vs_polish.split("IMPACT ON THE TRANSCRIPTS")[1]


@pytest.mark.slow
def test_compare_json_and_markdown() -> None:
    code, out, _ = run("compare", "gambler-club", "polish", "--json", "-k", WORKED_EXAMPLE)
    data = json.loads(out)
    assert code == 0 and data["profiles"] == ["gambler-club", "polish"]
    knobs = {entry["knob"]: entry for entry in data["knob_differences"]}
    assert knobs["auction.bid_step"]["values"]["polish"]["value"] == 10
    case = data["impact"]["cases"][0]
    assert case["id"] == WORKED_EXAMPLE and case["differs"] is True
    assert [r["deals"][0]["deltas"] for r in case["replays"]] == [[160, 25, 15], [160, 20, 10]]
    page = compare.compare_markdown(["gambler-club", "polish"], patterns=[WORKED_EXAMPLE])
    assert page.startswith("# Compare gambler-club vs polish")
    assert "| scoring.defender_rounding |" in page and "**[160, 20, 10]**" in page


@pytest.mark.slow
def test_same_results_are_listed_only_with_all() -> None:
    pattern = "gambler-club/deal/*"
    _, quiet, _ = run("compare", "gambler-club", "repino-2013", "-k", pattern)
    _, everything, _ = run("compare", "gambler-club", "repino-2013", "-k", pattern, "--all")
    assert "== gambler-club/deal/" not in quiet and "0 with a different result" in quiet
    assert "== gambler-club/deal/" in everything and "same result under every profile" in everything


# --- replays ---------------------------------------------------------------------------------

def test_a_play_refused_under_must_beat_diverges_at_that_step(replayer: replay.Replayer) -> None:
    case = synthetic(["bid 100", "pass", "pass", "give KS 9S", "contract 100", "play 9C", "play QC", "play JC"])
    club, polish = (replayer.replay(case, name) for name in ("gambler-club", "polish"))
    assert club.stop is None and club.error is None
    assert polish.stop is not None
    assert (polish.stop.deal, polish.stop.step, polish.stop.action, polish.stop.reason) == (
        1, 8, "play JC", "must_beat")
    assert "deal 1 step 8 `play JC` refused: must_beat" in polish.stop_text()
    assert "replay" in replay.differing_fields([club, polish])
    assert any("play JC" in line for line in replay.legal_differences([club, polish]))


def test_steps_marked_refused_are_skipped(replayer: replay.Replayer) -> None:
    case = synthetic(["bid 100", "bid 101", "pass", "pass"], refused={2: "bid_off_step"})
    result = replayer.replay(case, "polish")
    assert result.stop is None and result.deals[0].declarer == 0 and result.deals[0].contract is None


def test_a_declared_marriage_is_played_plainly_where_declaration_is_automatic(replayer: replay.Replayer) -> None:
    case = synthetic(["bid 100", "pass", "pass", "give KS 9S", "contract 100", "play AD", "play JS", "play 9S",
                      "play QD marriage"])
    result = replayer.replay(case, "skill-games")
    assert result.stop is None
    assert result.deals[0].trumps == ["D@2"]
    assert any("played as `play QD`" in note for note in result.notes)


@pytest.mark.slow
def test_replay_all_explains_the_worked_example() -> None:
    code, text, err = run("replay", WORKED_EXAMPLE, "--profiles", "all")
    assert code == 0, err
    assert max(len(line) for line in text.splitlines()) <= 100  # a 100-column terminal
    assert "classic + 38 options" in text and "classic+pre-talon-cap" in text  # 32 options, the three of the third engine's axes and the three of issue 51, which do not change this deal
    out = " ".join(text.split())  # the lines are wrapped
    assert ("seat 0 (declarer): 84 card points + marriage D 80 = 164 >= contract 160, made; "
            "scores the contract (scoring.declarer_scores: contract): +160") in out
    assert "scores its total 164 (scoring.declarer_scores: total): +164" in out  # classic+actual-total
    assert "23 card points + last-trick bonus 10 = 33, rounded nearest_5 to 35: +35" in out
    assert "23 card points, rounded nearest_5 to 25: +25" in out
    assert "23 card points, rounded nearest_10 to 20: +20" in out
    assert "polish, polish-tournament" in out and "scoring.defender_rounding nearest_5 -> nearest_10" in out
    page = replay.replay_markdown(WORKED_EXAMPLE, ["gambler-club", "polish"])
    assert page.startswith(f"# Replay of {WORKED_EXAMPLE}") and "**[160, 20, 10]**" in page


def test_replay_json_names_the_refusal() -> None:
    code, out, _ = run("replay", "gambler-club/play/no-duty-to-beat", "--profiles", "gambler-club,polish", "--json")
    data = json.loads(out)
    stops = {r["profile"]: r["divergence"] for r in data["replays"]}
    assert code == 0 and stops["gambler-club"] is None
    assert stops["polish"]["reason"] == "must_beat" and stops["polish"]["step"] >= 1


def test_a_transcript_the_replay_cannot_finish_is_marked(replayer: replay.Replayer) -> None:
    case = synthetic(["bid 100", "pass", "pass"])
    result = replayer.replay(case, "gambler-club")
    assert result.deals[0].cells()["outcome"] == "unfinished (exchange)"


# --- bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, wanted", [
    (("compare", "gambler-club", "no-such-profile"), "profile 'no-such-profile'"),
    (("compare", "gambler-club"), "at least two profiles"),
    (("replay", "gambler-club/no/such-case"), "no transcript 'gambler-club/no/such-case'"),
    (("replay", WORKED_EXAMPLE, "--profiles", "classic+no-such-option"), "classic+no-such-option"),
    (("replay", WORKED_EXAMPLE, "--profiles", ","), "expected 'all'"),
])
def test_bad_input_is_one_clear_error(argv: tuple[str, ...], wanted: str) -> None:
    code, out, err = run(*argv)
    assert code == 2 and wanted in err and "Traceback" not in err and out == ""


def test_rounding_follows_the_scoring_knobs() -> None:
    assert [explain.round_total(x, "nearest_5") for x in (22, 23, 26, 11, 14)] == [20, 25, 25, 10, 15]
    assert [explain.round_total(x, "nearest_10") for x in (74, 35, 23, 13)] == [70, 40, 20, 10]
    assert explain.round_total(57.5, "exact") == 57.5


def test_all_means_every_profile_and_option() -> None:
    names = replay.parse_profiles("all")
    assert "classic+dump" in names and "polish-tournament" in names and len(names) == len(set(names))
    assert (CASES_DIR / f"{WORKED_EXAMPLE}.yaml").is_file()


# --- the explanation's arithmetic ------------------------------------------------------------

# The deals the "Same deal, every rulebook" page shows, and a few whose end of deal has
# bolt penalties, the barrel and the dump (the steps after the deal's own arithmetic).
EXPLAINED_DEALS = (
    WORKED_EXAMPLE,
    "gambler-club/bolts/third-bolt-costs-120-and-resets",
    "gambler-club/giving_up/rospis-halves-kept-exactly",
    "gambler-club/barrel/reaching-880-caps-and-enters",
    "polish-tournament/defender_lock/seed-004-780-plus-40-is-800",
    "classic/barrel/third-deal-without-win-drops-to-760",
)


@pytest.mark.slow
@pytest.mark.parametrize("case_id", EXPLAINED_DEALS)
def test_the_explained_sums_are_the_deal_results_under_every_profile_and_option(
        case_id: str, replayer: replay.Replayer) -> None:
    """Total = card points + marriages + aces + bonuses (the events), then rounding, the
    declarer's rule, the defender lock and the end-of-deal steps: the explained total and
    change equal the implementation's ``points`` and ``deltas`` for every seat."""
    case = replay.load_case(case_id)
    scored = 0
    for profile in replay.parse_profiles("all"):
        result = replayer.replay(case, profile)
        for deal in result.deals:
            for entry in explain.seat_sums(deal, replay.resolved(profile)):
                scored += 1
                assert entry.agrees(), f"{profile} deal {deal.number}: {entry.text()}"
                assert "unexplained" not in entry.text()
    assert scored > 0


@pytest.mark.slow
def test_the_explained_sums_hold_for_every_hand_written_transcript(replayer: replay.Replayer) -> None:
    """Every transcript under its own first profile: bolts, barrel, dump, give-ups, locks."""
    checked = 0
    for case in replay.hand_written_cases():
        profile = case.profiles[0]
        for deal in replayer.replay(case, profile).deals:
            for entry in explain.seat_sums(deal, replay.resolved(profile)):
                checked += 1
                assert entry.agrees(), f"{case.id} [{profile}] deal {deal.number}: {entry.text()}"
    assert checked > 500


def test_a_total_that_misses_a_bonus_is_marked_unexplained() -> None:
    """Were the half-marriage bonus left out, the sum would not be the implementation's."""
    record = replay.DealRecord(1, kind="played", made=True, contract=100, declarer=0,
                               points=[100, 0, 20], deltas=[100, 0, 20], scores_before=[0, 0, 0],
                               raw_events=[{"type": "trick_won", "player": 0, "trick": 1, "points": 100},
                                           {"type": "trick_won", "player": 2, "trick": 2, "points": 0}])
    sums = explain.seat_sums(record, replay.resolved("classic"))
    assert sums[0].agrees() and not sums[2].agrees()
    assert "unexplained: the implementation has total 20" in sums[2].text()


# --- a house transcript from a replay ----------------------------------------------------------

def test_save_case_writes_a_house_transcript_that_coverage_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A house file changing the last-trick bonus owes a transcript; --save-case writes one
    (the actions accepted, the scores after the deal, the arithmetic to check) and coverage
    of the house file turns green with it."""
    import yaml

    monkeypatch.chdir(tmp_path)
    assert run("new", "oak-club", "--extends", "gambler-club")[0] == 0
    text = (tmp_path / "oak-club.yaml").read_text(encoding="utf-8")
    (tmp_path / "oak-club.yaml").write_text(text.replace("rules: {}\n", "rules:\n  play:\n    last_trick_bonus: {value: 10, "
                                                         'ruling: "At our table the last trick is worth ten points more."}\n', 1))
    assert run("coverage", "--profile", "./oak-club.yaml")[0] == 1  # the changed value has no case yet
    code, _, err = run("replay", WORKED_EXAMPLE, "--profile", "./oak-club.yaml", "--save-case", "house-cases")
    assert code == 0, err
    saved = tmp_path / "house-cases" / "oak-club" / "worked-example-contract-160-made.yaml"
    data = yaml.safe_load(saved.read_text(encoding="utf-8"))
    assert data["profiles"] == ["oak-club"] and data["knobs"] == ["play.last_trick_bonus"]
    # 23 card points + the last-trick bonus 10 = 33, rounded to 35 (seat 1 won trick 8)
    assert data["deals"][0]["expect"]["scores"] == [160, 35, 15]
    assert "check every expected value" in data["description"] and "last-trick bonus 10 = 33" in data["description"]
    assert run("coverage", "--cases", "house-cases", "--profile", "./oak-club.yaml")[0] == 0
    assert run("replay", WORKED_EXAMPLE, "--profile", "./oak-club.yaml", "--save-case", "house-cases")[0] == 1  # no overwrite
    assert run("replay", WORKED_EXAMPLE, "--profiles", "classic,polish", "--save-case", "x")[0] == 2


def test_the_command_save_case_prints_next_verifies_the_saved_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The printed next step is run as printed and passes: a house file is given by --rules (a
    saved case names the house profile, which --profile cannot resolve)."""
    import shlex

    monkeypatch.chdir(tmp_path)
    assert run("new", "kitchen", "--extends", "classic")[0] == 0
    code, _, err = run("replay", WORKED_EXAMPLE, "--profile", "kitchen.yaml", "--save-case", "house-cases")
    assert code == 0, err
    printed = err.split("; then ", 1)[1].strip()
    assert printed == "thousand verify --cases house-cases --rules kitchen.yaml"
    code, out, _ = run(*shlex.split(printed)[1:])
    assert code == 0 and out.startswith("1 pass"), out


def test_save_case_writes_nothing_when_the_house_rules_refuse_a_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    run("new", "cap-club", "--extends", "gambler-club")
    text = (tmp_path / "cap-club.yaml").read_text(encoding="utf-8")
    (tmp_path / "cap-club.yaml").write_text(text.replace("rules: {}\n", "rules:\n  auction:\n    stop_at: {value: null, "
                                                         'ruling: "We play no stop at 120 at this table."}\n    pre_talon_max: {value: 120, '
                                                         'ruling: "No bid above 120 before the talon."}\n', 1))
    code, _, err = run("replay", WORKED_EXAMPLE, "--profile", "./cap-club.yaml", "--save-case", "house-cases")
    assert code == 1 and "bid_above_pre_talon_max" in err and "write this deal for your rules by hand" in err
    assert not (tmp_path / "house-cases").exists()
