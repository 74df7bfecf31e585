"""The dependency direction between the project's packages, and no branch on a profile name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
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


def imported_project_packages(path: Path) -> set[str]:
    """The project packages that a module imports (absolute imports only)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
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
    return found


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
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in PROFILE_NAMES:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert not offenders, "profile names in code:\n" + "\n".join(offenders)


def test_the_checker_sees_a_crossing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import reference_impl.engine\nfrom conformance import runner\n")
    assert imported_project_packages(bad) == {"reference_impl", "conformance"}
