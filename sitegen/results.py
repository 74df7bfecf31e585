"""Verify reports of the bundled adapters and a few mutants, for the Results page and docs/verify.md.

`python -m sitegen.results` runs `thousand verify --report` for each entry of RUNS and
writes the reports to docs/results/ (committed, so building the site runs no engine).
`python -m sitegen.results --check` runs nothing: it exits 1 when a report no longer
covers exactly the (case, profile) pairs its selection picks today (the corpus changed),
which is also what `python -m sitegen --check` reports. The runs are kept small (the starter
subset, one profile) so that regenerating them takes a minute or two.
"""

from __future__ import annotations

import argparse
import html
import io
import json
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from conformance.harness import runner
from conformance.cli.report import results_of
from conformance.corpus.transcripts import CASES_DIR, GENERATED_DIR, discover
from conformance.cli.verify import read_case_list
from spec import SPEC_DIR

ROOT = SPEC_DIR.parent
RESULTS_DIR = ROOT / "docs" / "results"
STARTER = ROOT / "conformance" / "starter.txt"
PYTHON_TOY = ("python", "examples/adapters/python/adapter.py")
NODE_TOY = ("node", "examples/adapters/node/adapter.js")
TWO_MISTAKES = ("must-beat-missing", "marriage-values-hearts-diamonds-swapped")


@dataclass(frozen=True)
class Run:
    """One verify run: which implementation, on which selection."""

    name: str  # the report's file name, docs/results/NAME.json
    label: str  # the column heading on the Results page
    command: tuple[str, ...]  # empty: the bundled reference
    starter: bool = True  # the starter subset; else `profile`
    profile: str = ""
    matrix: bool = True  # a column of the Results page's matrix
    slim: bool = False  # keep only the counted keys of each result (a large run, for verify.md's numbers)

    @property
    def everything(self) -> bool:
        return not self.starter and not self.profile

    def selection(self) -> tuple[list[str], list[str]]:
        """(profiles, include globs) as `thousand verify` would select them."""
        return ([self.profile] if self.profile else [], read_case_list(STARTER) if self.starter else [])

    def arguments(self) -> list[str]:
        chosen = ["--case-list", str(STARTER.relative_to(ROOT))] if self.starter else (
            ["--profile", self.profile] if self.profile else [])
        return [*chosen, "--report", str((RESULTS_DIR / f"{self.name}.json").relative_to(ROOT)),
                *(["--", *self.command] if self.command else [])]


def _mutant(name: str) -> Run:
    return Run(f"mutant-{name}", f"mutant {name}", ("python", "-m", "mutants.serve", name))


RUNS = (
    Run("reference", "reference", ()),
    Run("python-toy", "Python toy adapter", PYTHON_TOY),
    Run("node-toy", "Node toy adapter", NODE_TOY),
    _mutant("opener-may-pass"),
    _mutant("stop-at-ignored"),
    _mutant("bid-step-5-everywhere"),
    _mutant("no-marriage-needed"),
    Run("python-toy-polish", "Python toy adapter, polish", PYTHON_TOY, starter=False, profile="polish", matrix=False),
    Run("python-toy-all", "Python toy adapter, every case", PYTHON_TOY, starter=False, matrix=False, slim=True),
    # an engine with two known mistakes, for the root causes shown on docs/verify.md
    Run("two-mistakes-polish", "two mutants at once, polish", ("python", "-m", "mutants.serve", *TWO_MISTAKES),
        starter=False, profile="polish", matrix=False, slim=True),
)


def load_report(run: Run) -> dict[str, Any] | None:
    path = RESULTS_DIR / f"{run.name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def expected_pairs(run: Run, cases: Sequence[Any]) -> set[tuple[str, str]]:
    profiles, include = run.selection()
    return {(job.case.id, job.profile) for job in runner.plan(cases, profiles, include)}


def stale_reports(cases: Sequence[Any] | None = None) -> list[str]:
    """Why each committed report is stale (missing, or not the pairs its selection picks today)."""
    corpus = list(cases) if cases is not None else discover([CASES_DIR, GENERATED_DIR])
    problems = []
    for run in RUNS:
        report = load_report(run)
        if report is None:
            problems.append(f"docs/results/{run.name}.json is missing")
            continue
        found = {(r["id"], r["profile"]) for r in results_of(report)}
        if found != expected_pairs(run, corpus):
            problems.append(f"docs/results/{run.name}.json does not cover today's selection")
    return problems


def regenerate(runs: Sequence[Run]) -> int:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    failed = 0
    for run in runs:
        command = [sys.executable, "-m", "conformance.cli", "verify", "--jobs", "2", *run.arguments()]
        done = subprocess.run(command, cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False)
        summary = done.stdout.strip().splitlines()[-1:] or ["(no output)"]
        print(f"{run.name}: exit {done.returncode}: {summary[0]}")
        path = RESULTS_DIR / f"{run.name}.json"
        if not path.exists():
            failed += 1
            print(done.stderr[-2000:], file=sys.stderr)
        else:
            tidy(path, run.slim)
    return 1 if failed else 0


def tidy(path: Path, drop_details: bool) -> None:
    """Make a report fit to commit: no machine-specific interpreter path; for a large run, only the counted keys."""
    report = json.loads(path.read_text(encoding="utf-8"))
    command = report.get("command") or []
    if command and Path(str(command[0])).is_absolute():
        command[0] = "python"  # the reference is started with this machine's interpreter
    if drop_details:
        key = "results" if "results" in report else "cases"
        report[key] = [{k: r[k] for k in ("id", "profile", "outcome", "knobs") if k in r} for r in results_of(report)]
        path.write_text(json.dumps(report, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    else:
        path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sitegen.results", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="run nothing; exit 1 if a report is stale")
    parser.add_argument("--only", nargs="+", default=[], metavar="NAME", help="only these runs")
    args = parser.parse_args(argv)
    if args.check:
        problems = stale_reports()
        for problem in problems:
            print(problem)
        if problems:
            print("run `python -m sitegen.results` and commit docs/results/", file=sys.stderr)
        return 1 if problems else 0
    return regenerate([run for run in RUNS if not args.only or run.name in args.only])


if __name__ == "__main__":
    sys.exit(main())


# --- the Results page ----------------------------------------------------------------------

def _cell(counts: Any) -> str:
    """A matrix cell: passes out of pairs run, with the failures named; a class for colour."""
    total = sum(counts.values())
    if not total:
        return '<td class="none">–</td>'
    bad = total - counts["pass"] - counts["skipped"]
    kind = "bad" if bad else ("skip" if counts["skipped"] else "ok")
    extra = f", {bad} failed" if bad else ""
    extra += f", {counts['skipped']} skipped" if counts["skipped"] else ""
    return f'<td class="{kind}">{counts["pass"]}/{total}{extra}</td>'


def results_page(mark: str) -> str:
    """Outcomes by rule section for each implementation (Bowtie-style), from docs/results/*.json."""
    from conformance.cli.report import by_section, implementation_name, markdown_text, summary_line

    runs = [(run, load_report(run)) for run in RUNS if run.matrix]
    shown = [(run, report) for run, report in runs if report is not None]
    tables = {run.name: by_section(results_of(report)) for run, report in shown}
    sections = sorted({section for table in tables.values() for section in table})
    lines = [mark, "", "# Results", "",
             "How the bundled implementations fare on the [starter subset](verify.md#first-the-starter-subset) "
             "(the hand-written auction cases of `conformance/starter.txt`, under every profile they apply to): "
             "the reference, the two toy adapters in `examples/adapters/`, and four mutants, copies of the "
             "reference with one deliberate mistake each (`python -m mutants.serve NAME`). Each cell counts "
             "(case, profile) pairs that passed, out of those run, by the rule sections of the knobs each case exercises "
             "(a case about the auction ceiling and marriages counts in both rows); a mutant's failures are the suite "
             "doing its job.", "",
             '<div class="replay-scroll"><table class="results-matrix">',
             "<thead><tr><th>rule section</th>" + "".join(f"<th>{run.label}</th>" for run, _ in shown) + "</tr></thead><tbody>"]
    for section in sections:
        lines.append(f'<tr><th scope="row">{html.escape(section)}</th>'
                     + "".join(_cell(tables[run.name].get(section, {}) or _empty()) for run, _ in shown) + "</tr>")
    lines.append('<tr class="total"><th scope="row">all</th>' + "".join(
        f"<td>{summary_line(results_of(report))}</td>" for _, report in shown) + "</tr>")
    lines += ["</tbody></table></div>", "", "## The reports", ""]
    for run, report in shown:
        lines.append(f"- **{run.label}** ({markdown_text(implementation_name(report))}): [{run.name}.json](results/{run.name}.json), "
                     f"`thousand verify {' '.join(run.arguments()[:2])}" + (f" -- {' '.join(run.command)}`" if run.command else "`"))
    lines += ["", "Regenerate them with `python -m sitegen.results` (about two minutes); `python -m sitegen --check` "
              "fails when the corpus has changed under them.", "",
              "## Publish your own", "",
              "Run the suite with a JSON report, then turn the report into Markdown for your README or release notes:", "",
              "```console",
              "$ thousand verify --report my-engine.json -- ./my-engine --protocol",
              "$ thousand report my-engine.json --markdown > CONFORMANCE.md",
              "```", "",
              "The Markdown names your implementation (from its `start` reply), counts every outcome, gives the "
              "outcomes by rule section as in the matrix above, and lists each unexpected outcome with its case id, "
              "so a reader can open the [transcript page](cases.md) and see what was expected. Publish the JSON "
              "beside it: it is the evidence.", ""]
    return "\n".join(lines) + "\n"


def _empty() -> Counter[str]:
    return Counter()


# --- the numbers of docs/verify.md -------------------------------------------------------------

def _by_knob_section(report: dict[str, Any]) -> str:
    """The runner's closing line: unexpected outcomes by the rule sections of their knobs."""
    from conformance.cli.report import sections_of

    tally: Counter[str] = Counter()
    for result in results_of(report):
        if result.get("outcome") not in ("pass", "skipped"):
            tally.update(sections_of(result))
    ordered = sorted(tally.items(), key=lambda item: (-item[1], item[0]))
    return "unexpected outcomes by rule section: " + ", ".join(f"{s} {n}" for s, n in ordered) if ordered else ""


def _summary(report: dict[str, Any] | None) -> str:
    from conformance.cli.report import summary_line

    return summary_line(results_of(report)) if report else "(report missing: run python -m sitegen.results)"


def verify_snippets(cases: Sequence[Any]) -> dict[str, str]:
    """The generated lines docs/verify.md includes (pymdownx.snippets), by path below docs/."""
    every = len(runner.plan(cases))
    reports = {run.name: load_report(run) for run in RUNS}
    starter_ids = read_case_list(STARTER)
    starter_pairs = len(runner.plan(cases, (), starter_ids))
    polish, everything = reports["python-toy-polish"], reports["python-toy-all"]
    return {
        "snippets/verify-reference.txt": f"{every}/{every} pass {every}\n{every} pass\n",
        "snippets/verify-reference-count.txt":
            f"The number grows as the corpus grows; today the reference passes all {every} (case, profile) pairs "
            "(this line is regenerated by `python -m sitegen`).\n",
        "snippets/verify-starter.txt":
            f"$ thousand verify --case-list conformance/starter.txt -- python examples/adapters/python/adapter.py\n"
            f"{_summary(reports['python-toy'])}\n"
            f"$ thousand verify --case-list conformance/starter.txt -- node examples/adapters/node/adapter.js\n"
            f"{_summary(reports['node-toy'])}\n",
        "snippets/verify-starter-count.txt":
            f"{_number_word(len(starter_ids))} cases make {starter_pairs} runs because most cases apply to several "
            "profiles (and options):\n",
        # The page's broken adapter fails the 2 pairs of one starter case and passes the others.
        "snippets/verify-broken.txt": f"{starter_pairs - 2} pass, 2 fail\n",
        "snippets/verify-broken-expected.txt": f"{starter_pairs - 2} pass, 2 fail (2 expected failures)\n",
        "snippets/verify-starter-pass.txt": f"{starter_pairs} pass\n",
        "snippets/verify-polish.txt": f"{_summary(polish)}\n{_by_knob_section(polish) if polish else ''}\n",
        "snippets/verify-everything.txt": f"{_summary(everything)}\n{_by_knob_section(everything) if everything else ''}\n",
        "snippets/verify-root-causes.txt": _root_causes(reports["two-mistakes-polish"]),
    }


def _root_causes(report: dict[str, Any] | None) -> str:
    """The end of a real run's terminal output: the summary, then the root causes."""
    if report is None:
        return "(report missing: run python -m sitegen.results)\n"
    from conformance.harness.reports import print_groups
    from conformance.cli.verify import next_step_line

    command = ("python", "-m", "mutants.serve", *TWO_MISTAKES)
    out = io.StringIO()
    print(f"$ thousand verify --profile polish -- {' '.join(command)}", file=out)
    print("...", file=out)
    print(_summary(report), file=out)
    print_groups(report["groups"], report["unexpected"], out, shown=5, further=report.get("further", []))
    print(next_step_line("polish", command), file=out)
    return out.getvalue()


def _number_word(n: int) -> str:
    words = ("Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten", "Eleven",
             "Twelve", "Thirteen", "Fourteen", "Fifteen", "Sixteen", "Seventeen", "Eighteen", "Nineteen", "Twenty")
    return words[n] if n < len(words) else str(n)
