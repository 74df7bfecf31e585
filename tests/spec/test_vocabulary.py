"""spec/vocabulary.py says what the schemas and DESIGN.md say: each type's values are the schema's
enum, in its order, and every enum of the schemas that the code names has its one type."""

from __future__ import annotations

import json
import re
import typing
from typing import Any

import pytest
from tests.support.paths import ROOT

from spec import SCHEMA_DIR, vocabulary
from variants.schema import knob_entry, rule_sections

DESIGN = (ROOT / "DESIGN.md").read_text(encoding="utf-8")


def schema_enums() -> dict[str, list[Any]]:
    """"section.knob" -> the enum of every choice knob of the profile schema (a redeal rule's fields
    as "redeals.rules[].FIELD")."""
    found: dict[str, list[Any]] = {}
    for section, knobs in rule_sections().items():
        for knob in knobs:
            value = knob_entry(section, knob)["properties"]["value"]
            if "enum" in value:
                found[f"{section}.{knob}"] = value["enum"]
            for field, item in value.get("items", {}).get("properties", {}).items():
                if "enum" in item:
                    found[f"{section}.{knob}[].{field}"] = item["enum"]
    return found


def test_every_choice_knob_has_one_type_with_the_schemas_values() -> None:
    enums = schema_enums()
    assert set(vocabulary.CHOICE_KNOBS) == set(enums)
    for knob, values in enums.items():
        assert list(typing.get_args(vocabulary.CHOICE_KNOBS[knob])) == values, knob


def test_the_phases_are_the_protocols() -> None:
    common = json.loads((SCHEMA_DIR / "protocol" / "common.json").read_text(encoding="utf-8"))
    assert [phase.value for phase in vocabulary.Phase] == common["$defs"]["phase"]["enum"]
    assert vocabulary.Phase.AUCTION == "auction" and "auction" in vocabulary.ENDED + (vocabulary.Phase.AUCTION,)
    assert set(vocabulary.ENDED) == {"deal_over", "match_over"}


def test_the_outcomes_are_the_reports() -> None:
    report = json.loads((SCHEMA_DIR / "report.schema.json").read_text(encoding="utf-8"))
    outcome = _find(report, "outcome")
    assert list(vocabulary.OUTCOMES) == outcome["enum"]


def _find(schema: Any, name: str) -> dict[str, Any]:
    """The first subschema of a property named ``name``, anywhere in a schema."""
    if isinstance(schema, dict):
        if isinstance(schema.get("properties"), dict) and name in schema["properties"]:
            found: dict[str, Any] = schema["properties"][name]
            return found
        for value in schema.values():
            try:
                return _find(value, name)
            except LookupError:
                pass
    if isinstance(schema, list):
        for value in schema:
            try:
                return _find(value, name)
            except LookupError:
                pass
    raise LookupError(name)


def test_the_cards_are_designs() -> None:
    """DESIGN.md: ranks A, 10, K, Q, J, 9 with card points 11, 10, 4, 3, 2, 0; suits S, C, D, H; the
    deck's card points add up to 120 (4 suits x 30)."""
    assert vocabulary.RANKS == ("A", "10", "K", "Q", "J", "9")
    assert [vocabulary.CARD_POINTS[rank] for rank in vocabulary.RANKS] == [11, 10, 4, 3, 2, 0]
    assert vocabulary.SUITS == ("S", "C", "D", "H")
    assert len(set(vocabulary.DECK)) == 24 and sum(vocabulary.CARD_POINTS[code[:-1]] for code in vocabulary.DECK) == 120
    assert vocabulary.DECK[:6] == ("AS", "10S", "KS", "QS", "JS", "9S")


@pytest.mark.parametrize("enum", [vocabulary.Phase, vocabulary.Outcome, vocabulary.ExitCode, vocabulary.Observation,
                                  vocabulary.ResidualVerdict])
def test_each_word_is_in_design(enum: Any) -> None:
    """A word of the vocabulary is DESIGN.md's first: each value is written there."""
    missing = [str(member.value) for member in enum if not re.search(rf"`{re.escape(str(member.value))}`", DESIGN)]
    assert not missing, f"{enum.__name__}: values DESIGN.md does not name: {missing}"


def test_the_exit_codes_are_those_verify_documents() -> None:
    from conformance.cli.verify import EXIT_CODES

    documented = {int(code) for code in re.findall(r"^  (\d)  ", EXIT_CODES, re.M)}
    assert documented == {int(code) for code in vocabulary.ExitCode}
    assert vocabulary.ExitCode.USAGE == 2 and vocabulary.ExitCode.PASSED == 0


def test_a_member_equals_its_protocol_string() -> None:
    """JSON read from an implementation compares with the types as it is (StrEnum)."""
    state = json.loads('{"phase": "match_over"}')
    assert state["phase"] == vocabulary.Phase.MATCH_OVER and state["phase"] in vocabulary.ENDED
    assert json.dumps({"phase": vocabulary.Phase.PLAY}) == '{"phase": "play"}'
