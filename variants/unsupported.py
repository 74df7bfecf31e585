"""The table of variant axes (spec/unsupported.yaml): which knobs express each, or why none can."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from spec import SPEC_DIR
from variants.errors import ProfileError
from variants.loader import Position, load_yaml_file
from variants.schema import rule_sections

UNSUPPORTED_FILE = SPEC_DIR / "unsupported.yaml"


@dataclass(frozen=True)
class Axis:
    """One variant axis: the knobs that express it, or the reason it is not supported."""

    axis: str
    knobs: tuple[str, ...]
    reason: str

    @property
    def supported(self) -> bool:
        return bool(self.knobs)


def load_axes(path: Path = UNSUPPORTED_FILE) -> list[Axis]:
    """Read and check the axes table."""
    data, marks = load_yaml_file(path)
    file = str(path)
    if not isinstance(data, dict) or not isinstance(data.get("axes"), list):
        raise ProfileError(file, "expected a mapping with a list 'axes'", line=1, column=1)
    axes = []
    for index, item in enumerate(data["axes"]):
        axes.append(_axis(item, index, file, marks.of_value(("axes", index))))
    return axes


def _axis(item: object, index: int, file: str, pos: Position) -> Axis:
    def fail(message: str) -> ProfileError:
        return ProfileError(file, message, line=pos.line, column=pos.column, path=f"axes[{index}]")

    if not isinstance(item, dict) or not isinstance(item.get("axis"), str):
        raise fail("expected a mapping with 'axis'")
    knobs = item.get("knob", [])
    if not isinstance(knobs, list):
        raise fail("expected 'knob' to be a list of section.knob names")
    if knobs and (item.get("supported", True) is not True or "reason" in item):
        raise fail("an axis has either 'knob' or 'supported: false' with a 'reason'")
    if not knobs and (item.get("supported") is not False or not isinstance(item.get("reason"), str)):
        raise fail("an axis without 'knob' needs 'supported: false' and a 'reason'")
    sections = rule_sections()
    for name in knobs:
        section, _, knob = str(name).partition(".")
        if knob not in sections.get(section, []):
            raise fail(f"no such knob {name!r}")
    return Axis(item["axis"], tuple(str(k) for k in knobs), str(item.get("reason", "")))
