"""One bounded child process: its own process group, stdin closed (or a file), output to
files, killed whole (the group) when its time is up. Setup commands, checks and agent runs all
use it, so a task can never leave a stray process behind or hang the eval.

Every live child is in a registry so that an interrupted eval (Ctrl-C, SIGTERM) can kill them
all (`kill_all`); a SIGKILLed eval cannot, which is why agent runs are also started with the
parent-death signal (`setpriv --pdeathsig KILL`, or vtcode's sandbox launch).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ProcResult", "Spawn", "kill_all", "run_bounded", "tail_text"]

KILL_GRACE = 5.0  # seconds between SIGTERM to the group and SIGKILL
Spawn = Callable[[Callable[[], "subprocess.Popen[bytes]"]], "subprocess.Popen[bytes]"]

_live: set[subprocess.Popen[bytes]] = set()
_live_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class ProcResult:
    """How a bounded child ended: `exit_code` is negative for a signal (Popen's convention),
    None when it could not be started; `timed_out` when we killed it."""

    exit_code: int | None
    timed_out: bool
    seconds: float
    error: str | None = None


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM first (vtcode then closes its session: thread.completed `cancelled`), SIGKILL
    after the grace."""
    _signal_group(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=KILL_GRACE)
    except subprocess.TimeoutExpired:
        _signal_group(proc.pid, signal.SIGKILL)
        proc.wait()


def kill_all() -> None:
    """SIGKILL the group of every live child (an interrupted eval)."""
    with _live_lock:
        procs = list(_live)
    for proc in procs:
        _signal_group(proc.pid, signal.SIGKILL)


def _direct(start: Callable[[], subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    return start()


def run_bounded(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    stdout: Path,
    stderr: Path | None = None,
    stdin: Path | None = None,
    preexec: Callable[[], None] | None = None,
    spawn: Spawn = _direct,
    cancel: threading.Event | None = None,
) -> ProcResult:
    """Run `argv` in its own session with stdin closed (or read from `stdin`), stdout (and
    stderr, or into stdout) to files; kill the whole group after `timeout` seconds. The group
    is also killed once the leader exits, so a daemonised grandchild cannot outlive the run.
    A child started after `cancel` was set is killed at once (`kill_all` may have run just
    before it was registered)."""
    start = time.monotonic()
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(stdout.open("wb"))
        err = stack.enter_context(stderr.open("wb")) if stderr is not None else None
        inp = stack.enter_context(stdin.open("rb")) if stdin is not None else None

        def popen() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=dict(env),
                stdin=inp if inp is not None else subprocess.DEVNULL,
                stdout=out,
                stderr=err if err is not None else subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=preexec,  # the sandbox's, only when it needs one
            )

        try:
            with _live_lock:  # registered before kill_all could miss it
                proc = spawn(popen)
                _live.add(proc)
                if cancel is not None and cancel.is_set():
                    _signal_group(proc.pid, signal.SIGKILL)
        except (OSError, ValueError) as exc:  # ValueError: a NUL byte in an argument
            why = exc.strerror if isinstance(exc, OSError) else str(exc)
            return ProcResult(None, False, time.monotonic() - start, f"{argv[0]}: {why}")
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _stop(proc)
        except BaseException:  # interrupted (Ctrl-C): never leave the group running
            _signal_group(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        finally:
            _signal_group(proc.pid, signal.SIGKILL)  # leftovers of the group, if any
            with _live_lock:
                _live.discard(proc)
        return ProcResult(proc.returncode, timed_out, time.monotonic() - start)


def tail_text(path: Path, limit: int = 4000) -> str:
    """The last `limit` bytes of a file as text (replacement for undecodable bytes)."""
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - limit))
            data = f.read()
    except OSError:
        return ""
    return data.decode("utf-8", "replace")
