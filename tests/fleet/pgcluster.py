"""A PostgreSQL for the fleet tests: VTCODE_TEST_DATABASE_URL, else a throwaway cluster.

The throwaway cluster is initdb'd from the machine's PostgreSQL binaries into a temporary
directory and listens on a unix socket there and a free TCP port on 127.0.0.1. As root the
server must run as `postgres` (it refuses root), so the directory is handed to that user and
the binaries run through `runuser`. Without binaries the tests skip, except in CI (CI=true),
where a skipped fleet test would be a silently missing guarantee: there they fail.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

BIN_DIRS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)


def _bin(name: str) -> str | None:
    for d in BIN_DIRS:
        if (d / name).exists():
            return str(d / name)
    return shutil.which(name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Cluster:
    """A running throwaway cluster: start/stop (to test a database restart) and its URL."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = root / "data"
        self.port = _free_port()
        self.as_root = os.geteuid() == 0

    def _run(self, *args: str) -> None:
        cmd = ["runuser", "-u", "postgres", "--", *args] if self.as_root else list(args)
        subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def init(self) -> None:
        initdb = _bin("initdb")
        assert initdb is not None
        if self.as_root:
            shutil.chown(self.root, "postgres", "postgres")
        self._run(initdb, "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync")

    def start(self) -> None:
        pg_ctl = _bin("pg_ctl")
        assert pg_ctl is not None
        opts = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
            " -c max_connections=200"
        )
        self._run(
            pg_ctl, "-D", str(self.data), "-o", opts, "-l", str(self.root / "log"), "-w", "start"
        )

    def stop(self, mode: str = "fast") -> None:
        pg_ctl = _bin("pg_ctl")
        assert pg_ctl is not None
        self._run(pg_ctl, "-D", str(self.data), "-m", mode, "-w", "stop")

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"


@contextlib.contextmanager
def throwaway_cluster() -> Iterator[Cluster]:
    if _bin("initdb") is None or _bin("pg_ctl") is None:
        msg = "no PostgreSQL binaries (initdb, pg_ctl): apt-get install postgresql"
        if os.environ.get("CI") == "true":
            pytest.fail(msg + " (CI: the fleet tests never skip)")
        pytest.skip(msg)
    root = Path(tempfile.mkdtemp(prefix="vtcode-pg-"))
    os.chmod(root, 0o755)
    cluster = Cluster(root)
    try:
        cluster.init()
        cluster.start()
        yield cluster
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):
            cluster.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(admin_url: str) -> str:
    """A new, empty database on the server at admin_url (so tests sharing a server never meet)."""
    import psycopg

    name = "vtcode_test_" + uuid.uuid4().hex[:12]
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base, _, _ = admin_url.rpartition("/")
    return f"{base}/{name}"


def wait_until(cond: Callable[[], object], what: str, timeout: float = 60) -> None:
    """Poll cond() until it is true, failing with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
