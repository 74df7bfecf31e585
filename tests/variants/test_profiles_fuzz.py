"""Random mutations of valid profiles: validation returns a resolved profile or raises
ProfileError, never anything else."""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spec import PROFILES_DIR
from variants import ProfileError, ResolvedProfile, load_profile_file

BASES = {name: yaml.safe_load((PROFILES_DIR / f"{name}.yaml").read_text(encoding="utf-8"))
         for name in ("gambler-club", "classic", "skill-games", "polish-tournament")}

ODD_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True), st.text(max_size=20),
    st.just([]), st.just({}), st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into the document (mapping keys and list indices)."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths_of(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths_of(item, prefix + (index,))
    return found


def parent_of(document: Any, path: tuple[Any, ...]) -> Any:
    for step in path[:-1]:
        document = document[step]
    return document


def mutate(document: dict[str, Any], data: st.DataObject) -> None:
    paths = paths_of(document)
    path = data.draw(st.sampled_from(paths))
    parent, last = parent_of(document, path), path[-1]
    operation = data.draw(st.sampled_from(["delete", "retype", "insert", "swap"]))
    if operation == "delete":
        del parent[last]
    elif operation == "retype":
        parent[last] = data.draw(ODD_VALUES)
    elif operation == "insert" and isinstance(parent, dict):
        parent[data.draw(st.text(min_size=1, max_size=12))] = data.draw(ODD_VALUES)
    elif operation == "swap":
        other = data.draw(st.sampled_from(paths))
        other_parent = parent_of(document, other)
        try:
            a, b = parent[last], other_parent[other[-1]]
            parent[last], other_parent[other[-1]] = copy.deepcopy(b), copy.deepcopy(a)
        except (KeyError, IndexError, TypeError):
            pass  # the first swap changed the structure under the second path


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(BASES)), data=st.data(), rounds=st.integers(1, 3))
def test_mutated_profiles_give_a_profile_or_a_profile_error(name: str, data: st.DataObject, rounds: int) -> None:
    document = copy.deepcopy(BASES[name])
    for _ in range(rounds):
        mutate(document, data)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{name}.yaml"
        path.write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
        try:
            result = load_profile_file(path)
        except ProfileError as error:
            assert error.message and str(error).startswith(str(error.file))
        else:
            assert isinstance(result, ResolvedProfile)
            assert set(result.rules) == set(BASES["gambler-club"]["rules"])


def test_an_unmutated_copy_loads() -> None:
    """The harness itself: a plain dump of each base profile is valid."""
    for name, document in BASES.items():
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / f"{name}.yaml"
            path.write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
            assert load_profile_file(path).name == name
