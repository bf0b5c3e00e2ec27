"""How the suite is run: the tests marked slow start first. make test spreads the test files over
every core (pytest-xdist, a file to a worker, in this order), so no worker is left running a long
one alone at the end."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pg_server import PostgresServer


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: otherwise as collected



@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A real PostgreSQL server (Debian's), started once per test process when a test asks for it."""
    from pg_server import PostgresServer

    server = PostgresServer().start()
    yield server
    server.stop()
