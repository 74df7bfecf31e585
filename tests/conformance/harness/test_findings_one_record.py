"""One record of a wrong answer (issue 48): ``conformance.harness.findings.Finding``, with one
enum of observation kinds (``Observed``) and one root cause (``RootCause``). The older types
that carried a wrong answer beside it, or the same word for something else, stay gone."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

from tests.support.paths import ROOT

PACKAGES = ("spec", "variants", "reference_impl", "conformance", "sitegen", "mutants")
# class names that carried a wrong answer (or a root cause) beside Finding, or read like one
GONE = {"Difference", "Divergence", "Cause", "DifferenceKind"}
ONCE = ("Finding", "Observed", "RootCause")  # defined once, in conformance/harness/findings.py


@cache  # both tests read the same sources: parsing every module of the packages costs about a second
def classes() -> list[tuple[str, str]]:
    """(module path, class name) of every class defined in the packages."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            found += [(str(path.relative_to(ROOT)), node.name) for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    return found


def test_no_second_record_of_a_wrong_answer() -> None:
    gone = [f"{module}: class {name}" for module, name in classes() if name in GONE]
    assert not gone, "a type beside Finding, Observed or RootCause (conformance/harness/findings.py):\n" + "\n".join(gone)


def test_the_one_record_is_defined_once() -> None:
    where = {name: [module for module, defined in classes() if defined == name] for name in ONCE}
    assert where == {name: [str(Path("conformance/harness/findings.py"))] for name in ONCE}
