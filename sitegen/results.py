"""Verify reports of the bundled adapters and a few mutants, for the Results page and docs/verify.md.

`python -m sitegen.results` runs `thousand verify --report` for each entry of RUNS and
writes the reports to docs/results/ (committed, so building the site runs no engine).
`python -m sitegen.results --check` runs nothing: it exits 1 when a report no longer
covers exactly the (case, profile) pairs its selection picks today (the corpus changed),
which is also what `python -m sitegen --check` reports. The same runs write the terminal
outputs docs/verify.md includes (docs/snippets/, OUTPUT_SNIPPETS), with the broken adapter
of its failure walk-through made in a temporary folder; `--check` also finds a missing one,
or one that does not show its report's summary line. Regenerating takes about ten minutes on
a busy machine (the reference and the Python toy on every case are the long runs).
"""

from __future__ import annotations

import argparse
import html
import json
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from conformance.cli.report import results_of
from conformance.cli.verify import read_case_list
from conformance.corpus.transcripts import CASES_DIR, GENERATED_DIR, discover
from conformance.harness import runner
from sitegen import engine_results
from spec import SPEC_DIR
from spec.vocabulary import OUTCOMES, ExitCode

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
    snippet: str = ""  # docs/snippets/NAME.txt: the run's real terminal output, as docs/verify.md shows it
    shown: str = ""  # the command as the page shows it (without --report)

    @property
    def everything(self) -> bool:
        return not self.starter and not self.profile

    def selection(self) -> tuple[list[str], list[str]]:
        """(profiles, include globs) as `thousand verify` would select them."""
        return ([self.profile] if self.profile else [], read_case_list(STARTER) if self.starter else [])

    def arguments(self, reports: Path | None = None) -> list[str]:
        """verify's arguments, the report written to docs/results/ (or to ``reports``)."""
        chosen = ["--case-list", str(STARTER.relative_to(ROOT))] if self.starter else (
            ["--profile", self.profile] if self.profile else [])
        report = str(reports / f"{self.name}.json") if reports else str((RESULTS_DIR / f"{self.name}.json").relative_to(ROOT))
        return [*chosen, "--report", report, *(["--", *self.command] if self.command else [])]


def _mutant(name: str) -> Run:
    return Run(f"mutant-{name}", f"mutant {name}", ("python", "-m", "mutants.serve", name))


RUNS = (
    Run("reference", "reference", ()),
    Run("python-toy", "Python toy adapter", PYTHON_TOY, snippet="verify-starter",
        shown="thousand verify --case-list conformance/starter.txt -- python examples/adapters/python/adapter.py"),
    Run("node-toy", "Node toy adapter", NODE_TOY, snippet="verify-starter",
        shown="thousand verify --case-list conformance/starter.txt -- node examples/adapters/node/adapter.js"),
    _mutant("opener-may-pass"),
    _mutant("stop-at-ignored"),
    _mutant("bid-step-5-everywhere"),
    _mutant("no-marriage-needed"),
    Run("python-toy-polish", "Python toy adapter, polish", PYTHON_TOY, starter=False, profile="polish", matrix=False,
        snippet="verify-polish", shown="thousand verify --profile polish -- python examples/adapters/python/adapter.py"),
    Run("python-toy-all", "Python toy adapter, every case", PYTHON_TOY, starter=False, matrix=False, slim=True,
        snippet="verify-everything", shown="thousand verify --jobs 2 -- python examples/adapters/python/adapter.py"),
    Run("node-toy-all", "Node toy adapter, every case", NODE_TOY, starter=False, matrix=False, slim=True),
    # an engine with two known mistakes, for the root causes shown on docs/verify.md
    Run("two-mistakes-polish", "two mutants at once, polish", ("python", "-m", "mutants.serve", *TWO_MISTAKES),
        starter=False, profile="polish", matrix=False, slim=True, snippet="verify-root-causes",
        shown=f"thousand verify --profile polish -- python -m mutants.serve {' '.join(TWO_MISTAKES)}"),
    Run("reference-all", "reference, every case", (), starter=False, matrix=False, slim=True,
        snippet="verify-reference", shown="thousand verify"),
    # the whole polish corpus, beside the npm engine 1k (sitegen/engine_results.py)
    Run("reference-polish", "reference, polish", (), starter=False, profile="polish", matrix=False, slim=True),
    Run("node-toy-polish", "Node toy adapter, polish", NODE_TOY, starter=False, profile="polish", matrix=False, slim=True),
    *(Run(f"mutant-{name}-polish", f"mutant {name}, polish", ("python", "-m", "mutants.serve", name), starter=False,
          profile="polish", matrix=False, slim=True)
      for name in ("opener-may-pass", "stop-at-ignored", "bid-step-5-everywhere", "no-marriage-needed")),
)
SNIPPETS_DIR = ROOT / "docs" / "snippets"
# docs/verify.md's broken adapter: the Python toy with the stop at 120 also forbidding a bid of 120.
BROKEN_LINE = ('if k["stop_at"] is not None and amount > k["stop_at"]',
               'if k["stop_at"] is not None and amount >= k["stop_at"]')


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


def verify(arguments: Sequence[str], cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """A real `thousand verify` run (this checkout's code), its output captured."""
    command = [sys.executable, "-m", "conformance.cli", "verify", *arguments]
    return subprocess.run(command, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False)


def regenerate(runs: Sequence[Run]) -> int:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    failed = 0
    outputs: dict[str, list[str]] = {}
    for run in runs:
        done = verify(["--jobs", "2", *run.arguments()])
        summary = done.stdout.strip().splitlines()[-1:] or ["(no output)"]
        print(f"{run.name}: exit {done.returncode}: {summary[0]}")
        path = RESULTS_DIR / f"{run.name}.json"
        if not path.exists():
            failed += 1
            print(done.stderr[-2000:], file=sys.stderr)
        else:
            tidy(path, run.slim)
        if run.snippet:
            outputs.setdefault(run.snippet, []).append(terminal_text(run.shown, done, tail_only=run.name != "python-toy"
                                                                     and run.name != "node-toy"))
    for name, texts in outputs.items():
        (SNIPPETS_DIR / f"{name}.txt").write_text("".join(texts), encoding="utf-8")
    if not runs or any(run.name == "python-toy" for run in runs):
        write_broken_adapter_snippets()
    return ExitCode.FAILED if failed else ExitCode.PASSED


def terminal_text(shown: str, done: subprocess.CompletedProcess[str], tail_only: bool, full_blocks: int = 0) -> str:
    """What the terminal shows: the command, then standard output. A long output is cut to its
    first ``full_blocks`` failure descriptions and its end (from the summary line on), with
    `...` where lines are left out; the summary is the first line after the failures."""
    lines = done.stdout.rstrip("\n").splitlines()
    summary = next((i for i, line in enumerate(lines) if _is_summary(line)), len(lines))
    head = _blocks(lines[:summary], full_blocks)
    out = [f"$ {shown}"]
    if tail_only or len(head) < summary:
        out += head + ["..."]
    else:
        out += head
    return "\n".join(out + lines[summary:]) + "\n"


def _is_summary(line: str) -> bool:
    words = line.split()
    return len(words) >= 2 and words[0].isdigit() and words[1].rstrip(",") in OUTCOMES or line == "no cases checked"


def _blocks(lines: Sequence[str], count: int) -> list[str]:
    """The first ``count`` blank-line separated blocks."""
    kept: list[str] = []
    blocks = 0
    for line in lines:
        if blocks >= count:
            break
        kept.append(line)
        if not line.strip():
            blocks += 1
    return kept


def fresh_snippets() -> dict[str, str]:
    """Every terminal output this module writes, from runs made now, written nowhere (the
    reports go to a temporary folder): what `python -m sitegen.outputs --check --with-verify`
    compares with docs/snippets/."""
    texts: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for run in RUNS:
            if run.snippet:
                done = verify(["--jobs", "2", *run.arguments(Path(folder))])
                texts.setdefault(run.snippet, []).append(
                    terminal_text(run.shown, done, tail_only=run.name not in ("python-toy", "node-toy")))
    return {**{name: "".join(parts) for name, parts in texts.items()}, **broken_adapter_texts()}


def write_broken_adapter_snippets() -> None:
    for name, text in broken_adapter_texts().items():
        (SNIPPETS_DIR / f"{name}.txt").write_text(text, encoding="utf-8")


def broken_adapter_texts() -> dict[str, str]:
    """docs/verify.md's walk through a failure and the expected-failures list, from real runs
    of the broken copy of the Python toy adapter (made in a temporary folder)."""
    source = (ROOT / "examples" / "adapters" / "python" / "adapter.py").read_text(encoding="utf-8")
    if BROKEN_LINE[0] not in source:
        raise SystemExit("examples/adapters/python/adapter.py changed: update BROKEN_LINE in sitegen/results.py")
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        broken, fixed = work / "adapter.py", work / "fixed.py"
        broken.write_text(source.replace(BROKEN_LINE[0], BROKEN_LINE[1], 1), encoding="utf-8")
        fixed.write_text(source, encoding="utf-8")
        starter = ["--case-list", str(STARTER)]
        shown = "thousand verify --case-list conformance/starter.txt -- python adapter.py"
        first = verify([*starter, "--report", "report.json", "--", sys.executable, str(broken)], cwd=work)
        report = json.loads((work / "report.json").read_text(encoding="utf-8"))
        listed = ["--expected-failures", "expected-failures.txt"]
        verify([*starter, "--write-expected-failures", "expected-failures.txt", "--", sys.executable, str(broken)], cwd=work)
        excused = verify([*starter, *listed, "--", sys.executable, str(broken)], cwd=work)
        passing = verify([*starter, *listed, "--", sys.executable, str(fixed)], cwd=work)
        texts = {
            "verify-broken": terminal_text(shown, first, tail_only=False, full_blocks=1),
            "verify-broken-list": (work / "expected-failures.txt").read_text(encoding="utf-8"),
            "verify-broken-json": report_excerpt(report),
            "verify-broken-expected": terminal_text(f"thousand verify --case-list conformance/starter.txt "
                                                    f"{' '.join(listed)} -- python adapter.py", excused, tail_only=True),
            "verify-starter-pass": terminal_text(f"thousand verify --case-list conformance/starter.txt "
                                                 f"{' '.join(listed)} -- python adapter.py", passing, tail_only=False,
                                                 full_blocks=len(passing.stdout.splitlines())),
        }
        texts["quickstart-template"] = template_run(work)
    cleaned = {}
    for name, text in texts.items():
        clean = text.replace(str(broken), "adapter.py").replace(str(fixed), "adapter.py").replace(str(work) + "/", "")
        cleaned[name] = clean.replace(sys.executable, "python").replace(str(ROOT) + "/", "")
    return cleaned


def template_run(work: Path) -> str:
    """docs/quickstart.md's first run: the Python template copied as it is, its methods unwritten."""
    adapter = work / "my_adapter.py"
    adapter.write_text((ROOT / "examples" / "adapters" / "python" / "template.py").read_text(encoding="utf-8"), encoding="utf-8")
    done = verify(["--case-list", str(STARTER), "--", sys.executable, str(adapter)], cwd=work)
    return terminal_text("thousand verify --case-list conformance/starter.txt -- python my_adapter.py", done,
                         tail_only=False, full_blocks=1).replace(str(adapter), "my_adapter.py")


def report_excerpt(report: dict[str, Any]) -> str:
    """The first failing result of a real report, one field a line; the state before the step
    cut to its first keys (`"...": "..."` marks what is left out), the time rounded."""
    result = dict(next(r for r in results_of(report) if r.get("outcome") == "fail"))
    result["seconds"] = round(float(result.get("seconds", 0)), 2)
    lines = ["{"]
    for key, value in result.items():
        if key == "details" and isinstance(value, dict):
            details = dict(value)
            state = details.get("state_before")
            if isinstance(state, dict):
                details["state_before"] = {**{k: state[k] for k in list(state)[:3]}, "...": "..."}
            inner = [f'    {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}' for k, v in details.items()]
            lines.append(f'  "details": {{\n' + ",\n".join(inner) + "\n  },")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},")
    lines[-1] = lines[-1].rstrip(",")
    return "\n".join(lines + ["}"]) + "\n"


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
        problems = stale_reports() + stale_snippets()
        for problem in problems:
            print(problem)
        if problems:
            print("run `python -m sitegen.results` and commit docs/results/ and docs/snippets/", file=sys.stderr)
        return ExitCode.FAILED if problems else ExitCode.PASSED
    return regenerate([run for run in RUNS if not args.only or run.name in args.only])


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
    lines = [mark, "", "# Results", "", *whole_corpus_section(),
             "## The starter subset, by rule section", "",
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
    lines += ["</tbody></table></div>", "", *engine_results.page_section(), "## The reports", ""]
    for run, report in shown:
        lines.append(f"- **{run.label}** ({markdown_text(implementation_name(report))}): [{run.name}.json](results/{run.name}.json), "
                     f"`thousand verify {' '.join(run.arguments()[:2])}" + (f" -- {' '.join(run.command)}`" if run.command else "`"))
    lines += ["", "Regenerate them with `python -m sitegen.results` (about ten minutes on a busy machine); `python -m sitegen --check` "
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


def whole_corpus_section() -> list[str]:
    """Every run over the whole corpus (a Run with neither starter nor profile: add one to RUNS
    and it gets a column), by profile, its options counted with it: passes, failures, skips."""
    from conformance.cli.report import implementation_name, markdown_text

    shown = [(run, report) for run in RUNS if run.everything and (report := load_report(run)) is not None]
    shown.sort(key=lambda pair: bool(pair[0].command))  # the reference first, the yardstick
    if not shown:
        return []
    counts = {run.name: _by_profile(results_of(report)) for run, report in shown}
    profiles = sorted({profile for table in counts.values() for profile in table})
    lines = ["## The whole corpus, by profile", "",
             "Every transcript under every profile and option it applies to. A *skip* is a case the implementation "
             "declined at `start` (the toy adapters play only the auction, so they skip every case that goes "
             "further): a column with many skips says little about the rules it skipped. *Failed* counts every "
             "outcome that is neither a pass nor a skip (a wrong reply, an error, a timeout).", "",
             '<div class="replay-scroll"><table class="results-matrix">',
             "<thead><tr><th>profile</th>" + "".join(f"<th>{html.escape(run.label)}</th>" for run, _ in shown)
             + "</tr></thead><tbody>"]
    for profile in [*profiles, ""]:
        cells = "".join(_whole_cell(counts[run.name].get(profile) if profile else
                                    sum(counts[run.name].values(), Counter())) for run, _ in shown)
        head = f'<a href="../rulebook/{html.escape(profile)}/">{html.escape(profile)}</a>' if profile else "all"
        row = '<tr class="total">' if not profile else "<tr>"
        lines.append(f'{row}<th scope="row">{head}</th>{cells}</tr>')
    lines += ["</tbody></table></div>", ""]
    lines += [f"- **{html.escape(run.label)}** ({markdown_text(implementation_name(report))}): "
              f"[{run.name}.json](results/{run.name}.json), `thousand verify"
              + (f" -- {' '.join(run.command)}`" if run.command else "`") for run, report in shown]
    return lines + [""]


def _by_profile(results: Sequence[Any]) -> dict[str, Counter[str]]:
    table: dict[str, Counter[str]] = {}
    for result in results:
        table.setdefault(str(result["profile"]).split("+")[0], Counter())[str(result["outcome"])] += 1
    return table


def _whole_cell(counts: Counter[str] | None) -> str:
    if not counts:
        return '<td class="none">–</td>'
    failed = sum(counts.values()) - counts["pass"] - counts["skipped"]
    kind = "bad" if failed else ("skip" if counts["skipped"] else "ok")
    return f'<td class="{kind}">{counts["pass"]:,} pass, {failed:,} failed, {counts["skipped"]:,} skipped</td>'


def _empty() -> Counter[str]:
    return Counter()


# --- the numbers of docs/verify.md -------------------------------------------------------------

BROKEN_SNIPPETS = ("quickstart-template", "verify-broken", "verify-broken-list", "verify-broken-json", "verify-broken-expected",
                   "verify-starter-pass")
OUTPUT_SNIPPETS = tuple(sorted({run.snippet for run in RUNS if run.snippet} | set(BROKEN_SNIPPETS)))


def verify_snippets(cases: Sequence[Any]) -> dict[str, str]:
    """The lines docs/verify.md includes that `python -m sitegen` computes from the corpus (the
    terminal outputs are written by `python -m sitegen.results` from real runs: OUTPUT_SNIPPETS)."""
    every = len(runner.plan(cases))
    starter_ids = read_case_list(STARTER)
    starter_pairs = len(runner.plan(cases, (), starter_ids))
    return {
        "snippets/verify-reference-count.txt":
            f"The number grows as the corpus grows; today the reference passes all {every} (case, profile) pairs "
            "(this line is regenerated by `python -m sitegen`).\n",
        "snippets/verify-starter-count.txt":
            f"{_number_word(len(starter_ids))} cases make {starter_pairs} runs because most cases apply to several "
            "profiles (and options):\n",
    }


def stale_snippets() -> list[str]:
    """Why a terminal output on docs/verify.md is missing or is not its run's (the summary line
    of the committed report must be in it)."""
    from conformance.cli.report import summary_line

    problems = [f"docs/snippets/{name}.txt is missing" for name in OUTPUT_SNIPPETS
                if not (SNIPPETS_DIR / f"{name}.txt").is_file()]
    for run in RUNS:
        report, path = load_report(run), SNIPPETS_DIR / f"{run.snippet}.txt"
        if not run.snippet or report is None or not path.is_file():
            continue
        if f"\n{summary_line(results_of(report))}" not in path.read_text(encoding="utf-8"):
            problems.append(f"docs/snippets/{run.snippet}.txt does not show the summary of docs/results/{run.name}.json")
    return problems


def _number_word(n: int) -> str:
    words = ("Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten", "Eleven",
             "Twelve", "Thirteen", "Fourteen", "Fifteen", "Sixteen", "Seventeen", "Eighteen", "Nineteen", "Twenty")
    return words[n] if n < len(words) else str(n)


if __name__ == "__main__":
    sys.exit(main())
