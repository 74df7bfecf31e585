"""House rules as an oracle: the corpus's cases re-expected by the reference under a house file.

``thousand verify --rules FILE -- CMD`` checks an implementation against rules no bundled
profile holds. The cases that apply (those of every profile FILE takes values from) are
first played by the reference under FILE (``thousand-reference --rules FILE``, a
subprocess like every implementation); each case's actions are kept, and every expected
value becomes the reference's: the legal set before each action, the refusal or the
events, the whole state after it. Where the house rules leave the case's path (an action
the transcript's profile allows is refused, or the other way round) the re-expected case
ends with that action. The result is an ordinary list of transcripts, run by the ordinary
runner, so house verification has the same reports, root causes, exit codes and signals.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Sequence

from conformance.oracle import observe
from conformance.harness.runner import REFERENCE_COMMAND, Result, Settings, plan, run_jobs
from conformance.corpus.transcripts import CaseBug, Transcript, discover

if TYPE_CHECKING:
    from variants import ResolvedProfile


def rules_family(house: ResolvedProfile) -> set[str]:
    """The profile names whose cases apply to these rules: the house profile itself, the
    profiles it extends (even when it sets every knob itself) and every profile (or
    profile+option) it takes values from."""
    return ({house.name, *house.lineage} | {str(origin["from"]) for origin in house.provenance.values()})


def applicable(cases: Sequence[Transcript | CaseBug], family: set[str], skip: Sequence[str] = ()) -> list[Transcript]:
    """The valid cases of the profiles the house rules take values from, minus ``--skip``."""
    return [c for c in cases if isinstance(c, Transcript) and family & set(c.profiles)
            and not any(fnmatch.fnmatchcase(c.id, p) for p in skip)]


def re_expected(case: Transcript, record: observe.CaseRecord, name: str, rules_file: str) -> Transcript | CaseBug:
    """The case with the oracle's values, under the house rules' name; a broken oracle
    record is a case bug (the reference itself could not play it)."""
    if record.broken:
        return CaseBug(case.id, case.path, f"the reference under {rules_file} could not play this case: {record.ended}",
                       case.title, (name,), case.knobs)
    by_deal: dict[int, list[observe.StepRecord]] = {}
    for step in record.steps:
        by_deal.setdefault(step.deal, []).append(step)
    deals = [_deal(original, by_deal[number]) for number, original in enumerate(case.deals, start=1) if number in by_deal]
    note = (f"Expected values re-computed by the reference under {rules_file} from the actions of {case.id}"
            + ("; the house rules leave the case's path at its last action." if record.ended == "left_transcript" else "."))
    return replace(case, profiles=(name,), deals=tuple(deals), description=note)


def _deal(original: dict[str, Any], steps: list[observe.StepRecord]) -> dict[str, Any]:
    dealt, played = steps[0], steps[1:]
    deal: dict[str, Any] = {key: original[key] for key in ("dealer", "hands", "talon")}
    if dealt.reply.events:
        deal["events"] = list(dealt.reply.events)
    before = dealt.state
    deal["steps"] = []
    for step in played:
        entry: dict[str, Any] = {"action": step.action, "legal": list(step.legal or ())}
        if isinstance(before.get("to_act"), int):
            entry["player"] = before["to_act"]
        if step.reply.accepted:
            entry["events"] = list(step.reply.events)
            entry["expect"] = dict(step.state)
            before = step.state
        else:
            entry["refused"] = step.reply.refused()
        deal["steps"].append(entry)
    if not played:  # the state the deal left (a claim window, a redeal) is the only one to check
        deal["expect"] = dict(dealt.state)
    return deal


def oracle_cases(cases: Sequence[Transcript], name: str, document: dict[str, Any], rules_file: str,
                 jobs: int, timeout: float, progress: Callable[[int, int], None] | None = None) -> list[Transcript | CaseBug]:
    """Every case re-expected by the reference under the house rules, in the given order."""
    oracle = [*REFERENCE_COMMAND, "--rules", rules_file]
    pool = observe.Pool(oracle, jobs, timeout, batch=True)
    done = [0]

    def tick() -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], len(cases))

    try:
        records = pool.map(cases, lambda side, case: side.observe(case, name, document), tick)
    finally:
        pool.close()
    found = {record.case_id: record for record in records}
    return [re_expected(case, found[case.id], name, rules_file) for case in cases]


def base_profile(rules: str) -> str | None:
    """The profile a house file (``FILE.yaml`` or ``FILE.yaml+option``) extends, or None for a
    bundled name: what a match names to an implementation that declares a list without the
    house profile's own name."""
    if ".yaml" not in rules:
        return None
    from variants.loader import read_document

    head, _, _ = rules.partition(".yaml")
    try:
        data, _ = read_document(Path(head + ".yaml"))
    except Exception:  # the file was resolved already; a read failing now leaves no base to name
        return None
    extends = data.get("extends") if isinstance(data, dict) else None
    return extends if isinstance(extends, str) else None


def fallbacks(rules: str | None, chosen: str | None) -> tuple[str, ...]:
    """The names to try, in order, when a declared list lacks the profile: ``--as``, else the base."""
    if chosen:
        return (chosen,)
    base = base_profile(rules) if rules else None
    return (base,) if base else ()


def verified(folder: Path, command: Sequence[str], rules: str | None, timeout: float,
             as_profile: str | None = None, oracle_timeout: float | None = None) -> list[Result]:
    """The results of ``thousand verify [--rules RULES] --cases FOLDER -- COMMAND`` (``--profile``
    runs name no rules: each case plays under its own profiles), by the steps that command
    takes: the transcripts read, under house rules re-expected by the reference under them
    (``oracle_cases``, waiting ``oracle_timeout`` for each reply, ``timeout`` by default), then
    run by the ordinary runner with the same documents and names. What fuzz proves a finding
    with, so that its printed command shows what fuzz saw."""
    import variants

    cases: list[Transcript | CaseBug] = list(discover([folder]))
    documents: dict[str, dict[str, Any]] = {}
    fallback: dict[str, tuple[str, ...]] = {}
    if rules is not None:
        house = variants.resolve(rules)
        chosen = applicable(cases, rules_family(house))
        cases = oracle_cases(chosen, house.name, house.to_document(), rules, 1, oracle_timeout or timeout)
        documents[house.name] = house.to_document()
        fallback[house.name] = fallbacks(rules, as_profile)

    def document(profile: str) -> dict[str, Any]:
        if profile not in documents:
            documents[profile] = variants.resolve(profile).to_document()
        return documents[profile]

    settings = Settings(command, timeout, False, document, fallbacks=fallback)
    state = run_jobs(plan(cases), settings)
    return [state.results[i] for i in sorted(state.results)]
