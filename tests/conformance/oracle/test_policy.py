"""Every tuning number of fit is a field of ``Policy`` with its reason (issue 50).

A number written as a module constant of the fit modules is either a fact of the game or of
the protocol (eight tricks, the grid of 5, a timeout's cap), listed here with why, or it
belongs in ``conformance/oracle/policy.py``.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

from conformance.oracle import policy
from conformance.oracle.fit import Fitter

ORACLE = Path(policy.__file__).parent
FIT_MODULES = ("fit.py", "candidates.py", "asking.py", "residual.py", "evidence.py")
FACTS = {
    "MAX_TIMEOUT": "verify's cap on --timeout",
    "NAME_LIMIT": "a length of text written into the fitted file",
    "PROGRESS_EVERY": "how often a log is written to, not how fit searches",
    "CONTRACT_STEP": "the finest grid any profile bids on",
    "TRICKS": "the tricks of a deal",
    "DECK_POINTS": "the card points of the deck",
}


def _number_constants(path: Path) -> list[str]:
    """The module-level names bound to a number literal in a module."""
    found = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, (int, float)) and not isinstance(node.value.value, bool):
            found += [target.id for target in node.targets if isinstance(target, ast.Name)]
    return found


def test_no_fit_module_holds_a_tuning_number_of_its_own() -> None:
    constants = {name: module for module in FIT_MODULES for name in _number_constants(ORACLE / module)}
    assert set(constants) <= set(FACTS), f"numbers outside the Policy: {set(constants) - set(FACTS)}"


def test_every_policy_number_says_why_it_is_what_it_is() -> None:
    """Each field of ``Policy`` has a comment right above it (or above the run of fields it opens)."""
    lines = (ORACLE / "policy.py").read_text(encoding="utf-8").splitlines()
    fields = {field.name for field in dataclasses.fields(policy.Policy)}
    unexplained = []
    for index, line in enumerate(lines):
        name = line.strip().split(":", 1)[0]
        if line.startswith("    ") and name in fields:
            above = index - 1
            while above >= 0 and lines[above].strip().split(":", 1)[0] in fields:  # a run of fields
                above -= 1
            if not lines[above].strip().startswith("#"):
                unexplained.append(name)
    assert not unexplained


def test_a_fitter_holds_the_policy_it_is_given() -> None:
    mine = policy.Policy(beam=1)
    fitter = Fitter("polish", [], ["true"], policy=mine)
    try:
        assert fitter.policy is mine and fitter.read.policy is mine
    finally:
        fitter.close()
    plain = Fitter("polish", [], ["true"])
    try:
        assert plain.policy == policy.POLICY
    finally:
        plain.close()


def test_the_values_tried_for_a_number_follow_the_policy_given() -> None:
    """classic's threshold 880: the bundled thresholds (850, 870, 880, 900) and their neighbours,
    10 and 20 away by default (840 = 850 - 10), 5 away under a policy that says so (875)."""
    from conformance.oracle.fit import knob_domain

    default = knob_domain("barrel.threshold", 880)
    narrow = knob_domain("barrel.threshold", 880, policy.Policy(domain_near=(-5, 5)))
    assert 840 in default and 875 not in default
    assert 875 in narrow and 840 not in narrow
