"""What the fuzz tests share: the problems of a random match state and a mutant found and told apart."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import variants
from conformance.cli import main
from conformance.harness.runner import REFERENCE_COMMAND
from conformance.oracle import fuzz


def problems(match: dict[str, Any], rules: dict[str, dict[str, Any]]) -> list[str]:
    """What no real match under these rules could show in this match state."""
    barrel, target = rules["barrel"], rules["match_end"]["target"]
    found = []
    occupants = [seat for seat in range(3) if match["barrel"][seat]["on"]]
    if occupants and not barrel["enabled"]:
        found.append("a seat on a barrel the rules do not have")
    if barrel["max_occupants"] is not None and len(occupants) > barrel["max_occupants"]:
        found.append(f"{len(occupants)} seats on a barrel for {barrel['max_occupants']}")
    for seat in range(3):
        score, place = match["scores"][seat], match["barrel"][seat]
        if score % 5:
            found.append(f"seat {seat}: score {score} off the 5-point grid")
        if place["on"] and not barrel["threshold"] <= score < target:
            found.append(f"seat {seat}: on the barrel at {score}")
        if place["on"] and barrel["attempts"] is not None and place["attempts"] >= barrel["attempts"]:  # null: no limit
            found.append(f"seat {seat}: {place['attempts']} attempts used of {barrel['attempts']}")
        if barrel["enabled"] and not place["on"] and score >= barrel["threshold"]:
            found.append(f"seat {seat}: {score} off the barrel at or past its threshold")
        if score >= target if rules["match_end"]["over_target"] == "reach" else score == target:
            found.append(f"seat {seat}: {score} a winning score with the match going on")
        if barrel["failed_visit_reset"] and place["failed_visits"] >= barrel["failed_visit_reset"]:
            found.append(f"seat {seat}: {place['failed_visits']} failed visits, past the reset")
        if rules["dump"]["enabled"] and abs(score) == rules["dump"]["score"]:
            found.append(f"seat {seat}: {score} left undumped")
        if rules["bolts"]["enabled"] and match["bolts"][seat] >= rules["bolts"]["every"]:
            found.append(f"seat {seat}: {match['bolts'][seat]} bolts without the penalty")
        limit = rules["giving_up"]["limit"]
        if limit is not None and match["give_ups"][seat] > limit:
            found.append(f"seat {seat}: {match['give_ups'][seat]} give-ups past the limit {limit}")
    return found


def found_and_told_apart(mutant: str, profile: str, seed: str, deals: int, folder: Path) -> fuzz.Outcome:
    """fuzz finds the mutant within ``deals``, and the transcript it saves in ``folder`` passes
    against the reference and fails against the mutant."""
    command = [sys.executable, "-m", "mutants.serve", mutant]
    outcome = fuzz.fuzz(command, profile, variants.resolve(profile).to_document(), deals=deals, seed=seed,
                        save_to=folder)
    assert outcome.divergence is not None and outcome.saved is not None, outcome.error
    assert main(["verify", "--cases", str(folder), "--profile", profile, "--", *REFERENCE_COMMAND]) == 0
    assert main(["verify", "--cases", str(folder), "--profile", profile, "--", *command]) == 1
    return outcome
