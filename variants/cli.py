"""The ``validate``, ``show`` and ``profiles`` subcommands of ``thousand``."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from typing import Any

from spec.vocabulary import ExitCode
from variants.errors import ProfileError
from variants.model import ResolvedProfile, thaw
from variants.resolve import list_profiles, load_profile_file, resolve


def register(subparsers: Any) -> None:
    """Add the subcommands to the ``thousand`` parser."""
    validate = subparsers.add_parser(
        "validate", help="validate profile files",
        description="Check profile files (bundled or your house rules) against the schema and the rules the "
                    "schema cannot express: the name matches the file, every citation is 'SOURCE-KEY section' "
                    "with a listed key, a root profile states every knob, and the knobs agree with each other. "
                    "Prints 'ok PATH' or every error of the file (each with file, line, column and field; the "
                    "schema first, then the file's own rules, then the knobs' agreement); exits 1 if any file is invalid.")
    validate.add_argument("paths", nargs="+", metavar="PATH", help="profile YAML files")
    validate.set_defaults(func=run_validate)

    show = subparsers.add_parser(
        "show", help="show a resolved profile with the source or ruling of each value",
        description="Print a profile with its parents and options applied: every knob's value, grouped by "
                    "rule section, with the source or ruling it rests on and the profile that set it. PROFILE "
                    "is a bundled name (classic, polish+...), or a file path such as ./house.yaml.")
    show.add_argument("profile", metavar="PROFILE[+OPTION...]")
    show.add_argument("--json", action="store_true", help="print the resolved document as JSON")
    show.set_defaults(func=run_show)

    profiles = subparsers.add_parser(
        "profiles", help="list the bundled profiles and their options",
        description="List the bundled profiles: name, status (stable or draft), title, the profile each "
                    "extends, and each named option (use it as NAME+OPTION).")
    profiles.set_defaults(func=run_profiles)


def run_validate(args: argparse.Namespace) -> int:
    """Print 'ok PATH' or the error for each file; exit 1 when any is invalid."""
    failed = False
    for path in args.paths:
        try:
            load_profile_file(path)
        except ProfileError as error:
            failed = True
            problems = error.all()
            for problem in problems:
                print(str(problem))
            if len(problems) > 1:
                print(f"{path}: {len(problems)} errors")
        else:
            print(f"ok {path}")
    return ExitCode.FAILED if failed else ExitCode.PASSED


def run_show(args: argparse.Namespace) -> int:
    try:
        profile = resolve(args.profile)
    except ProfileError as error:
        print(str(error), file=sys.stderr)
        return ExitCode.FAILED
    if args.json:
        print(json.dumps(profile.to_document(), indent=2, ensure_ascii=False))
    else:
        print("\n".join(format_profile(profile)))
    return ExitCode.PASSED


def format_profile(profile: ResolvedProfile) -> list[str]:
    """The profile as text: each value with its source or ruling, grouped by section."""
    lines = [f"{profile.name}: {profile.title}"]
    if profile.status == "draft":
        lines.append("DRAFT: some values rest on incomplete sources; check them before relying on them.")
    for section, knobs in profile.rules.items():
        lines.append("")
        lines.append(f"[{section}]")
        for knob, value in knobs.items():
            origin = profile.provenance[f"{section}.{knob}"]
            lines.append(f"  {knob} = {json.dumps(thaw(value), ensure_ascii=False)}")
            lines.extend(_origin_lines(origin, profile.profile))
    if profile.rulings:
        lines += ["", "[rulings]"]
        for ruling in profile.rulings:
            lines.append(f"  {ruling['topic']}")
            lines.extend(textwrap.wrap(str(ruling["ruling"]), width=100, initial_indent="      ", subsequent_indent="      "))
    lines += ["", "[sources]"]
    for key, record in profile.sources.items():
        where = record.get("file") or record.get("url") or ""
        lines.append(f"  {key}: {record['title']}" + (f" ({where})" if where else ""))
    return lines


def _origin_lines(origin: Any, own: str) -> list[str]:
    if "source" in origin:
        text = f"source: {origin['source']}"
    else:
        text = f"ruling: {origin['ruling']}"
    notes = []
    if origin.get("unverified"):
        notes.append("UNVERIFIED")
    if origin.get("from") != own:
        notes.append(f"from {origin.get('from')}")
    if notes:
        text += f" [{', '.join(notes)}]"
    return textwrap.wrap(text, width=100, initial_indent="      ", subsequent_indent="        ")


def run_profiles(args: argparse.Namespace) -> int:
    try:
        listing = list_profiles()
    except ProfileError as error:
        print(str(error), file=sys.stderr)
        return ExitCode.FAILED
    width = max((len(info.name) for info in listing), default=0)
    for info in listing:
        parent = f" (extends {info.extends})" if info.extends else ""
        print(f"{info.name:<{width}}  {info.status:<6}  {info.title}{parent}")
        for option in info.options:
            print(f"{'':<{width}}    +{option.name}: {option.title}")
    return ExitCode.PASSED
