"""The next step a command prints: the engine author's path from failures to bugs.

``thousand verify`` shows failures; ``thousand fit`` says which rules the engine plays; then
``thousand fuzz`` under those rules, with what fit could not explain given as known, finds
the engine's bugs as one-deal transcripts. Each command ends by naming the next one in the
same words, written here once (verify and fit both call these).
"""

from __future__ import annotations

import shlex
from typing import Sequence


def base_name(profile: str) -> str:
    """A profile without its options: ``classic+four-aces`` -> ``classic`` (a fit starts from
    the profile, never from an option nobody selected)."""
    return profile.split("+")[0]


def fit_step(profile: str, command: Sequence[str]) -> str:
    """After failures under a bundled profile: which knob values does the engine play?"""
    name = base_name(profile)
    return (f"next: which rules does it play? thousand fit --profile {name} --output {name}-fitted.yaml "
            f"--report {name}-fit.json -- {shlex.join(command)} "
            f"(a house profile of the knob values that explain the failures, and what no value fit tried explains)")


def hunt_step(rules: str, report: str | None, command: Sequence[str]) -> str:
    """After a fit (or a verify --rules run): hunt the engine's bugs under its own rules, the
    differences already reported given as known."""
    known = f" --known {shlex.quote(report)}" if report else ""
    return (f"next: its bugs under these rules, each a one-deal transcript: thousand fuzz --rules {shlex.quote(rules)}"
            f"{known} --deals 300 --save findings -- {shlex.join(command)}")
