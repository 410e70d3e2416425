"""The databases the data-model tests run against: SQLite in a temp folder, and a real
PostgreSQL server (Debian's ``postgresql``, which ``.ci/run`` installs) started here as a
throw-away cluster on 127.0.0.1 — skipped, with the reason printed, only where it cannot
start."""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

_START_SECONDS = 60
_counter = itertools.count(1)


def _pg_bin() -> Path | None:
    """The folder of initdb/pg_ctl: on PATH, or Debian's /usr/lib/postgresql/<v>/bin."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(versions[-1]).parent if versions else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _as_user() -> list[str]:
    """How to run the server's commands: as ourselves, or (as root, which initdb refuses)
    as ``postgres`` or ``nobody`` through runuser."""
    if os.geteuid() != 0:
        return []
    import pwd

    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return ["runuser", "-u", name, "--"]
    raise RuntimeError("running as root and there is no postgres or nobody user to run initdb")


class PostgresCluster:
    """A cluster in a temp folder, trusted on 127.0.0.1, stopped and removed at the end."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin = bin_dir
        self.folder = Path(tempfile.mkdtemp(prefix="agentcli-pg-"))
        self.data = self.folder / "data"
        self.port = _free_port()
        self.prefix = _as_user()

    def _run(self, *args: str) -> None:
        subprocess.run(
            [*self.prefix, *args], check=True, capture_output=True, timeout=_START_SECONDS
        )

    def start(self) -> None:
        if self.prefix:
            user = self.prefix[2]
            shutil.chown(self.folder, user=user)
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
        )
        options = f"-p {self.port} -h 127.0.0.1 -k {self.folder} -c fsync=off"
        self._run(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-w",
            "-t",
            "30",
            "-l",
            str(self.folder / "log"),
            "start",
        )

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    bin_dir = _pg_bin()
    if bin_dir is None:
        reason = "no PostgreSQL here (apt-get install postgresql): its data-model tests are skipped"
        print(f"\nnote: {reason}")
        pytest.skip(reason)
    cluster = PostgresCluster(bin_dir)
    try:
        cluster.start()
    except (subprocess.SubprocessError, OSError, RuntimeError) as error:
        detail = getattr(error, "stderr", b"") or b""
        reason = f"PostgreSQL did not start: {error} {detail.decode(errors='replace')[-300:]}"
        print(f"\nnote: {reason}")
        cluster.stop()
        pytest.skip(reason)
    yield cluster
    cluster.stop()


def _new_database(cluster: PostgresCluster) -> str:
    import psycopg

    name = f"t{os.getpid()}_{next(_counter)}"
    with psycopg.connect(cluster.url(), autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return name


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database of each kind, as AGENTCLI_DATABASE_URL names it (SQLite: the
    state folder's file, which is the default)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'data.sqlite3'}"
        return
    cluster: PostgresCluster = request.getfixturevalue("postgres_cluster")
    name = _new_database(cluster)
    yield cluster.url(name)
    import psycopg

    with psycopg.connect(cluster.url(), autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
