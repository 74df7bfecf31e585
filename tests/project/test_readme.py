"""The README a newcomer follows on a fresh clone: a virtual environment, commands in an order
that works, every tool it names installed or declared."""

from __future__ import annotations

import argparse
import re
import tomllib

from conformance.cli import build_parser
from tests.support.paths import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_advises_a_virtual_environment_first() -> None:
    assert README.index("python3 -m venv") < README.index("pip install")


def test_a_house_file_is_created_before_a_command_uses_it() -> None:
    created = README.index("thousand new my-house")
    for use in re.finditer(r"thousand \w+ \.?/?my-house\.yaml", README):
        assert use.start() > created, use.group(0)


def test_every_thousand_subcommand_the_readme_names_exists() -> None:
    actions = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    known = {name for action in actions for name in action.choices}
    named = set(re.findall(r"^\s+thousand ([a-z]+)", README, flags=re.M))
    assert named and named <= known, named - known


def test_sitegen_is_installed_and_mkdocs_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "sitegen" in project["tool"]["setuptools"]["packages"]
    assert any(dep.startswith("mkdocs-material") for dep in project["project"]["optional-dependencies"]["docs"])
    assert "pip install -e '.[docs]' && mkdocs serve" in README
