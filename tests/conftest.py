"""How the suite is run: the tests marked slow start first. make test spreads the test files over
every core (pytest-xdist, a file to a worker, in this order), so no worker is left running a long
one alone at the end."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: otherwise as collected

