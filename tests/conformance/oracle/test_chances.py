"""fuzz's and positions' probabilities are one documented policy (conformance/oracle/chances.py)."""

from __future__ import annotations

import dataclasses
import re

import pytest
from tests.support.paths import ROOT

from conformance.oracle import chances

# the modules whose random choices the policy decides: no probability is written inline there
USERS = ("conformance/oracle/positions.py", "conformance/oracle/fuzz.py")


def test_each_probability_has_its_reason_and_is_one() -> None:
    for item in dataclasses.fields(chances.Chances):
        value = getattr(chances.CHANCES, item.name)
        assert isinstance(value, float) and 0 < value < 1, item.name
        assert len(chances.reason(item.name).split()) >= 5, f"{item.name}: say why the number is what it is"


def test_the_policy_cannot_be_changed_in_place() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        chances.CHANCES.illegal_action = 0.5  # type: ignore[misc]
    with pytest.raises(KeyError):
        chances.reason("no_such_chance")


def test_the_amount_shares_leave_room_for_the_rest() -> None:
    """A bid is the least, a few steps up or a named amount with these shares; the rest (0.2) the highest or any."""
    c = chances.CHANCES
    assert c.amount_least + c.amount_few_steps + c.amount_named == 0.8
    assert c.declaring == {"any": 0.6, "low": 0.25, "high": 0.9, "long": 0.9}


@pytest.mark.parametrize("module", USERS)
def test_no_probability_is_written_inline(module: str) -> None:
    text = (ROOT / module).read_text(encoding="utf-8")
    inline = re.findall(r"(?:random\(\)|roll) < [0-9.]+|[A-Z_]+_SHARE = ", text)
    assert not inline, f"{module}: {inline}: name them in conformance/oracle/chances.py"
