"""A real PostgreSQL server for the tests, from Debian's packages (``apt-get install postgresql``).

A fresh cluster in a temporary folder, on a free port and a unix socket in that folder, with
settings for speed (no fsync: nothing here must survive a power cut). As root the server runs
as the ``postgres`` user (it refuses to run as root). Each test asks for a schema of its own
(:meth:`PostgresServer.fresh_url`), which is much cheaper than a database of its own.
initdb runs once per machine (per PostgreSQL and settings, under a lock: xdist's workers each start
a server): every server starts from a copy of that cluster, which is several times cheaper.
"""

from __future__ import annotations

import fcntl
import glob
import hashlib
import itertools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

PASSWORD = "right-password"
USER = "noughts"
INITDB_OPTIONS = ("-U", USER, "-E", "UTF8", "--no-locale", "--no-sync", "--auth-local=trust",
                  "--auth-host=scram-sha-256")


def _bin_dir() -> Path:
    """The newest installed PostgreSQL's programs (Debian keeps them out of PATH)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    which = shutil.which("postgres")
    if which:
        return Path(which).resolve().parent
    raise RuntimeError("PostgreSQL is not installed: run scripts/system-packages.sh (apt-get install postgresql)")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class PostgresServer:
    def __init__(self) -> None:
        temporary = tempfile.gettempdir()  # tmpfs for the tests (conftest.py), if short enough for a socket's path
        self.folder = Path(tempfile.mkdtemp(prefix="noughts-pg-", dir=temporary if len(temporary) < 40 else "/tmp"))
        self.data = self.folder / "data"
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0
        self._schemas = itertools.count(1)
        self._as: dict[str, object] = {}
        self.fsync = False  # tests: nothing must survive a power cut; a benchmark turns it on
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root
            account = pwd.getpwnam("postgres" if _has_user("postgres") else "nobody")
            os.chown(self.folder, account.pw_uid, account.pw_gid)
            self._as = {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}

    def start(self) -> PostgresServer:
        bin_dir = _bin_dir()
        subprocess.run(["cp", "-a", self._template(bin_dir), self.data],
                       check=True, capture_output=True, **self._as)  # type: ignore[call-overload]
        for _attempt in range(5):  # another program may take the free port first
            self.port = free_port()
            log = open(self.folder / "log", "ab")  # noqa: SIM115 - the server writes it until stopped
            self.process = subprocess.Popen(
                [bin_dir / "postgres", "-D", self.data, "-p", str(self.port), "-k", self.folder,
                 "-c", "listen_addresses=127.0.0.1", *(() if self.fsync else ("-c", "fsync=off", "-c",
                 "synchronous_commit=off", "-c", "full_page_writes=off")), "-c", "shared_buffers=16MB",
                 "-c", "max_connections=100",
                 "-c", "autovacuum=off", "-c", "logging_collector=off"],
                stdout=log, stderr=log, **self._as)  # type: ignore[call-overload]
            log.close()
            if self._ready():
                return self
            self.process.wait(timeout=10)
        raise RuntimeError(f"PostgreSQL did not start: {(self.folder / 'log').read_text()[-2000:]}")

    def _template(self, bin_dir: Path) -> Path:
        """A fresh cluster made by initdb, kept (in the temporary folder) for every server to copy."""
        key = hashlib.sha256(repr((str(bin_dir.resolve()), INITDB_OPTIONS, PASSWORD, self._as)).encode())
        template = Path(tempfile.gettempdir()) / f"noughts-pg-template-{key.hexdigest()[:16]}"
        with open(f"{template}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one initdb; the other processes wait for it
            if not (template / "made").exists():  # "made" is written last: a half-made one is made again
                shutil.rmtree(template, ignore_errors=True)
                template.mkdir()
                if "user" in self._as:
                    os.chown(template, int(self._as["user"]), int(self._as["group"]))  # type: ignore[call-overload]
                password_file = template / "password"
                password_file.write_text(PASSWORD + "\n")
                os.chmod(password_file, 0o644)
                subprocess.run([bin_dir / "initdb", "-D", template / "data", "--pwfile", password_file,
                                *INITDB_OPTIONS], check=True, capture_output=True, **self._as)  # type: ignore[call-overload]
                (template / "made").touch()
        return template / "data"

    def _ready(self) -> bool:
        import psycopg

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                return False
            try:
                psycopg.connect(self.url(), connect_timeout=2).close()
                return True
            except psycopg.OperationalError:
                time.sleep(0.05)
        return False

    def url(self, database: str = "postgres", **options: str) -> str:
        """A URL reaching the server through its unix socket (trusted: no password)."""
        extra = "".join(f"&{key}={quote(value, safe='')}" for key, value in options.items())
        return f"postgresql://{USER}@/{database}?host={quote(str(self.folder), safe='')}&port={self.port}{extra}"

    def tcp_url(self, password: str = PASSWORD, database: str = "postgres") -> str:
        return f"postgresql://{USER}:{quote(password, safe='')}@127.0.0.1:{self.port}/{database}"

    def fresh_url(self) -> str:
        """A URL whose tables live in a new, empty schema of their own."""
        import psycopg

        name = f"test_{next(self._schemas)}"
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f"CREATE SCHEMA {name}")
        return self.url(options=f"-c search_path={name}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # fast shutdown: end the sessions, stop at once
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
