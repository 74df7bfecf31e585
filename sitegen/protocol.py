"""The protocol reference page: the hand-written overview, the state and event tables
(from spec/protocol.yaml), an example session, every schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from spec import PROTOCOL_SCHEMA_DIR, SPEC_DIR

TEMPLATES = Path(__file__).resolve().parent / "templates"
SESSION_FILE = TEMPLATES / "protocol-session.jsonl"
REFERENCE_FILE = SPEC_DIR / "protocol.yaml"
STATE_MARK = "<!-- STATE FIELDS: generated from spec/protocol.yaml -->"
EVENTS_MARK = "<!-- EVENTS: generated from spec/protocol.yaml -->"


def protocol_reference() -> dict[str, Any]:
    """spec/protocol.yaml: the phases, the state fields and the events, with their meanings."""
    data: dict[str, Any] = yaml.safe_load(REFERENCE_FILE.read_text(encoding="utf-8"))
    return data


def phase_groups(field: dict[str, Any]) -> list[tuple[list[str], str]]:
    """A state field's values: (the phases, what the field holds there)."""
    return [([phase.strip() for phase in key.split(",")], text) for key, text in field["phases"].items()]


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def state_lines(reference: dict[str, Any]) -> list[str]:
    lines = ["## The observable state", "",
             "The `state` reply carries every field below, at every phase; transcripts compare the fields "
             "they list. The last column says what the field holds in each phase "
             f"({', '.join('`' + p + '`' for p in reference['phases'])}). A seat is 0, 1 or 2; "
             "card lists are sorted by suit (S, C, D, H) then rank (A, 10, K, Q, J, 9), except `trick` "
             "(play order).", "",
             "| field | type | meaning | at each phase |", "|---|---|---|---|"]
    for field in reference["state_fields"]:
        phases = "<br>".join(f"**{', '.join(names)}**: {_cell(text)}" for names, text in phase_groups(field))
        lines.append(f"| `{field['name']}` | {_cell(field['type'])} | {_cell(field['meaning'])} | {phases} |")
    return lines + ["", "Legal actions may come in any order: the runner compares them as sets.", ""]


def events_lines(reference: dict[str, Any]) -> list[str]:
    lines = ["## Events", "",
             "`deal` and `apply` return the events of what happened, as JSON objects with a `type` and the "
             "fields below (exactly these). Transcripts list the events they expect, in order, and the runner "
             "finds them in order among the events returned, so other events may come between.", "",
             "| event | fields | when |", "|---|---|---|"]
    for event in reference["events"]:
        fields = "<br>".join(f"`{name}`: {_cell(text)}" for name, text in event["fields"].items())
        lines.append(f"| `{event['type']}` | {fields} | {_cell(event['when'])} |")
    lines += ["", "### Order", "",
              "Events of one `apply` come in the order things happen. A lead that declares a marriage gives "
              "`marriage_declared` then `trump_changed`; the third card of a trick gives `trick_won` (then "
              "`trump_changed` when a marriage's trump takes effect from the next trick). The last trick, or a "
              "give-up, also ends the deal, and its scoring comes in this order:", "",
              "1. `give_up` (a give-up deal only), then the totals: nothing is emitted for them;",
              "2. `bolt` and `bolt_penalty`, defender by defender;",
              "3. `barrel_left` for the occupants whose visit ends (`won`, `failed_contract`, `attempts_exhausted`);",
              "4. `barrel_entered` for the arrivals, and `barrel_left` (`knocked_off`, `fell_back`) when the "
              "barrel overflows;",
              "5. `score_reset`;", "6. `dump`;",
              "7. `deal_scored`, whose `deltas` are the deal's whole change and `scores` the final totals;",
              "8. `match_won` or `match_drawn` when the match ends.", "",
              "A redeal emits `redeal` only: nothing is scored.", ""]
    return lines


def example_session() -> list[dict[str, Any]]:
    """The example exchanges: each line has `request` and the reference's `reply`."""
    return [json.loads(line) for line in SESSION_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]


def session_lines() -> list[str]:
    lines = ["## An example session", "",
             "A gambler-club deal, dealer seat 2: the opener (seat 0) may not pass, the bids stop at 120 "
             "before going higher, and the talon (J♠ 9♠ 9♥, 2 points) lets the declarer claim a redeal "
             "under this profile's weak-talon rule, so the next phase is `claim`. "
             "`>` is the runner, `<` the implementation. A test replays this session against the "
             "reference implementation, so it stays true.", "", "```text"]
    for exchange in example_session():
        lines.append("> " + json.dumps(exchange["request"], ensure_ascii=False))
        lines.append("< " + json.dumps(exchange["reply"], ensure_ascii=False))
    return lines + ["```", ""]


def schema_lines() -> list[str]:
    lines = ["## Schemas", "", "Download them to validate your implementation's messages in your own tests.", ""]
    for path in sorted(PROTOCOL_SCHEMA_DIR.glob("*.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        title = schema.get("title", path.stem)
        lines += [f"### {path.name}", "", f"{title}. {schema.get('description', '')}".strip(), "",
                  f"[Download](schemas/protocol/{path.name})", "", "<details><summary>Schema</summary>", "",
                  "```json", json.dumps(schema, indent=2, ensure_ascii=False), "```", "", "</details>", ""]
    return lines


def protocol_page(mark: str) -> str:
    reference = protocol_reference()
    intro = (TEMPLATES / "protocol.md").read_text(encoding="utf-8").rstrip()
    intro = intro.replace(STATE_MARK, "\n".join(state_lines(reference)).rstrip())
    intro = intro.replace(EVENTS_MARK, "\n".join(events_lines(reference)).rstrip())
    return "\n".join([mark, "", intro, "", *session_lines(), *schema_lines()])
