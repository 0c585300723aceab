"""A throw-away PostgreSQL server for the tests: one cluster per session, a fresh database per test.

initdb refuses to run as root, so as root (CI) the cluster belongs to an unprivileged
user (`postgres` from Debian's package, else one created here). It listens on a unix
socket in a temp dir only: no TCP port to collide with anything. In CI (`CI` set) a
missing server or driver is a failure, never a skip: .ci/run installs both.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    import psycopg

UNPRIVILEGED = ("postgres", "wfops-pg")


@dataclass(frozen=True)
class Cluster:
    bin: Path
    socket_dir: Path
    run_as: list[str]  # prefix running a command as the cluster's owner
    data: Path

    def url(self, database: str, *, user: str = "postgres", password: str | None = None) -> str:
        secret = f":{password}" if password is not None else ""
        return f"postgresql://{user}{secret}@/{database}?host={self.socket_dir}"

    def admin(self) -> psycopg.Connection:
        """An autocommit connection to the maintenance database, as the superuser."""
        import psycopg

        return psycopg.connect(self.url("postgres"), autocommit=True)


def _absent(why: str) -> None:
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        pytest.fail(f"{why}; CI must run the PostgreSQL tests (.ci/run installs the server)")
    pytest.skip(why)


def _server_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _owner() -> tuple[list[str], int | None, int | None]:
    """(command prefix, uid, gid) to run the server as; the current user unless root."""
    if os.geteuid() != 0:
        return [], None, None
    for name in UNPRIVILEGED:
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return ["runuser", "-u", name, "--"], entry.pw_uid, entry.pw_gid
    subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                    UNPRIVILEGED[-1]], check=True, capture_output=True)
    entry = pwd.getpwnam(UNPRIVILEGED[-1])
    return ["runuser", "-u", UNPRIVILEGED[-1], "--"], entry.pw_uid, entry.pw_gid


def _run(cmd: list[str]) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")


class NoServer(Exception):
    """No PostgreSQL server binaries or no psycopg here."""


@contextmanager
def throwaway_cluster() -> Iterator[Cluster]:
    """initdb + pg_ctl start in a temp dir, on a unix socket only; stopped and removed after.
    (Also used by bench/bench_postgres.py.)"""
    bin_dir = _server_bin()
    if bin_dir is None:
        raise NoServer("PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    try:
        import psycopg  # noqa: F401
    except ImportError as exc:
        raise NoServer(f"psycopg 3 cannot be loaded ({exc})") from None
    prefix, uid, gid = _owner()
    # A short path: a unix socket's path is limited to ~107 bytes.
    base = Path(tempfile.mkdtemp(prefix="wfops-pg-"))
    data, sock, log = base / "data", base / "sock", base / "server.log"
    sock.mkdir()
    if uid is not None:
        for path in (base, sock):
            os.chown(path, uid, gid if gid is not None else -1)
    try:
        _run([*prefix, str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
              "-E", "UTF8", "--locale=C", "--no-sync"])
        # fsync off: a test server's durability is not under test (the client's is).
        _run([*prefix, str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60", "-o",
              f"-k {sock} -c listen_addresses='' -c fsync=off -c max_connections=200", "start"])
    except BaseException:
        shutil.rmtree(base, ignore_errors=True)
        raise
    try:
        yield Cluster(bin_dir, sock, prefix, data)
    finally:
        subprocess.run([*prefix, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True, timeout=60)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    try:
        with throwaway_cluster() as cluster:
            yield cluster
    except NoServer as exc:
        _absent(str(exc))
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        pytest.fail(f"cannot start a PostgreSQL test cluster: {exc}")


_numbers = itertools.count(1)


def fresh_database(cluster: Cluster) -> str:
    name = f"t{os.getpid()}_{next(_numbers)}"
    with cluster.admin() as conn:
        conn.execute(f"CREATE DATABASE {name}".encode())
    return name


def drop_database(cluster: Cluster, name: str) -> None:
    with cluster.admin() as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)".encode())


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> Iterator[str]:
    """The URL of a fresh, empty database on the session's cluster."""
    name = fresh_database(pg_cluster)
    yield pg_cluster.url(name)
    drop_database(pg_cluster, name)
