"""The kill matrix: which cases catch which mutant, from the runner's JSON reports.

A (case, profile) run kills a mutant when the reference passes it and the mutant does
not (fail, error, timeout: any outcome but pass or skipped). Runs the reference itself
does not pass say nothing about a mutant and are left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from variants.loader import MAX_TRANSCRIPT_BYTES, YamlError, read_document

ROOT = Path(__file__).resolve().parent.parent
CASE_ROOTS = (ROOT / "conformance" / "cases", ROOT / "conformance" / "generated")
NOT_KILLING = ("pass", "skipped", "not_declared")
DIAGNOSED_SHARE = 0.8  # issue 11: one root cause explains at least 80% of a one-rule mistake's failures
SHOWN_KNOBS = 5  # a root cause's first knobs, those the runner prints (conformance.harness.reports)
OUTCOME_SIGNATURES = ("error:", "timeout:", "case_bug:")  # a broken run, not a rule


@dataclass
class Verdict:
    """One mutant's line of the matrix."""

    name: str
    description: str
    killers: list[str] = field(default_factory=list)  # "case-id@profile", sorted
    cheapest: str | None = None
    cheapest_steps: int | None = None
    problem: str | None = None  # the run itself broke (no report)
    knobs: tuple[str, ...] = ()  # the knobs the mutant breaks (catalogue)
    top_signature: str | None = None  # the runner's largest root-cause group
    top_share: float | None = None  # the share of the unexpected results that group explains
    top_knobs: tuple[str, ...] = ()  # the knobs the runner names for that group

    @property
    def diagnosed(self) -> bool:
        """The largest group names a knob the mutant breaks among the first knobs it prints
        (see ``names_a_broken_knob``): the report points at the cause."""
        return names_a_broken_knob(self.top_knobs, self.knobs)

    @property
    def well_diagnosed(self) -> bool:
        """The report points an author at the mistake: its largest root cause explains at
        least 80% of the failures and names it (see ``names_the_mistake``)."""
        if self.top_signature is None or (self.top_share or 0) < DIAGNOSED_SHARE:
            return False
        return names_the_mistake(self.top_signature, self.top_knobs, self.knobs)

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
            "killers": self.killers, "problem": self.problem, "knobs": list(self.knobs),
            "top_group": {"signature": self.top_signature, "share": self.top_share, "knobs": list(self.top_knobs),
                          "names_the_broken_knob": self.diagnosed, "well_diagnosed": self.well_diagnosed} if self.top_signature else None,
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
            steps: Mapping[str, int], problem: str | None = None, knobs: tuple[str, ...] = ()) -> Verdict:
    """A mutant's line of the matrix from its report (None when the run produced none)."""
    result = Verdict(name, description, problem=problem, knobs=knobs)
    if report is None:
        return result
    groups = report.get("groups") or []
    if groups and report.get("unexpected"):
        top = groups[0]
        result.top_signature, result.top_knobs = str(top["signature"]), tuple(top.get("knobs") or ())
        result.top_share = round(int(top["count"]) / int(report["unexpected"]), 3)
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
            try:  # the project's one YAML reading (1.2 core, regular files only, size-capped)
                data, _ = read_document(path, limit=MAX_TRANSCRIPT_BYTES)
            except YamlError:
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
            if v.top_signature is not None:
                hit = "names the broken knob" if v.diagnosed else (
                    "a fixed rule, no knob" if v.well_diagnosed else f"MISSES {', '.join(v.knobs) or 'its knobs'}")
                low = "" if (v.top_share or 0) >= DIAGNOSED_SHARE else f", under {DIAGNOSED_SHARE:.0%}"
                lines.append(f"  {'':<{width}}  top cause {v.top_share or 0:.0%}: {v.top_signature[:90]} ({hit}{low})")
        else:
            lines.append(f"  {v.name:<{width}}  SURVIVED  {v.problem or v.description}")
    survivors = [v.name for v in verdicts if not v.killed]
    killed = len(verdicts) - len(survivors)
    lines.append(f"{killed} of {len(verdicts)} mutants killed" + (f"; survivors: {', '.join(survivors)}" if survivors else ""))
    diagnosed = [v for v in verdicts if v.killed and v.top_signature is not None]
    if diagnosed:
        hits = sum(v.diagnosed for v in diagnosed)
        mean = sum(v.top_share or 0 for v in diagnosed) / len(diagnosed)
        lines.append(f"root causes: the top group names the broken knob for {hits} of {len(diagnosed)} killed mutants "
                     f"({hits / len(diagnosed):.0%}); it explains {mean:.0%} of a mutant's failures on average")
        poor = undiagnosed(verdicts)
        lines.append(f"{len(diagnosed) - len(poor)} of {len(diagnosed)} killed mutants well diagnosed (one root cause explains "
                     f">= {DIAGNOSED_SHARE:.0%} and names the mistake)" + (f"; poorly: {', '.join(poor)}" if poor else ""))
    return "\n".join(lines)


def fixed_rule(broken: Sequence[str]) -> bool:
    """A mutant of a rule no knob names: its catalogue knobs are whole sections (``scoring``)."""
    return bool(broken) and all("." not in k for k in broken)


def names_a_broken_knob(knobs: Sequence[str], broken: Sequence[str]) -> bool:
    """A root cause's knobs name one the mutant breaks among the first SHOWN_KNOBS (those the
    runner prints); for a fixed rule, which has no knob to name, any knob of its section
    the cause lists will do."""
    shown = knobs if fixed_rule(broken) else knobs[:SHOWN_KNOBS]
    return any(knob == b or knob.startswith(b + ".") for knob in shown for b in broken)


def names_the_mistake(signature: str, knobs: Sequence[str], broken: Sequence[str]) -> bool:
    """A root cause points at the mutant's mistake: it names a broken knob, or, for a fixed
    rule, it is a rule check that no knob decides (its signature says what differs; a
    broken run is no rule check)."""
    if names_a_broken_knob(knobs, broken):
        return True
    return fixed_rule(broken) and not knobs and not signature.startswith(OUTCOME_SIGNATURES)


def undiagnosed(verdicts: Iterable[Verdict]) -> list[str]:
    """Killed mutants whose report does not point at their mistake (a failing check)."""
    return [v.name for v in verdicts if v.killed and v.top_signature is not None and not v.well_diagnosed]
