"""The protocol reference page: the hand-written overview, an example session, every schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from spec import PROTOCOL_SCHEMA_DIR

TEMPLATES = Path(__file__).resolve().parent / "templates"
SESSION_FILE = TEMPLATES / "protocol-session.jsonl"


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
    intro = (TEMPLATES / "protocol.md").read_text(encoding="utf-8").rstrip()
    return "\n".join([mark, "", intro, "", *session_lines(), *schema_lines()])
