"""Process groups of exec sessions: is one still alive, signal it, kill it with a grace period.

Split from `exec_sessions`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time

from vtcode.sandbox.reap import group_alive

_POLL_SECS = 0.05


def kill_group(pgid: int, proc: subprocess.Popen[bytes] | None, grace: float) -> None:
    """SIGTERM the group, wait up to `grace` for it to empty, then SIGKILL; reap the leader."""
    if not signal_group(pgid, signal.SIGTERM):
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=grace)
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=min(_POLL_SECS, max(0.0, deadline - time.monotonic())))
            continue
        if not group_alive(pgid):
            break
        time.sleep(_POLL_SECS)  # polling the group: there is no fd to wait on for it
    if group_alive(pgid) or (proc is not None and proc.poll() is None):
        signal_group(pgid, signal.SIGKILL)
    if proc is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace + 1.0)


def signal_group(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a recycled pgid owned by someone else
        return False
    return True
