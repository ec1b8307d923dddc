"""The packages both ``pyproject.toml`` files declare match the folders that ship (issue 38).

A folder below a package that holds files is importable (a namespace package): if ``packages``
leaves it out, setuptools still ships its data through the parent's glob but warns about it, a
screen per folder, at every install (``make run`` printed twenty). And a data file that no
``package-data`` pattern names is silently left out of the wheel. Both are checked here on the
source tree, without building anything.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from fnmatch import fnmatch
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
PROJECTS = (ROOT, ROOT / "clients" / "python")
SKIPPED = {"__pycache__", "build", "node_modules"}
IMPLICIT_DATA = ("*.pyi", "py.typed")
"""What setuptools ships from every package without a ``package-data`` pattern."""


def _setuptools(project: Path) -> dict[str, object]:
    config = tomllib.loads((project / "pyproject.toml").read_text("utf-8"))
    table: dict[str, object] = config["tool"]["setuptools"]
    return table


def _package_dirs(project: Path) -> dict[str, Path]:
    """Every declared package → its folder (``package-dir`` maps the top-level names)."""
    table = _setuptools(project)
    mapping: dict[str, str] = table.get("package-dir", {})  # type: ignore[assignment]
    packages: list[str] = table["packages"]  # type: ignore[assignment]
    dirs = {}
    for package in packages:
        top, *rest = package.split(".")
        dirs[package] = project.joinpath(mapping.get(top, top), *rest)
    return dirs


def _folders_with_files(root: Path) -> Iterator[Path]:
    for folder in sorted(p for p in root.rglob("*") if p.is_dir()):
        parts = folder.relative_to(root).parts
        if SKIPPED & set(parts) or any(part.endswith(".egg-info") for part in parts):
            continue
        if any(child.is_file() for child in folder.iterdir()):
            yield folder


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: str(p.relative_to(ROOT)) or ".")
def test_every_folder_that_ships_files_is_a_declared_package(project: Path) -> None:
    dirs = _package_dirs(project)
    assert all(folder.is_dir() for folder in dirs.values()), "a declared package has no folder"
    declared = set(dirs.values())
    tops = {folder for name, folder in dirs.items() if "." not in name}
    missing = [
        str(folder.relative_to(ROOT))
        for top in tops
        for folder in _folders_with_files(top)
        if folder not in declared
        and all(part.isidentifier() for part in folder.relative_to(top).parts)
    ]
    assert not missing, f"add these folders to [tool.setuptools] packages: {missing}"


@pytest.mark.parametrize("project", PROJECTS, ids=lambda p: str(p.relative_to(ROOT)) or ".")
def test_every_data_file_is_named_by_a_package_data_pattern(project: Path) -> None:
    table = _setuptools(project)
    data: dict[str, list[str]] = table.get("package-data", {})  # type: ignore[assignment]
    left_out = []
    for package, folder in _package_dirs(project).items():
        patterns = [*IMPLICIT_DATA, *data.get("*", []), *data.get(package, [])]
        for path in sorted(p for p in folder.iterdir() if p.is_file()):
            if path.suffix != ".py" and not any(fnmatch(path.name, pat) for pat in patterns):
                left_out.append(str(path.relative_to(ROOT)))
    assert not left_out, f"not in the wheel (no [tool.setuptools.package-data] pattern): {left_out}"
