"""Marks every test by its folder, so `-m unit` / `-m integration` / `-m e2e` select by kind."""

from __future__ import annotations

from pathlib import Path

import pytest

_KINDS = ("unit", "integration", "e2e")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        parts = Path(str(item.fspath)).parts
        for kind in _KINDS:
            if kind in parts:
                item.add_marker(getattr(pytest.mark, kind))
