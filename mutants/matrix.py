"""The kill matrix: which cases catch which mutant, from the runner's JSON reports.

A (case, profile) run kills a mutant when the reference passes it and the mutant does
not (fail, error, timeout: any outcome but pass or skipped). Runs the reference itself
does not pass say nothing about a mutant and are left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

ROOT = Path(__file__).resolve().parent.parent
CASE_ROOTS = (ROOT / "conformance" / "cases", ROOT / "conformance" / "generated")
NOT_KILLING = ("pass", "skipped")


@dataclass
class Verdict:
    """One mutant's line of the matrix."""

    name: str
    description: str
    killers: list[str] = field(default_factory=list)  # "case-id@profile", sorted
    cheapest: str | None = None
    cheapest_steps: int | None = None
    problem: str | None = None  # the run itself broke (no report)

    @property
    def killed(self) -> bool:
        return bool(self.killers)

    @property
    def killing_cases(self) -> int:
        """Distinct cases that kill (a case run under several profiles counts once)."""
        return len({run.rsplit("@", 1)[0] for run in self.killers})

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "description": self.description, "killed": self.killed,
            "killing_cases": self.killing_cases, "killing_runs": len(self.killers), "cheapest": self.cheapest, "cheapest_steps": self.cheapest_steps,
            "killers": self.killers, "problem": self.problem,
        }  # fmt: skip


def outcomes(report: Mapping[str, Any]) -> dict[tuple[str, str], str]:
    """(case id, profile) -> outcome, from a ``thousand verify --report`` file."""
    return {(c["id"], c["profile"]): c["outcome"] for c in report.get("cases", [])}


def passing(report: Mapping[str, Any]) -> set[tuple[str, str]]:
    """The runs the reference passes: the only ones that can kill a mutant."""
    return {key for key, outcome in outcomes(report).items() if outcome == "pass"}


def killers(baseline: set[tuple[str, str]], report: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The runs of the baseline that the mutant does not pass."""
    return sorted(key for key, outcome in outcomes(report).items() if key in baseline and outcome not in NOT_KILLING)


def cheapest(cases: Iterable[str], steps: Mapping[str, int]) -> tuple[str, int] | None:
    """The case with the fewest steps, then the shortest id, then the first id alphabetically."""
    ranked = sorted((steps.get(case, 10**9), len(case), case) for case in set(cases))
    if not ranked:
        return None
    count, _, case = ranked[0]
    return case, count


def verdict(name: str, description: str, baseline: set[tuple[str, str]], report: Mapping[str, Any] | None,
            steps: Mapping[str, int], problem: str | None = None) -> Verdict:
    """A mutant's line of the matrix from its report (None when the run produced none)."""
    result = Verdict(name, description, problem=problem)
    if report is None:
        return result
    found = killers(baseline, report)
    result.killers = [f"{case}@{profile}" for case, profile in found]
    best = cheapest((case for case, _ in found), steps)
    if best is not None:
        result.cheapest, result.cheapest_steps = best
    return result


def count_steps(roots: Iterable[Path] = CASE_ROOTS) -> dict[str, int]:
    """Case id -> the number of steps over all its deals (the cost of a case)."""
    found: dict[str, int] = {}
    for root in roots:
        for path in sorted(root.rglob("*.yaml")):
            try:
                data = yaml.safe_load(path.read_text(encoding="utf-8"))
            except (OSError, yaml.YAMLError):
                continue  # the runner reports broken cases; here they just cost nothing known
            if not isinstance(data, dict):
                continue
            named = data.get("id")
            case_id = named if isinstance(named, str) else str(path.relative_to(root).with_suffix(""))
            deals = data.get("deals")
            listed: list[Any] = deals if isinstance(deals, list) else []
            found[case_id] = sum(len(d.get("steps") or []) for d in listed if isinstance(d, dict))
    return found


def render(verdicts: list[Verdict]) -> str:
    """The matrix as text: one line per mutant, then the survivors."""
    width = max((len(v.name) for v in verdicts), default=10)
    lines = []
    for v in verdicts:
        if v.killed:
            lines.append(f"  {v.name:<{width}}  killed    {v.killing_cases:4d} cases  cheapest: {v.cheapest} ({v.cheapest_steps} steps)")
        else:
            lines.append(f"  {v.name:<{width}}  SURVIVED  {v.problem or v.description}")
    survivors = [v.name for v in verdicts if not v.killed]
    killed = len(verdicts) - len(survivors)
    lines.append(f"{killed} of {len(verdicts)} mutants killed" + (f"; survivors: {', '.join(survivors)}" if survivors else ""))
    return "\n".join(lines)
