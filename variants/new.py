"""``thousand new NAME --extends PROFILE``: write a starter house-rules file that validates.

The file changes nothing yet: it inherits every value of PROFILE, and its comments show
how to change one (a value with its source or ruling), where the knob names are listed,
and the commands to check the result. The command refuses to overwrite a file.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from spec.vocabulary import ExitCode
from variants.errors import ProfileError
from variants.resolve import load_profile_file, resolve

_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")

TEMPLATE = """\
# House rules: {name}. Written by `thousand new {name} --extends {parent}`.
# Every value not listed under `rules` is {parent}'s ({parent_title}).
# Check this file with:
#   thousand validate {file}
#   thousand show {file}              # every value, with its source or ruling
#   thousand compare {parent} {file}  # what you changed
profile: {name}                     # must equal the file name without .yaml
title: {title}
status: draft                       # 'stable' once every value rests on a source or a ruling
summary: >-
  Our table's rules: {parent}'s, with the changes below. Say in a sentence or two what
  differs and why (at least 20 characters).
extends: {parent}
sources:
  # Each key names a document you cite as "KEY section" in a `source:` below.
  table: {{title: "What our table agreed"}}
rules: {{}}
# To change a rule, replace `rules: {{}}` above with the sections you change, for example:
# rules:
#   barrel:
#     threshold: {{value: 900, source: "table barrel"}}
#   marriages:
#     four_aces: {{value: 200, ruling: "We count four aces like a marriage worth 200; no source we have says so."}}
# Each value carries either `source: "KEY section"` (KEY listed under sources) or
# `ruling:` (your decision and its reason, at least 20 characters). Every knob, what it
# means, its allowed values and which profile sets what: the "Knob reference" page of the
# rules site (docs/knobs.md). Write null (not `off`) where a knob allows no limit.
"""


def starter_text(name: str, parent: str, folder: Path | None = None) -> str:
    """The starter file's text for a house profile ``name`` extending ``parent`` (a house
    file ``parent``.yaml in ``folder``, else a bundled profile)."""
    title = name.replace("-", " ").capitalize()
    beside = folder / f"{parent}.yaml" if folder is not None else None
    parent_title = (load_profile_file(beside) if beside is not None and beside.is_file() else resolve(parent)).title
    return TEMPLATE.format(name=name, parent=parent, parent_title=parent_title, file=f"{name}.yaml",
                           title=title if len(title) >= 3 else f"House rules {name}")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "new", help="write a starter house-rules file extending a profile",
        description="Write NAME.yaml: a house-rules profile that extends PROFILE and changes nothing yet, "
                    "with comments on how to change a rule. It validates as written. An existing file "
                    "is never overwritten.")
    parser.add_argument("name", metavar="NAME", help="the house profile's name: lower case, digits and '-'")
    parser.add_argument("--extends", required=True, metavar="PROFILE", help="the bundled profile to start from")
    parser.add_argument("--dir", type=Path, default=Path("."), metavar="DIR", help="where to write NAME.yaml (default: here)")
    parser.set_defaults(func=run_new)


def run_new(args: argparse.Namespace) -> int:
    if not _NAME.fullmatch(args.name):
        print(f"thousand new: {args.name!r} is not a profile name: use lower case letters, digits and '-'", file=sys.stderr)
        return ExitCode.USAGE
    problem = _parent_problem(args.extends, args.dir)
    if problem:
        print(f"thousand new: --extends {args.extends!r}: {problem}", file=sys.stderr)
        return ExitCode.USAGE
    path = args.dir / f"{args.name}.yaml"
    if path.exists():
        print(f"thousand new: {path} exists; not overwritten (choose another NAME or --dir)", file=sys.stderr)
        return ExitCode.FAILED
    try:
        text = starter_text(args.name, args.extends, args.dir)
    except ProfileError as error:
        print(f"thousand new: --extends: {error}", file=sys.stderr)
        return ExitCode.USAGE
    try:
        with path.open("x", encoding="utf-8") as out:  # "x": fails rather than overwrite
            out.write(text)
    except OSError as exc:
        print(f"thousand new: cannot write {path}: {exc.strerror}", file=sys.stderr)
        return ExitCode.FAILED
    try:
        load_profile_file(path)  # the starter must validate as written
    except ProfileError as error:  # never leave a file that does not validate
        path.unlink(missing_ok=True)
        print(f"thousand new: the starter file would not validate ({error}); not written", file=sys.stderr)
        return ExitCode.FAILED
    print(f"wrote {path} (extends {args.extends}); next: thousand validate {path}")
    return ExitCode.PASSED


def _parent_problem(parent: str, folder: Path) -> str | None:
    """Why ``extends: parent`` could not stand in a file written to ``folder``, or None. It
    resolves as ``extends`` does: a profile file of that name next to the new file, else a
    bundled profile; options and paths are not profile names."""
    if "+" in parent:
        return ("extends names a profile, not an option: extend the profile and set the option's knobs under "
                "`rules` (thousand show PROFILE+OPTION lists them)")
    if "/" in parent or parent.endswith((".yaml", ".yml")):
        return (f"extends names a profile, not a file: write the new file next to it (--dir) and give its "
                f"name, e.g. --extends {Path(parent).stem}")
    if not _NAME.fullmatch(parent):
        return "not a profile name: lower case letters, digits and '-'"
    return None
