"""How the suite is run: the tests marked slow start first. make test spreads the test files over
every core (pytest-xdist, a file to a worker, in this order), so no worker is left running a long
one alone at the end."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pg_server import PostgresServer


def pytest_configure(config: pytest.Config) -> None:
    use_memory_for_temporary_files()


def use_memory_for_temporary_files(folder: str = "/dev/shm", room: int = 2 << 30) -> None:
    """Temporary files (tmp_path, and those of the processes the tests start) go to tmpfs when it
    has ``room``: each SQLite commit waits for fsync on a disk, which on a busy machine made the
    store's tests 2.5 times slower; nothing here must survive a power cut. $TMPDIR, if set, wins."""
    import tempfile

    if os.environ.get("TMPDIR") or not os.access(folder, os.W_OK):
        return
    stats = os.statvfs(folder)
    if stats.f_bavail * stats.f_frsize >= room:
        os.environ["TMPDIR"] = folder  # inherited by xdist's workers and every child process
        tempfile.tempdir = None  # worked out again, from $TMPDIR


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: otherwise as collected



@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A real PostgreSQL server (Debian's), started once per test process when a test asks for it."""
    from pg_server import PostgresServer

    server = PostgresServer().start()
    yield server
    server.stop()
