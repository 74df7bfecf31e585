"""The dependency direction between the project's packages, and no branch on a profile name."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest
from tests.support.paths import ROOT

PACKAGES = ("spec", "variants", "reference_impl", "conformance", "sitegen", "mutants")

# package -> the project packages it may import
ALLOWED: dict[str, set[str]] = {
    "spec": set(),
    "variants": {"spec"},
    "reference_impl": {"spec", "variants"},
    "conformance": {"spec", "variants"},
    "sitegen": {"spec", "variants", "conformance"},
    "mutants": {"spec", "variants", "reference_impl"},
}
PROFILE_NAMES = ("gambler-club", "repino-2013", "polish-tournament", "skill-games", "classic", "polish")


def stamp(path: Path) -> int:
    """The version of a file, for the caches below (a probe file written by a test is a new version)."""
    stat = path.stat()
    return stat.st_mtime_ns * 1_000_003 + stat.st_size


@functools.cache
def _parsed(path: Path, version: int) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def parsed(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once per version of the file (the checks below walk every
    module of the project several times)."""
    return _parsed(path, stamp(path))


def imported_project_packages(path: Path) -> set[str]:
    """The project packages that a module imports (absolute imports only)."""
    return set(_imported_project_packages(path, stamp(path)))


@functools.cache  # a walk of every module's tree costs as much as the parse: once per version too
def _imported_project_packages(path: Path, version: int) -> frozenset[str]:
    tree = _parsed(path, version)
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module":
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                names = [node.args[0].value]
        found.update(name.split(".")[0] for name in names if name.split(".")[0] in PACKAGES)
    return frozenset(found)


def modules_of(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py")) if (ROOT / package).is_dir() else []


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_follow_the_dependency_direction(package: str) -> None:
    crossings = [
        f"{path.relative_to(ROOT)} imports {other}"
        for path in modules_of(package)
        for other in imported_project_packages(path)
        if other != package and other not in ALLOWED[package]
    ]
    assert not crossings, "imports that cross the architecture's lines:\n" + "\n".join(crossings)


def test_nothing_imports_the_site_generator() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for package in PACKAGES
        if package != "sitegen"
        for path in modules_of(package)
        if "sitegen" in imported_project_packages(path)
    ]
    assert not offenders


@pytest.mark.parametrize("package", ["reference_impl", "variants", "conformance", "mutants"])
def test_no_code_branches_on_a_profile_name(package: str) -> None:
    """Behaviour comes from knobs: no string literal in code names a bundled profile."""
    offenders = []
    for path in modules_of(package):
        tree = parsed(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in PROFILE_NAMES:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert not offenders, "profile names in code:\n" + "\n".join(offenders)


# The rooms of conformance/ and the rooms each may import. Imports go down only: cli on top,
# oracle and rulesets beside each other (neither imports the other), then harness, corpus, and
# terminal at the bottom. A module of conformance/ itself (cli aside) is a room of its own.
ROOMS: dict[str, set[str]] = {
    "terminal": set(),
    "corpus": {"terminal"},
    "harness": {"corpus", "terminal"},
    "oracle": {"harness", "corpus", "terminal"},
    "rulesets": {"harness", "corpus", "terminal"},
    "cli": {"oracle", "rulesets", "harness", "corpus", "terminal"},
    "kit": set(),  # the adapter kit runs in an engine's adapter: it needs nothing of the runner
}
# conformance/ keeps at most three modules of its own (issue 20): the package, terminal, nothing else.
OWN_MODULES = {"__init__.py", "terminal.py"}


def room_of(path: Path) -> str | None:
    """The room of a module of conformance/ (None for conformance/__init__.py)."""
    parts = path.relative_to(ROOT / "conformance").parts
    if len(parts) == 1:
        return None if parts[0] == "__init__.py" else parts[0].removesuffix(".py")
    return parts[0]


def imported_rooms(path: Path) -> set[str]:
    """The rooms of conformance/ that a module imports, absolute or relative."""
    return set(_imported_rooms(path, stamp(path)))


@functools.cache
def _imported_rooms(path: Path, version: int) -> frozenset[str]:
    tree = _parsed(path, version)
    here = path.relative_to(ROOT).with_suffix("").parts
    found: set[str] = set()
    for node in ast.walk(tree):
        modules: list[tuple[str, ...]] = []
        if isinstance(node, ast.Import):
            modules = [tuple(alias.name.split(".")) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = tuple((node.module or "").split(".")) if node.module else ()
            if node.level:
                package = here[:-1] if path.name != "__init__.py" else here
                base = package[: len(package) - node.level + 1] + base
            modules = [base + (alias.name,) for alias in node.names] if base == ("conformance",) else [base]
        found.update(module[1] for module in modules if len(module) > 1 and module[0] == "conformance")
    return frozenset(room.removesuffix(".py") for room in found)


def test_conformance_keeps_few_modules_of_its_own() -> None:
    own = {path.name for path in (ROOT / "conformance").glob("*.py")}
    assert own <= OWN_MODULES, f"modules outside a room: {sorted(own - OWN_MODULES)}"
    assert set(ROOMS) == {path.parent.name for path in (ROOT / "conformance").glob("*/__init__.py")} | {"terminal"}


def test_conformance_imports_only_go_down() -> None:
    crossings = [
        f"{path.relative_to(ROOT)} ({room}) imports conformance.{other}"
        for path in modules_of("conformance")
        if (room := room_of(path)) is not None
        for other in imported_rooms(path)
        if other != room and other not in ROOMS[room]
    ]
    assert not crossings, "imports between the rooms of conformance/ that go up or sideways:\n" + "\n".join(crossings)


@pytest.mark.parametrize("source, room, crossing", [
    ("from conformance.oracle import fit\n", "harness", "oracle"),
    ("from conformance.cli import main\n", "oracle", "cli"),
    ("from conformance.oracle.observe import Record\n", "rulesets", "oracle"),
    ("from ..oracle import observe\n", "corpus", "oracle"),
])
def test_the_room_checker_sees_an_upward_import(tmp_path: Path, source: str, room: str, crossing: str) -> None:
    """An import that goes up is found, whichever way it is written."""
    module = ROOT / "conformance" / room / "_upward_import_probe.py"
    module.write_text(source, encoding="utf-8")
    try:
        assert crossing in imported_rooms(module)
        assert crossing not in ROOMS[room]
        with pytest.raises(AssertionError, match="go up or sideways"):
            test_conformance_imports_only_go_down()
    finally:
        module.unlink()


def test_the_checker_sees_a_crossing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import reference_impl.engine\nfrom conformance import runner\n")
    assert imported_project_packages(bad) == {"reference_impl", "conformance"}
