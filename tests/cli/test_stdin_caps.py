"""Every `-` input is bounded (issue 11, deliverable 5): `< /dev/zero` is a usage error, fast.

Each command that reads its text from standard input gets an endless stream; it must stop at the
cap (16 MiB by default, VTCODE_MAX_STDIN_BYTES to change it) with exit 2 and a located message,
within a bounded time and memory, and change nothing on disk.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

VTCODE = [sys.executable, "-m", "vtcode"]
SEED_ID = ["--session-id", "some-session"]

# (name, argv after `vtcode -C WS`): every command that takes `-` for its text.
READERS = [
    ("exec -", ["exec", "--script", "default", "-"]),
    ("steer ID -", ["steer", "some-session", "-"]),
    ("notes add -", ["notes", "add", "-"]),
    ("decisions add -", ["decisions", "add", "-"]),
    ("loop run -", ["loop", "run", "--id", "nightly", "-"]),
    ("agent run -", ["agent", "run", "reviewer", "-"]),
    ("config check -", ["config", "check", "-"]),
]


# Reaps vtcode and reports its exit code and peak RSS. On Linux a child's `ru_maxrss` starts
# from its parent's RSS at the fork (the old memory map is counted at `exec`), so vtcode reaped
# by the pytest worker reported the worker's own 595 MB after a long run (2026-12-07). A small
# process between them makes the figure vtcode's.
_REAPER = """
import os, subprocess, sys, threading
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
watchdog = threading.Timer(120, p.kill)  # a reader that never stops: fail, not hang
watchdog.start()
_pid, status, usage = os.wait4(p.pid, 0)
watchdog.cancel()
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""


def _run_on_zero(ws: Path, argv: list[str], env_extra: dict[str, str]) -> tuple[int, str, int]:
    """Run with /dev/zero as stdin (an input, never an output); returns rc, stderr, peak RSS KiB
    (vtcode's own: reaped by `_REAPER`)."""
    env = {**os.environ, "NO_COLOR": "1", "VTCODE_HOME": str(ws.parent / ".home"), **env_extra}
    err_path = ws.parent / "stderr.txt"
    with open("/dev/zero", "rb") as zero, err_path.open("wb") as err_file:
        reaped = subprocess.run(
            [sys.executable, "-c", _REAPER, *VTCODE, "-C", str(ws), *argv],
            stdin=zero,
            stdout=subprocess.PIPE,
            stderr=err_file,
            env=env,
            cwd=ws,
            text=True,
            check=False,
        )
    assert reaped.returncode == 0, reaped
    rc, rss = (int(n) for n in reaped.stdout.split())
    assert rc != -9, f"vtcode {' '.join(argv)} kept reading /dev/zero"
    return rc, err_path.read_text("utf-8", "replace"), rss


def _tree(ws: Path) -> list[str]:
    """Every path of the workspace with its size: nothing may be added or changed."""
    return sorted(f"{p.relative_to(ws)}:{p.lstat().st_size}" for p in ws.rglob("*") if p.is_file())


@pytest.mark.parametrize(("name", "argv"), READERS, ids=[r[0] for r in READERS])
def test_endless_stdin_is_refused_at_the_cap(tmp_path: Path, name: str, argv: list[str]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    if name.startswith("steer"):  # steering needs a session to steer
        seed = subprocess.run(
            [*VTCODE, "-C", str(ws), "exec", "--script", "default", "-q", *SEED_ID, "hi"],
            capture_output=True,
            check=False,
        )
        assert seed.returncode == 0, seed.stderr
    before = _tree(ws)
    rc, err, _rss = _run_on_zero(ws, argv, {"VTCODE_MAX_STDIN_BYTES": str(2 * 1024 * 1024)})
    assert rc == 2, err
    assert "Traceback" not in err
    assert "<stdin>" in err and "larger than" in err, err
    assert "VTCODE_MAX_STDIN_BYTES" in err  # says how to raise it
    assert _tree(ws) == before


def test_default_cap_is_16_mib_and_memory_stays_bounded(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    rc, err, rss_kib = _run_on_zero(ws, ["notes", "add", "-"], {})
    assert rc == 2 and "larger than 16,777,216 bytes" in err, err
    # The cap plus one chunk plus the interpreter: far below what an unbounded read would take.
    assert rss_kib < 512 * 1024, f"peak RSS {rss_kib} KiB"


def test_input_under_the_cap_is_accepted(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {**os.environ, "NO_COLOR": "1", "VTCODE_MAX_STDIN_BYTES": "64"}
    ok = subprocess.run(
        [*VTCODE, "-C", str(ws), "notes", "add", "-"],
        input=b"a note of fewer than 64 bytes\n",
        capture_output=True,
        env=env,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    too_big = subprocess.run(
        [*VTCODE, "-C", str(ws), "notes", "add", "-"],
        input=b"x" * 65,
        capture_output=True,
        env=env,
        check=False,
    )
    assert too_big.returncode == 2 and b"larger than 64 bytes" in too_big.stderr


@pytest.mark.parametrize("value", ["0", "-5", "lots"])
def test_bad_cap_value_is_a_located_usage_error(tmp_path: Path, value: str) -> None:
    env = {**os.environ, "NO_COLOR": "1", "VTCODE_MAX_STDIN_BYTES": value}
    run = subprocess.run(
        [*VTCODE, "-C", str(tmp_path), "notes", "add", "-"],
        input=b"hello",
        capture_output=True,
        env=env,
        check=False,
    )
    assert run.returncode == 2
    assert b"VTCODE_MAX_STDIN_BYTES must be a positive number" in run.stderr
