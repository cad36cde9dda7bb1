"""Fixtures of the sandbox tests: a workspace and an "outside" folder away from the temp dirs."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
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
