"""fit reaches the numbers inside a list knob's items (a redeal rule's card-point line) from
what the implementation showed, as the schema declares (``x-fit-role`` on the item field)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from conformance.cli import main
from conformance.harness.runner import REFERENCE_COMMAND
from conformance.oracle import candidates, observe
from tests.support.paths import FIXTURES
from variants.schema import ITEM_FIT_ROLES, item_fit_roles

REDEAL_UNDER_15 = FIXTURES / "house" / "redeal-under-15.yaml"
WEAK = [["AS", "10S", "KS", "QS", "JS", "9S", "AC"], ["9C", "9D", "9H", "JC", "JD", "JH", "QC"],
        ["AD", "10D", "KD", "QD", "AH", "10H", "KH"]]  # seat 1 holds 9 card points


def _deal(hands: list[list[str]], *events: dict[str, object]) -> observe.CaseRecord:
    return observe.CaseRecord("c", (observe.StepRecord(1, 0, None, None, observe.Reply(True, events), {"hands": hands}),))


def test_the_schema_declares_the_redeal_line_of_a_hand() -> None:
    roles = item_fit_roles()
    assert roles == {"redeals.rules": {"points": (("hand_points",), "redeal")}}
    assert all(set(names) <= set(ITEM_FIT_ROLES) for fields in roles.values() for names, _event in fields.values())


def test_a_redeal_line_is_read_from_the_hands_the_redeals_named() -> None:
    read = candidates.Readings()
    read.add_record(_deal(WEAK, {"type": "redeal", "reason": "hand_under_points", "player": 1}))
    kept = [WEAK[0], ["AC", *WEAK[1][1:]], WEAK[2]]  # seat 1 holds 20 card points: no redeal
    read.add_record(_deal(kept))
    # above the named hand's 9, at or below the weakest hand no redeal ended
    assert read.hand_lines("redeal", "hand_under_points") == [10, 20]
    polish = [{"condition": "four_nines", "when": "before_bidding", "by": "claim"}]
    tried = candidates.values("redeals.rules", polish, read)
    automatic = {"condition": "hand_under_points", "points": 10, "when": "before_bidding", "by": "automatic"}
    # beside the rules' own items and alone; by itself (the first value of each other field) and
    # as the bundled rule of that condition (gambler-club's claim)
    assert [*polish, automatic] in tried and [automatic] in tried and [{**automatic, "by": "claim"}] in tried
    assert [*polish, {**automatic, "points": 20}] in tried
    # nothing read where no redeal event named a hand, nor for a reason whose rules hold no line
    assert candidates.Readings().list_values("redeals.rules", polish) == []
    nines = candidates.Readings()
    nines.add_record(_deal(WEAK, {"type": "redeal", "reason": "four_nines", "player": 1}))
    assert nines.hand_lines("redeal", "four_nines") == [10] and nines.list_values("redeals.rules", polish) == []


@pytest.mark.slow
def test_a_redeal_line_no_profile_uses_is_fitted_beside_another_difference(tmp_path: Path) -> None:
    """The engine deals again when a hand holds under 15 card points (no bundled profile has
    that line: gambler-club's is 14) and caps bids at 300. Before fit read the line from the
    redealt hands, its list values held only the bundled lists, and the residual called the
    redeals a rule the schema has no knob for."""
    out, report = tmp_path / "fitted.yaml", tmp_path / "fit.json"
    code = main(["fit", "--profile", "polish", "-k", "polish/talon/*", "-k", "polish/play/must-trump-when-void",
                 "--no-ask", "--output", str(out), "--report", str(report), "--",
                 *REFERENCE_COMMAND, "--rules", str(REDEAL_UNDER_15)])
    rules = yaml.safe_load(out.read_text(encoding="utf-8"))["rules"]
    assert {"condition": "hand_under_points", "points": 15, "when": "before_bidding", "by": "automatic"} \
        in rules["redeals"]["rules"]["value"]
    groups = json.loads(report.read_text(encoding="utf-8"))["groups"]
    assert not [g for g in groups if "redeal" in g["signature"]]  # nothing of the redeals left in the residual
    assert code == 0
