"""The published npm engine `1k` verified, fitted and fuzzed: its recorded results and their check.

`python -m sitegen.engine_results` runs, on examples/adapters/1k/adapter.js (install it first:
`npm ci` in that folder):

1. `thousand verify --profile polish`: every case of the whole corpus of polish, the profile
   closest to the engine's rules (a forced 100, bids by 10, a marriage above 120, no bolts,
   no barrel of the project's kind, a give-up paying 60 to each defender);
2. `thousand fit --profile polish`: the knob values that explain what the engine does;
3. `thousand fuzz --rules FITTED --known FIT-REPORT`: random deals under the fitted rules, so
   that what remains is what no knob value explains (the engine's bugs).

It writes the verify report (docs/results/1k-polish.json, a column of the Results page), the
fitted house profile (docs/results/1k-fitted.yaml), the transcripts fuzz saved (docs/results/
1k-found/) and the expected results: docs/results/1k.json (every case's outcome, the counts,
the root causes, the fitted knob values, the findings). `--check` runs the same three in a
temporary folder and exits 1, naming each difference, when any result is not the recorded
one; `.ci/run` runs it. fit is the long run: about 5.5 minutes of processor time, so about
three minutes on an idle two-core machine (verify and fuzz take seconds), far longer on a busy one.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from spec import SPEC_DIR

ROOT = SPEC_DIR.parent
RESULTS_DIR = ROOT / "docs" / "results"
EXPECTED = RESULTS_DIR / "1k.json"
ENGINE = ("node", "examples/adapters/1k/adapter.js")
PROFILE = "polish"
FUZZ_DEALS = 60  # enough to meet each of the engine's bugs the fitted rules leave; CI time stays small
FUZZ_SEED = "1"
KEPT_KEYS = ("id", "profile", "outcome", "knobs")


def thousand(*arguments: str) -> subprocess.CompletedProcess[str]:
    """A real `thousand` command of this checkout, its output captured."""
    command = [sys.executable, "-m", "conformance.cli", *arguments]
    return subprocess.run(command, cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False)


def commands(folder: Path) -> dict[str, list[str]]:
    """The three runs, writing into ``folder``."""
    fitted, fit_report = folder / "1k-fitted.yaml", folder / "1k-fit.json"
    return {
        "verify": ["verify", "--profile", PROFILE, "--jobs", "2", "--report", str(folder / "1k-polish.json"), "--", *ENGINE],
        "fit": ["fit", "--profile", PROFILE, "--jobs", "2", "--output", str(fitted), "--report", str(fit_report), "--", *ENGINE],
        "fuzz": ["fuzz", "--rules", str(fitted), "--known", str(fit_report), "--deals", str(FUZZ_DEALS), "--seed", FUZZ_SEED,
                 "--save", str(folder / "1k-found"), "--", *ENGINE],
    }


def shown(arguments: list[str], folder: Path) -> str:
    """A command as the page shows it: `thousand ...`, with file names, not this machine's paths."""
    return "thousand " + " ".join(a.replace(str(folder) + "/", "") for a in arguments)


def run_all(folder: Path) -> dict[str, Any]:
    """Run verify, fit and fuzz into ``folder``; the results to record (or to compare)."""
    runs = commands(folder)
    exits: dict[str, int] = {}
    for name, arguments in runs.items():
        done = thousand(*arguments)
        exits[name] = done.returncode
        print(f"{name}: exit {done.returncode}: {(done.stdout.strip().splitlines() or ['(no output)'])[-1]}")
        if done.returncode not in (0, 1):
            raise SystemExit(f"thousand {name} failed (exit {done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    report = json.loads((folder / "1k-polish.json").read_text(encoding="utf-8"))
    fit_report = json.loads((folder / "1k-fit.json").read_text(encoding="utf-8"))
    fitted = yaml.safe_load((folder / "1k-fitted.yaml").read_text(encoding="utf-8"))
    return {
        "engine": "1k 0.0.11 (npm), examples/adapters/1k/adapter.js",
        "profile": PROFILE,
        "verify": {"command": shown(runs["verify"], folder), "exit": exits["verify"], "counts": report["counts"],
                   "partially_checked": report["partially_checked"], "unsupported": report["unsupported"],
                   "root_causes": causes(report), "further": causes(report, "further"), "outcomes": {f"{c['id']}@{c['profile']}": c["outcome"] for c in report["cases"]}},
        "fit": {"command": shown(runs["fit"], folder), "exit": exits["fit"], "knobs": knob_values(fitted.get("rules") or {}),
                "unexplained": causes(fit_report), "hidden": causes(fit_report, "further")},
        "fuzz": {"command": shown(runs["fuzz"], folder), "exit": exits["fuzz"], "findings": findings(folder / "1k-found")},
    }


def causes(report: dict[str, Any], key: str = "groups") -> list[dict[str, Any]]:
    """A report's root causes (or, with ``key`` "further", the next differences they hide):
    signature, runs, the knobs that decide it and its cases."""
    return [{"signature": g["signature"], "runs": g["count"], "knobs": g.get("knobs", []),
             "cases": sorted(c.split("@")[0] for c in g.get("cases", []))} for g in report.get(key, [])]


def knob_values(rules: dict[str, Any]) -> dict[str, Any]:
    """The fitted profile's rules as `section.knob: value`."""
    return {f"{section}.{knob}": entry.get("value") if isinstance(entry, dict) else entry
            for section, knobs in sorted(rules.items()) if isinstance(knobs, dict) for knob, entry in sorted(knobs.items())}


def findings(folder: Path) -> list[dict[str, Any]]:
    """Each transcript fuzz saved: its file (below docs/results/) and what it shows."""
    out = []
    for path in sorted(folder.rglob("*.yaml")) if folder.is_dir() else []:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        out.append({"transcript": f"1k-found/{path.relative_to(folder).as_posix()}", "title": data.get("title", ""),
                    "description": data.get("description", "")})
    return out


def differences(expected: dict[str, Any], actual: dict[str, Any], where: str = "") -> list[str]:
    """Each place where two recorded results differ, named by its path (commands excepted)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = []
        for key in sorted(set(expected) | set(actual)):
            if key == "command":
                continue
            path = f"{where}.{key}" if where else key
            if key not in actual or key not in expected:
                out.append(f"{path}: {'missing' if key not in actual else 'new'} ({json.dumps(expected.get(key, actual.get(key)))[:200]})")
            else:
                out += differences(expected[key], actual[key], path)
        return out
    return [] if expected == actual else [f"{where}: recorded {json.dumps(expected)[:300]}, now {json.dumps(actual)[:300]}"]


def record(folder: Path, results: dict[str, Any]) -> None:
    """Write the results and the files the Results page links to into docs/results/."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    report = json.loads((folder / "1k-polish.json").read_text(encoding="utf-8"))
    report["command"] = list(ENGINE)
    report["cases"] = [{k: c[k] for k in KEPT_KEYS if k in c} for c in report["cases"]]
    (RESULTS_DIR / "1k-polish.json").write_text(json.dumps(report, ensure_ascii=False, separators=(",", ":")) + "\n",
                                               encoding="utf-8")
    shutil.copyfile(folder / "1k-fitted.yaml", RESULTS_DIR / "1k-fitted.yaml")
    found = RESULTS_DIR / "1k-found"
    shutil.rmtree(found, ignore_errors=True)
    if (folder / "1k-found").is_dir():
        shutil.copytree(folder / "1k-found", found)
    EXPECTED.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sitegen.engine_results", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="run the three and exit 1 when a result is not the recorded one")
    args = parser.parse_args(argv)
    if shutil.which(ENGINE[0]) is None or not (ROOT / "examples" / "adapters" / "1k" / "node_modules" / "1k").is_dir():
        print("the 1k adapter is not installed: run `npm ci` in examples/adapters/1k (Node 18 or later)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        results = run_all(folder)
        if not args.check:
            record(folder, results)
            print(f"wrote {EXPECTED.relative_to(ROOT)} and the files beside it")
            return 0
    if not EXPECTED.is_file():
        print(f"{EXPECTED.relative_to(ROOT)} is missing: run `python -m sitegen.engine_results`", file=sys.stderr)
        return 1
    changed = differences(json.loads(EXPECTED.read_text(encoding="utf-8")), results)
    for line in changed:
        print(line)
    if changed:
        print(f"the results of 1k changed ({len(changed)} differences): if that is right, run `python -m sitegen.engine_results` "
              "and commit docs/results/", file=sys.stderr)
        return 1
    print("the results of 1k are the recorded ones")
    return 0


if __name__ == "__main__":
    sys.exit(main())


# --- the Results page's section ----------------------------------------------------------------

# The whole-corpus polish reports shown beside 1k's: (report name in docs/results/, label).
BESIDE = (("reference-polish", "reference"), ("python-toy-polish", "Python toy adapter"), ("node-toy-polish", "Node toy adapter"),
          ("mutant-opener-may-pass-polish", "mutant opener-may-pass"), ("mutant-stop-at-ignored-polish", "mutant stop-at-ignored"),
          ("mutant-bid-step-5-everywhere-polish", "mutant bid-step-5-everywhere"),
          ("mutant-no-marriage-needed-polish", "mutant no-marriage-needed"), ("1k-polish", "1k 0.0.11 (npm)"))
COLUMNS = ("pass", "fail", "skipped", "error", "timeout")


def case_link(case_id: str) -> str:
    """A case id linked to its transcript page (hand-written cases have one; generated ones do not)."""
    from conformance.cli.report import markdown_text

    page = ROOT / "docs" / "cases" / f"{case_id}.md"
    return f"[{markdown_text(case_id)}](cases/{case_id}.md)" if page.is_file() else markdown_text(case_id)


def cause_line(cause: dict[str, Any]) -> str:
    """A root cause as a list item: its signature, its runs and its first cases, linked."""
    from conformance.cli.report import markdown_code

    shown_cases = ", ".join(case_link(c) for c in cause["cases"][:3])
    more = f" and {len(cause['cases']) - 3} more" if len(cause["cases"]) > 3 else ""
    runs = f"{cause['runs']} run" + ("s" if cause["runs"] != 1 else "")
    return f"- {markdown_code(cause['signature'])} ({runs}): {shown_cases}{more}"


def merged(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Causes of the same signature as one: their runs added, their cases together."""
    by_signature: dict[str, dict[str, Any]] = {}
    for cause in found:
        into = by_signature.setdefault(cause["signature"], {"signature": cause["signature"], "runs": 0, "cases": []})
        into["runs"] += cause["runs"]
        into["cases"] = sorted(set(into["cases"]) | set(cause["cases"]))
    return sorted(by_signature.values(), key=lambda cause: -int(cause["runs"]))


def page_section() -> list[str]:
    """Markdown lines: 1k beside the bundled implementations on the whole polish corpus, its fitted
    rules and what no rule explains, each linked to a transcript."""
    from conformance.cli.report import markdown_code, markdown_text, results_of

    if not EXPECTED.is_file():
        return []
    recorded = json.loads(EXPECTED.read_text(encoding="utf-8"))
    lines = ["## A published engine: 1k", "",
             "[`1k`](https://www.npmjs.com/package/1k) (version 0.0.11, MIT) is a Thousand engine published on npm. Its "
             "adapter, `examples/adapters/1k/adapter.js` on the JavaScript kit, plays every phase; it "
             "declares its own rules (`own`) and, unsupported, redeal claims and the `bolts` and `barrel` fields (the checks "
             "that need them count as partially checked). Polish is the profile closest to its rules. Every (case, profile) "
             "pair of the whole polish corpus, for each implementation:", "",
             "| implementation | " + " | ".join(COLUMNS) + " | partially checked |", "|---|" + "---:|" * (len(COLUMNS) + 1)]
    for name, label in BESIDE:
        path = RESULTS_DIR / f"{name}.json"
        if not path.is_file():
            continue
        report = json.loads(path.read_text(encoding="utf-8"))
        counts = {o: sum(1 for r in results_of(report) if r.get("outcome") == o) for o in COLUMNS}
        lines.append(f"| [{label}](results/{name}.json) | " + " | ".join(str(counts[o]) for o in COLUMNS)
                     + f" | {report.get('partially_checked', 0)} |")
    verify, fit, fuzz = recorded["verify"], recorded["fit"], recorded["fuzz"]
    lines += ["", f"`{verify['command']}`; then `{fit['command']}` "
              f"(the fitted profile: [1k-fitted.yaml](results/1k-fitted.yaml)) and `{fuzz['command']}`.", "",
              "### The rules it plays (fitted)", "",
              "The knob values of polish that `thousand fit` changed to reproduce the engine:", ""]
    lines += [f"- {markdown_code(f'{knob}: {json.dumps(value)}')}" for knob, value in fit["knobs"].items()] or ["- none"]
    lines += ["", "### What no knob value explains", "",
              "Differences `thousand fit` could not explain with any value it tried, each with the cases that show it:", ""]
    for cause in fit["unexplained"]:
        lines.append(cause_line(cause))
    if fit.get("hidden"):
        lines += ["", "and, in the same runs after their first difference:", ""]
        lines += [cause_line(cause) for cause in merged(fit["hidden"])]
    lines += ["", f"Under the fitted rules, `thousand fuzz` ({FUZZ_DEALS} random deals, seed {FUZZ_SEED}) found, "
              "each shrunk to a transcript:", ""]
    for found in fuzz["findings"]:
        lines.append(f"- [{markdown_text(found['title'] or found['transcript'])}](results/{found['transcript']})"
                     + (f": {markdown_text(found['description'])}" if found["description"] else ""))
    if not fuzz["findings"]:
        lines.append("- nothing new")
    lines += ["", "`python -m sitegen.engine_results --check` (run by CI) fails when any of these results changes.", ""]
    return lines
