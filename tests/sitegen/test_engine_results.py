"""The recorded results of the npm engine 1k: the check names every change, the page shows them."""

from __future__ import annotations

import json

from sitegen import engine_results


def test_the_check_names_a_changed_outcome_and_a_changed_knob_and_ignores_the_commands() -> None:
    recorded = {"verify": {"command": "thousand verify a", "outcomes": {"x@polish": "fail", "y@polish": "pass"}},
                "fit": {"knobs": {"play.must_beat": False}}}
    now = {"verify": {"command": "thousand verify b", "outcomes": {"x@polish": "pass", "y@polish": "pass"}},
           "fit": {"knobs": {"play.must_beat": False, "auction.max_bid": 300}}}
    found = engine_results.differences(recorded, now)
    assert found == ['fit.knobs.auction.max_bid: new (300)',
                     'verify.outcomes.x@polish: recorded "fail", now "pass"'], found
    assert engine_results.differences(recorded, json.loads(json.dumps(recorded))) == []


def test_the_fitted_profile_reads_as_knob_values() -> None:
    rules = {"play": {"must_beat": {"value": False, "ruling": "thousand fit: ..."}}, "auction": {"max_bid": {"value": 300}}}
    assert engine_results.knob_values(rules) == {"auction.max_bid": 300, "play.must_beat": False}


def test_the_results_page_shows_1k_beside_the_reference_with_its_rules_and_findings_linked() -> None:
    recorded = json.loads(engine_results.EXPECTED.read_text(encoding="utf-8"))
    text = "\n".join(engine_results.page_section())
    counts = recorded["verify"]["counts"]
    assert f"| [1k 0.0.11 (npm)](results/1k-polish.json) | {counts['pass']} | {counts['fail']} |" in text
    assert "| [reference](results/reference-polish.json) | " in text
    for knob in recorded["fit"]["knobs"]:
        assert f"`{knob}: " in text
    for found in recorded["fuzz"]["findings"]:
        assert f"(results/{found['transcript']})" in text
        assert (engine_results.RESULTS_DIR / found["transcript"]).is_file()
    shown = [case_id for cause in engine_results.merged(recorded["fit"]["unexplained"]) for case_id in cause["cases"][:3]]
    assert shown
    for case_id in shown:  # a hand-written case links to its transcript page; a generated one has none
        page = engine_results.ROOT / "docs" / "cases" / f"{case_id}.md"
        assert (f"(cases/{case_id}.md)" in text) == page.is_file(), case_id
