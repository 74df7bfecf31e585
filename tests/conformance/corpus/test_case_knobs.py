"""Case metadata true by construction: a case's `knobs` name every knob that decides it.

For each hand-written case, each knob that can matter under the case's profiles is changed
alone to a few other allowed values and the case replayed in-process against the
reference (``conformance.oracle.knobs``); a knob whose change breaks a check of the case must be
listed in the case's ``knobs``. The whole corpus takes tens of seconds, so each case's
answer is kept in pytest's cache under a digest of everything it depends on (the case
file, the schema, the profiles, the reference's and the replay's source): an unchanged
case is not replayed again.
"""

from __future__ import annotations

import functools
import hashlib
import random
from pathlib import Path

import pytest
from tools.case_knobs import case_knobs, in_process

from conformance.oracle import knobs
from conformance.corpus.transcripts import CASES_DIR, GENERATED_DIR, Transcript, discover, load
from tests.support.paths import ROOT



@functools.cache
def _inputs_digest() -> str:
    """A digest of what every case's answer depends on besides the case itself."""
    digest = hashlib.sha256()
    folders = [ROOT / "reference_impl", ROOT / "variants", ROOT / "spec" / "profiles", ROOT / "spec" / "schema"]
    files = sorted(p for folder in folders for p in folder.rglob("*") if p.suffix in {".py", ".json", ".yaml"})
    for path in [*files, ROOT / "conformance" / "oracle" / "knobs.py", ROOT / "conformance" / "harness" / "runner.py", ROOT / "tools" / "case_knobs.py"]:
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _cases(root: Path) -> list[Transcript]:
    return [item for item in discover([root]) if isinstance(item, Transcript)]


def _deciding(request: pytest.FixtureRequest, case: Transcript, ask: knobs.Ask) -> list[str]:
    """The case's deciding knobs, from pytest's cache when nothing they depend on changed."""
    cache = getattr(request.config, "cache", None)  # None under -p no:cacheprovider
    key = "case_knobs/" + hashlib.sha256((_inputs_digest() + case.path.read_text(encoding="utf-8")).encode()).hexdigest()
    deciding: list[str] | None = cache.get(key, None) if cache is not None else None
    if deciding is None:
        deciding = case_knobs(case, ask)
        if cache is not None:
            cache.set(key, deciding)
    return deciding


@pytest.mark.slow
def test_every_hand_written_case_lists_the_knobs_that_decide_it(request: pytest.FixtureRequest) -> None:
    ask, wrong = in_process(), []
    for case in _cases(CASES_DIR):
        deciding = _deciding(request, case, ask)
        missing = [knob for knob in deciding if knob not in case.knobs]
        if missing:
            wrong.append(f"{case.id}: add {', '.join(missing)}")
    assert not wrong, f"{len(wrong)} cases do not list the knobs that decide them:\n" + "\n".join(wrong)


@pytest.mark.slow
def test_generated_transcripts_carry_their_computed_knobs(request: pytest.FixtureRequest) -> None:
    """A sample (the full check is ``python tools/case_knobs.py --check``, minutes long)."""
    paths = random.Random(11).sample(sorted(GENERATED_DIR.rglob("*.yaml")), 3)
    sample = [load(path, GENERATED_DIR) for path in paths]  # loading all 600 takes longer than checking 3
    ask = in_process()
    for case in sample:
        assert list(case.knobs) == _deciding(request, case, ask), case.id


def test_a_knob_whose_change_breaks_a_check_is_reported(request: pytest.FixtureRequest) -> None:
    """The replay fails when a knob's change breaks a check, and only then."""
    case = load(CASES_DIR / "classic" / "auction" / "no-ceiling-beyond-the-marriage.yaml", CASES_DIR)
    ask = in_process()
    document, _ = knobs._resolved("classic")
    assert knobs.outcome_holds(ask, "classic", document, case.deals, case.match) is True
    changed = {**document, "rules": {**document["rules"], "auction": {**document["rules"]["auction"], "ceiling": "marriages_held"}}}
    assert knobs.outcome_holds(ask, "classic", changed, case.deals, case.match) is False
    assert "auction.ceiling" in _deciding(request, case, ask)


def test_alternatives_come_from_the_schema() -> None:
    assert knobs.alternatives("auction", "ceiling", "none") == ["marriages_held"]
    assert knobs.alternatives("play", "must_beat", False) == [True]
    assert None in knobs.alternatives("auction", "marriage_needed_above", 120)
    assert {119, 121, 110, 130} <= set(knobs.alternatives("auction", "marriage_needed_above", 120))
    assert 120 in knobs.alternatives("auction", "stop_at", None)  # the value gambler-club uses
    assert knobs.alternatives("deal", "next_dealer", "left") == []  # one allowed value: nothing to change
    assert [] in knobs.alternatives("redeals", "rules", [{"condition": "four_nines", "when": "before_bidding", "by": "claim"}])
