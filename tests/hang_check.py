"""Run a snippet of Python in a fresh process that a hang cannot hold: the hang checks.

Work that must take milliseconds on a hostile input (a scan of a long line, a glob over a long
path, a model's regex) runs here with a generous bound; a regression to quadratic or worse
time raises `subprocess.TimeoutExpired` and fails the test instead of hanging the suite. The
bound is no timing: the checks assert results, never durations.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HANG_SECS = 60.0
REPO = Path(__file__).resolve().parents[1]


def run_python(code: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`python -c CODE ARGS` from the checkout, stdout and stderr captured; its exit code is
    asserted to be 0 (the child's stderr tail in the message)."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=HANG_SECS,
        check=False,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done
