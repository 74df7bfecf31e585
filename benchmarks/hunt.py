"""The hunt matrix of issue 48: fit, then ``fuzz --known``, on hostile doubles with injected bugs.

Not a CI test: it prints a table (``tests/conformance/oracle/test_hunt_matrix.py`` runs one row).

``python benchmarks/hunt.py [--deals 60] [--seed 1] [--keep DIR] [ROW ...]``
    For each row, a double (``python -m mutants.serve`` with ``--rules``, ``--declare``, a
    ``--mode`` and mistakes from the catalogue) is fitted on a few cases (``thousand fit -k``),
    then hunted with ``thousand fuzz --rules FITTED --known FIT_REPORT --save DIR``. Each
    finding must be one of the row's injected bugs: its signature one that bug shows, and its
    saved transcript, replayed alone by the command fuzz printed, fails against the double,
    passes against the reference and passes against the same double without the injected
    bugs (else it is a **false alarm**: the mode or the fitted rules made it). Each injected bug
    must be found, or be a cause of fit's residual that ``--known`` passed over. Then
    ``thousand verify --rules FITTED --report`` on the same cases, and the same hunt with that
    report as ``--known``: the same causes passed over, the same findings. Exit 1 when a row
    misses one of these.

Rows: (a1) skips every give_up it is asked to apply (an action kind), and adds 10 points to
the last trick (a rule no knob expresses); (a2) the same bug, and skips every legal set (a
query kind); (b) names the second of two applicable refusal reasons first, under house rules
(no bug: nothing to find); (c) house rules (a 300 maximum, declared as classic) and a trick
given to the highest card of the suit led even when trumped; (d) leaves nobody to act between
tricks; (e) refuses a pass its own legal set offers.

The table at e6f1890 (2 cores shared with other work; fit on classic/auction/*):

    row                                 fit residual  fuzz findings  expected  reproduced  false alarms  verify-known same       seconds
    a1 skips give_up; last-trick bonus  0             2              1         2/2         0             yes                     75
    a2 skips legal; last-trick bonus    0             0              1         0/2         0             verify checked nothing  48
    b second applicable reason, house   0             0              0         0/0         0             yes                     18
    c house; trump does not win         0             1              1         1/1         0             yes                     31
    d leaves nobody to act              0             1              1         1/1         0             yes                     20
    e refuses its own pass              2             0              1         0/0         0             yes                     24

Row a2 fails: fuzz finds the bonus (two signatures of it), but ``thousand verify --rules``
re-expects every step's legal set (conformance/oracle/house.py) and skips a whole case at a
legal set answered ``skipped`` (docs/protocol.md), so the printed command cannot show it and
fuzz lists both as not reproducible. Under ``--profile`` the saved transcript asks no legal
set and reproduces (tests/conformance/oracle/test_fuzz_findings.py). In row b the double
answered 37 refusals with the second reason (34 marriage_not_on_lead); in row e fit's residual
holds the refused pass (likely a bug), and fuzz --known passes it over.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.harness import findings  # noqa: E402

THOUSAND = (sys.executable, "-m", "conformance.cli")
SERVE = (sys.executable, "-m", "mutants.serve")
REFERENCE = (sys.executable, "-m", "reference_impl.server")
HOUSE = """\
profile: table
title: classic with a 300 maximum bid
status: draft
summary: 'The classic rules with every bid and contract capped at 300.'
extends: classic
sources: {}
rules:
  auction:
    max_bid: {value: 300, ruling: 'The double caps every bid and contract at 300.'}
"""
# what a trick's outcome decides: who won it, its points, who leads next, the deal's score
TRICKS = r"trick_won|tricks_won|card_points|to_act|deal_scored|deal_result|scores|hands|legal\[play\]|refused\[play\]"


@dataclass(frozen=True)
class Row:
    """A double: its mode and mistakes, whether it plays the house rules (declared as classic),
    the injected bugs with the signatures each may show, and whether the mode is one of them."""

    name: str
    what: str
    mode: str | None
    mistakes: tuple[str, ...]
    house: bool
    bugs: tuple[tuple[str, str], ...]  # (bug, a regular expression its signatures match)
    mode_is_bug: bool = False
    cases: str = "classic/auction/*"


ROWS = (
    Row("a1", "skips give_up; last-trick bonus", "skip-give-up", ("last-trick-bonus",), False,
        (("last-trick-bonus", TRICKS),)),
    Row("a2", "skips legal; last-trick bonus", "skip-legal", ("last-trick-bonus",), False,
        (("last-trick-bonus", TRICKS),)),
    Row("b", "second applicable reason, house", "second-reason", (), True, ()),
    Row("c", "house; trump does not win", None, ("trump-does-not-win",), True, (("trump-does-not-win", TRICKS),)),
    Row("d", "leaves nobody to act", "nobody-to-act", (), False, (("nobody-to-act", r"to_act"),), mode_is_bug=True),
    Row("e", "refuses its own pass", "refuses-its-pass", (), False, (("refuses-its-pass", r"refus"),), mode_is_bug=True),
)


def double(row: Row, house: Path, with_bugs: bool = True) -> list[str]:
    """The row's double; without its bugs, the same double with only what is no bug of the row."""
    rules = ["--rules", str(house), "--declare", "classic"] if row.house else []
    mode = row.mode if row.mode and (with_bugs or not row.mode_is_bug) else None
    mistakes = list(row.mistakes) if with_bugs else []
    if not mode and not mistakes:
        return [*REFERENCE, *rules]
    return [*SERVE, *rules, *(["--mode", mode] if mode else []), *mistakes]


def thousand(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*THOUSAND, *arguments], capture_output=True, text=True, check=False)


@dataclass
class Hunt:
    findings: dict[str, str]  # case id -> signature
    unproven: int  # findings whose transcript did not reproduce (fuzz lists them apart)
    known: set[str]  # the known causes fuzz passed over
    replay: list[str]  # the printed command, split
    out: str


def hunt(fitted: Path, known: Path, command: list[str], deals: int, seed: str, save: Path | None) -> Hunt:
    report = known.with_name(known.stem + "-fuzz.json")
    saving = ["--save", str(save)] if save is not None else []
    done = thousand("fuzz", "--rules", str(fitted), "--known", str(known), "--deals", str(deals), "--seed", seed,
                    "--max-findings", "5", *saving, "--report", str(report), "--", *command)
    if done.returncode not in (0, 1):
        raise SystemExit(f"fuzz failed ({done.returncode}): {done.stdout[-500:]} {done.stderr[-500:]}")
    data = json.loads(report.read_text(encoding="utf-8"))
    found = {case["id"]: case["mismatches"][0]["signature"] for case in data["cases"]}
    lines = done.stdout.splitlines()
    start = next((n for n, line in enumerate(lines) if line.startswith("known root causes (")), len(lines))
    passed = {line.split(" x ", 1)[1] for line in lines[start + 1:] if re.match(r"  [0-9]+ x ", line)}
    printed = next((line for line in lines if line.startswith("next: replay the findings: thousand ")), "")
    replay = shlex.split(printed.split("thousand ", 1)[1]) if printed else []
    unproven = re.search(r"^([0-9]+) not reproducible", done.stdout, re.MULTILINE)
    return Hunt(found, int(unproven.group(1)) if unproven else 0, passed, replay, done.stdout)


def replayed(replay: list[str], case_id: str, command: list[str]) -> int:
    """The printed command on one saved finding, against ``command``: verify's exit code."""
    cut = replay.index("--")
    return thousand(*replay[:cut], "-k", case_id, "--", *command).returncode


def run_row(row: Row, folder: Path, deals: int, seed: str) -> tuple[list[str], bool]:
    started = time.monotonic()
    house = folder / "table.yaml"
    house.write_text(HOUSE, encoding="utf-8")
    command = double(row, house)
    fitted, fit_report = folder / "fitted.yaml", folder / "fit.json"
    done = thousand("fit", "--profile", "classic", "-k", row.cases, "--output", str(fitted), "--report", str(fit_report),
                    "--", *command)
    if done.returncode not in (0, 1) or not fitted.exists():
        raise SystemExit(f"row {row.name}: fit failed ({done.returncode}): {done.stderr[-500:]}")
    residual = len(findings.Known.read(fit_report).causes)
    found = hunt(fitted, fit_report, command, deals, seed, folder / "found")
    problems: list[str] = []
    reproduced = alarms = 0
    bugs_met = set()
    for case_id, signature in found.findings.items():
        bug = next((name for name, pattern in row.bugs if re.search(pattern, signature)), None)
        fails = replayed(found.replay, case_id, command) == 1
        passes = replayed(found.replay, case_id, list(REFERENCE)) == 0
        clean = replayed(found.replay, case_id, double(row, house, with_bugs=False)) == 0
        reproduced += fails and passes
        if bug is None or not clean:
            alarms += 1
            problems.append(f"false alarm {signature} ({case_id}: {'no injected bug shows it' if bug is None else 'the double without its bugs fails it too'})")
        else:
            bugs_met.add(bug)
        if not (fails and passes):
            problems.append(f"{case_id} does not reproduce under the printed command")
    if found.unproven:
        problems.append(f"{found.unproven} not reproducible: " + "; ".join(
            line.strip() for line in found.out.splitlines() if line.startswith("  - "))[:400])
    for name, pattern in row.bugs:
        if name not in bugs_met and not any(re.search(pattern, cause) for cause in found.known):
            problems.append(f"{name} neither found nor passed over as known")
    verify_report = folder / "verify.json"
    done = thousand("verify", "--rules", str(fitted), "-k", row.cases, "--report", str(verify_report), "--", *command)
    if done.returncode not in (0, 1, 5):
        raise SystemExit(f"row {row.name}: verify failed ({done.returncode}): {done.stderr[-500:]}")
    # exit 5: verify skipped every case (a double that skips every legal set): its report knows nothing
    checked = done.returncode != 5
    again = hunt(fitted, verify_report, command, deals, seed, None) if checked else found
    same = sorted(again.findings.values()) == sorted(found.findings.values()) and again.known == found.known
    if not same:
        problems.append(f"with verify's report as --known: findings {sorted(again.findings.values())}, known "
                        f"{sorted(again.known)}; with fit's: {sorted(found.findings.values())}, {sorted(found.known)}")
    cells = [f"{row.name} {row.what}", str(residual), str(len(found.findings)), str(len(row.bugs)),
             f"{reproduced}/{len(found.findings) + found.unproven}", str(alarms),
             ("yes" if same else "no") if checked else "verify checked nothing",
             f"{time.monotonic() - started:.0f}"]
    return cells + [f"; ".join(problems)], not problems


HEADERS = ["row", "fit residual", "fuzz findings", "expected", "reproduced", "false alarms", "verify-known same",
           "seconds", "problems"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=60)
    parser.add_argument("--seed", default="1")
    parser.add_argument("--keep", type=Path, help="keep each row's files (fitted rules, reports, findings) here")
    parser.add_argument("rows", nargs="*", help="row letters (default: all)")
    args = parser.parse_args()
    rows = [row for row in ROWS if not args.rows or row.name in args.rows]
    table, ok = [], True
    with tempfile.TemporaryDirectory(prefix="thousand-hunt-") as scratch:
        for row in rows:
            folder = (args.keep or Path(scratch)) / row.name
            folder.mkdir(parents=True, exist_ok=True)
            cells, passed = run_row(row, folder, args.deals, args.seed)
            table.append(cells)
            ok &= passed
            print("  ".join(cells), file=sys.stderr, flush=True)
    widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(HEADERS)]
    print(f"thousand fuzz --deals {args.deals} --seed {args.seed} --max-findings 5 after thousand fit -k, per row:")
    for cells in [HEADERS, *table]:
        print("  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
