"""The bundled profiles: schema, validity, completeness, rulings, provenance and resolution."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from spec import PROFILES_DIR
from variants import ProfileError, ResolvedProfile, all_names, list_profiles, load_profile_file, resolve
from variants.schema import profile_schema, rule_sections

PROFILE_FILES = sorted(PROFILES_DIR.glob("*.yaml"))
ALL_NAMES = [info.name for info in list_profiles()]
ALL_COMBINATIONS = all_names()


def raw(path: Path) -> dict:  # type: ignore[type-arg]
    with path.open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)  # type: ignore[no-any-return]


def test_the_schema_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(profile_schema())
    assert profile_schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_the_schema_is_closed_and_every_knob_is_described() -> None:
    sections = profile_schema()["$defs"]["rules"]["properties"]
    assert set(sections) == {
        "deal", "auction", "talon", "giving_up", "play", "marriages", "scoring", "bolts",
        "barrel", "defender_lock", "dump", "redeals", "match_end",
    }
    for section, spec in sections.items():
        assert spec["additionalProperties"] is False, section
        for knob, entry in spec["properties"].items():
            assert entry["additionalProperties"] is False, f"{section}.{knob}"
            assert entry["description"], f"{section}.{knob}"
            assert "type" in entry["properties"]["value"], f"{section}.{knob}"


def test_the_six_profiles_are_bundled() -> None:
    assert sorted(ALL_NAMES) == sorted(
        ["gambler-club", "repino-2013", "classic", "skill-games", "polish", "polish-tournament"]
    )


@pytest.mark.parametrize("path", PROFILE_FILES, ids=lambda p: p.stem)
def test_every_bundled_file_validates(path: Path) -> None:
    resolved = load_profile_file(path)
    assert resolved.name == path.stem


@pytest.mark.parametrize("name", ALL_COMBINATIONS)
def test_every_profile_and_option_resolves(name: str) -> None:
    profile = resolve(name)
    assert profile.name == name
    for section, knobs in rule_sections().items():
        assert set(profile.rules[section]) == set(knobs)
        for knob in knobs:
            origin = profile.provenance[f"{section}.{knob}"]
            assert ("source" in origin) != ("ruling" in origin)
            assert origin["from"].split("+")[0] in ALL_NAMES


@pytest.mark.parametrize("path", [p for p in PROFILE_FILES if raw(p)["extends"] is None], ids=lambda p: p.stem)
def test_root_profiles_state_every_knob_explicitly(path: Path) -> None:
    rules = raw(path)["rules"]
    for section, knobs in rule_sections().items():
        assert sorted(rules[section]) == sorted(knobs), section


@pytest.mark.parametrize("path", PROFILE_FILES, ids=lambda p: p.stem)
def test_rulings_are_full_sentences(path: Path) -> None:
    data = raw(path)
    entries = [entry for knobs in data["rules"].values() for entry in knobs.values()]
    entries += [entry for option in data.get("options", {}).values() for knobs in option["rules"].values() for entry in knobs.values()]
    entries += data.get("rulings", [])
    for entry in entries:
        if "ruling" in entry:
            text = entry["ruling"]
            assert text[0].isupper() and text.rstrip('"').endswith("."), text


def test_open_questions_of_the_digest_have_rulings() -> None:
    """The digest's "Questions no source settles", each answered where it belongs."""
    classic = resolve("classic").provenance
    for knob in ("auction.ceiling", "giving_up.penalty_from", "barrel.max_occupants"):
        assert "ruling" in classic[knob], knob
    gambler = resolve("gambler-club")
    assert "ruling" in gambler.provenance["talon.contract_ceiling_hand"]
    assert "ruling" in gambler.provenance["giving_up.declarer_loses"]
    assert any("barrel.max_occupants" in ruling.get("knobs", ()) for ruling in gambler.rulings)
    skill = resolve("skill-games").provenance
    for knob in ("bolts.on_barrel", "barrel.give_up_deal_counts", "giving_up.half_bid_rounding"):
        assert "ruling" in skill[knob], knob
    polish = resolve("polish")
    assert "ruling" in polish.provenance["giving_up.moment"]
    assert "ruling" in polish.provenance["auction.raise"]
    topics = " ".join(ruling["topic"] for ruling in polish.rulings)
    assert "per player" in topics and "1000" in topics
    for name in ("gambler-club", "classic", "skill-games", "polish"):
        topics = [ruling["topic"] for ruling in resolve(name).rulings]
        assert "Both players after the opener pass" in topics, name
        assert "The state after a redeal" in topics, name
        assert "ruling" in resolve(name).provenance["redeals.rules"] or name != "gambler-club"


def test_repino_is_a_draft_with_an_unverified_first_lead() -> None:
    repino = resolve("repino-2013")
    assert repino.status == "draft"
    assert repino.provenance["play.first_lead"]["unverified"] is True
    assert repino.provenance["play.first_lead"]["from"] == "repino-2013"
    assert repino.provenance["auction.bid_step"]["from"] == "gambler-club"
    assert dict(repino.rules["barrel"]) == dict(resolve("gambler-club").rules["barrel"])


def test_a_child_overrides_per_knob() -> None:
    tournament = resolve("polish-tournament")
    assert tournament.value("defender_lock.mode") == "cap"
    assert tournament.provenance["defender_lock.mode"]["from"] == "polish-tournament"
    assert tournament.value("defender_lock.defender_max") == 990
    assert tournament.provenance["defender_lock.defender_max"]["from"] == "polish"


def test_options_apply_in_order_and_record_their_name() -> None:
    profile = resolve("classic+barrel-850+barrel-900")
    assert profile.value("barrel.threshold") == 900
    assert profile.provenance["barrel.threshold"]["from"] == "classic+barrel-900"
    assert profile.options == ("barrel-850", "barrel-900")
    assert resolve("classic+barrel-900+barrel-850").value("barrel.threshold") == 850


def test_the_document_is_json_and_round_trips() -> None:
    profile = resolve("classic+four-aces+weak-talon")
    document = profile.to_document()
    assert set(document) == {"profile", "title", "status", "rules", "provenance"}
    again = json.loads(json.dumps(document))
    assert again == document
    assert again["rules"]["marriages"]["four_aces"] == 200
    assert again["provenance"]["marriages.four_aces"] == {"source": "seed-001 Variants", "from": "classic+four-aces"}
    assert isinstance(again["rules"]["redeals"]["rules"], list)


def test_a_resolved_profile_is_frozen() -> None:
    profile = resolve("gambler-club")
    with pytest.raises(AttributeError):
        profile.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        profile.rules["auction"]["bid_step"] = 10  # type: ignore[index]
    with pytest.raises(TypeError):
        profile.rules["redeals"]["rules"][0]["points"] = 1  # type: ignore[index]
    assert resolve("gambler-club").value("auction.bid_step") == 5


def test_list_profiles_gives_titles_status_and_options() -> None:
    listing = {info.name: info for info in list_profiles()}
    assert listing["repino-2013"].status == "draft"
    assert listing["repino-2013"].extends == "gambler-club"
    assert [option.name for option in listing["skill-games"].options][:2] == ["no-barrel", "no-dump-truck"]
    assert [option.name for option in listing["classic"].options][:23] == [
        "four-aces", "half-bid-give-up", "no-zero-penalty", "barrel-850", "barrel-870", "barrel-900", "dump", "weak-talon",
        # the table agreements of the variant-axes work
        "opener-may-pass", "all-pass-redeal", "forced-dealer-bid", "pre-talon-cap", "barrel-min-bid", "reentry",
        "no-contract-step", "give-up-streak", "half-bid-rounded-down", "talon-to-declarer-only", "marriages-to-trick-6",
        "one-trump", "free-discard-under-trump", "overtrump-declarer-only", "strict-overtake",
    ]
    assert "highest-arrivals-stay" in [option.name for option in listing["repino-2013"].options]  # a parent's options
    assert all(info.title for info in listing.values())


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("clasic", "unknown profile 'clasic'; did you mean 'classic'?"),
        ("classic+no-such", "unknown option 'no-such' for profile 'classic'; available options: actual-total, all-pass-redeal"),
        ("polish+dump", "unknown option 'dump' for profile 'polish'; available options: none"),
        ("classic+dump+dump", "option 'dump' is given twice"),
        ("../classic", "invalid name part '../classic'"),
        ("classic+", "invalid name part ''"),
        ("", "expected a profile name"),
    ],
)
def test_bad_names_give_one_clear_error(name: str, message: str) -> None:
    with pytest.raises(ProfileError) as caught:
        resolve(name)
    assert message in str(caught.value)


def test_the_error_format() -> None:
    error = ProfileError("a.yaml", "expected an integer", line=3, column=7, path="rules.auction.bid_step")
    assert str(error) == "a.yaml:3:7: rules.auction.bid_step: expected an integer"
    assert str(ProfileError("a.yaml", "too large")) == "a.yaml: too large"


def test_a_resolved_profile_is_a_resolved_profile() -> None:
    assert isinstance(resolve("polish"), ResolvedProfile)
