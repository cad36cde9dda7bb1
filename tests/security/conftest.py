"""Fixtures of the sandbox tests: a workspace away from the temp dirs, an unprivileged user."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.exec_support import REPO

_TEMP_ROOTS = ("/tmp", "/var/tmp", "/dev/shm")


def _away_from_temp_dirs() -> Path:
    temps = [Path(os.path.realpath(t)) for t in (*_TEMP_ROOTS, tempfile.gettempdir())]
    for candidate in (REPO / "build", Path.home() / ".cache"):
        real = Path(os.path.realpath(candidate))
        if not any(real == t or real.is_relative_to(t) for t in temps):
            return candidate / "vtcode-sandbox-tests"
    pytest.skip("both the checkout and the home folder lie under a temp dir")


@pytest.fixture
def area(tmp_path: Path) -> Iterator[Path]:
    """A root holding `ws` (a git workspace) and `outside`, away from the temp dirs.

    The temp dirs are writable in workspace-write, so `outside` must not lie under one: the
    checkout itself may (CI clones anywhere, /tmp included), so the home folder is the fallback.
    """
    base = _away_from_temp_dirs()
    base.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(dir=base))
    (root / "ws").mkdir()
    (root / "outside").mkdir()
    subprocess.run(["git", "init", "-q", str(root / "ws")], check=True)
    (tmp_path / "scratch").mkdir()
    yield root
    shutil.rmtree(root, ignore_errors=True)


@dataclass(frozen=True)
class User:
    """An unprivileged user made for one test, and a Python that user can run vtcode with."""

    name: str
    uid: int
    gid: int
    python: list[str]  # argv prefix: `[*python, *vtcode_args]` runs the CLI

    def as_user(self, argv: list[str]) -> list[str]:
        """`argv` run as this user (setpriv: no login, no PAM)."""
        drop = ["setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--clear-groups"]
        return [*drop, "--", *argv]

    def argv(self, args: list[str]) -> list[str]:
        """The vtcode CLI with `args`, as this user."""
        return self.as_user([*self.python, *args])


def _python_for(uid: int, gid: int) -> list[str] | None:
    """sys.executable if the user may run it, else the system python of the same version."""
    site_dir = next(p for p in sys.path if p.endswith("site-packages"))
    boot = (
        f"import site, sys; site.addsitedir({site_dir!r}); "
        "from vtcode.cli.entry import main; main()"
    )
    drop = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--"]
    version = "import sys; print(sys.version_info[:2])"
    for exe in (sys.executable, "/usr/bin/python3"):
        proc = subprocess.run([*drop, exe, "-c", version], capture_output=True, text=True)
        if proc.returncode == 0 and proc.stdout.strip() == str(sys.version_info[:2]):
            return [exe, "-c", boot]
    return None


@pytest.fixture
def unprivileged_user() -> Iterator[User]:
    """A system user made with useradd for this test (removed after); skips where impossible."""
    if os.getuid() != 0:
        pytest.skip("making a user needs root")
    if shutil.which("useradd") is None or shutil.which("setpriv") is None:
        pytest.skip("no useradd or setpriv here to make and become a user")
    name = f"vtsbx{os.getpid() % 100000}"
    made = subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        pytest.skip(f"useradd failed: {made.stderr.strip()}")
    try:
        info = pwd.getpwnam(name)
        python = _python_for(info.pw_uid, info.pw_gid)
        if python is None:
            pytest.skip(f"no Python {sys.version_info[:2]} the new user may run")
        yield User(name, info.pw_uid, info.pw_gid, python)
    finally:
        subprocess.run(["userdel", name], capture_output=True)


@pytest.fixture(autouse=True)
def _real_exec(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every vtcode run here is a real `python -m vtcode`, never a fork of the test process: what
    the sandbox must hide (vtcode's /proc environ and cmdline, its fds) is what exec sets up."""
    monkeypatch.setenv("VTCODE_TEST_EXEC", "1")
