"""The tests are a map of the code: each test folder mirrors a package, and a test module imports
no other test module (shared helpers live in tests/support, fake implementations in
tests/fake_impls)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from tests.support.paths import ROOT, TESTS

# The folders of tests/ that hold no tests of a package: helpers, fakes, data, and the project-wide
# checks (architecture, typing, adapters, this file).
NOT_MIRRORS = {"support", "fake_impls", "fixtures", "project"}
# The only test packages a test module may import from.
SHARED = ("tests.support", "tests.fake_impls")


def python_files() -> list[Path]:
    return sorted(path for path in TESTS.rglob("*.py") if "__pycache__" not in path.parts)


def imported_test_modules(source: str, module: str) -> list[str]:
    """The modules of tests/ that a module (a path under the root) imports, absolute or relative,
    written out in full."""
    tree = ast.parse(source, filename=module)
    package = Path(module).with_suffix("").parts[:-1]
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module.split(".") if node.module else []
            if node.level:
                base = list(package[: len(package) - node.level + 1]) + base
            module = ".".join(base)
            # "from tests.x import y" may import a module y or a name y of tests.x: the full dotted name
            # covers both, as a shared package's prefix does
            found += [f"{module}.{alias.name}" for alias in node.names]
    # a bare "from test_server import X" reaches another test module through sys.path: counted too
    return [name for name in found
            if name == "tests" or name.startswith("tests.") or name.split(".")[0].startswith(("test_", "conftest"))]


def is_shared(module: str) -> bool:
    return any(module == shared or module.startswith(shared + ".") for shared in SHARED)


def test_no_test_module_imports_another_test_module() -> None:
    crossings = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in python_files()
        if not is_shared(".".join(path.relative_to(ROOT).with_suffix("").parts))
        for module in imported_test_modules(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
        if not is_shared(module)
    ]
    assert not crossings, "test modules importing other test modules (move the helper to tests/support):\n" + \
        "\n".join(crossings)


def test_shared_helpers_are_not_named_like_tests() -> None:
    """pytest would collect a helper named test_*.py as a test module, and a reader would too."""
    named_like_tests = [str(path.relative_to(ROOT)) for shared in SHARED
                        for path in (ROOT / shared.replace(".", "/")).rglob("test_*.py")]
    assert not named_like_tests


def test_each_test_folder_mirrors_a_package() -> None:
    """tests/a/b/ holds the tests of the package a/b/ (a folder of the repository with an __init__.py)."""
    orphans = []
    for folder in sorted(path.parent for path in TESTS.rglob("__init__.py")):
        parts = folder.relative_to(TESTS).parts
        if not parts or parts[0] in NOT_MIRRORS:
            continue
        if not (ROOT.joinpath(*parts) / "__init__.py").is_file():
            orphans.append(str(folder.relative_to(ROOT)))
    assert not orphans, "test folders that mirror no package: " + ", ".join(orphans)


def test_test_modules_sit_in_a_mirrored_folder() -> None:
    """No test module directly in tests/ or in a folder without an __init__.py (it would escape the map)."""
    stray = [str(path.relative_to(ROOT)) for path in TESTS.rglob("test_*.py")
             if path.parent == TESTS or not (path.parent / "__init__.py").is_file()]
    assert not stray


@pytest.mark.parametrize("source, module, expected", [
    ("from tests.conformance.oracle import test_fit\n", "tests/conformance/oracle/test_x.py",
     ["tests.conformance.oracle.test_fit"]),
    ("import tests.reference_impl.test_engine\n", "tests/variants/test_x.py", ["tests.reference_impl.test_engine"]),
    ("from .test_engine import deal\n", "tests/reference_impl/test_x.py", ["tests.reference_impl.test_engine.deal"]),
    ("from ..support.engine import deal\n", "tests/reference_impl/test_x.py", ["tests.support.engine.deal"]),
    ("from tests.support import engine\n", "tests/reference_impl/test_x.py", ["tests.support.engine"]),
    ("from test_server import HANDS\n", "tests/reference_impl/test_x.py", ["test_server.HANDS"]),
])
def test_the_checker_reads_every_way_of_importing(source: str, module: str, expected: list[str]) -> None:
    """The import checker sees absolute, relative and from-package imports, so the check above can fail."""
    assert imported_test_modules(source, module) == expected
    assert is_shared(expected[0]) == expected[0].startswith("tests.support")
