"""One exec_command process: started (sandboxed), pumped, waited on, answered, terminated.

Split from `exec_sessions` (which keeps the manager of a run's sessions). All mutable state of a
session is guarded by its condition variable; see `exec_sessions` for the whole picture.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from vtcode.config.model import ShellEnvironmentPolicy
from vtcode.redact import remembered_secrets
from vtcode.sandbox import Launch
from vtcode.sandbox import reap as reaping
from vtcode.threads import BackgroundThread
from vtcode.tools.base import ToolError
from vtcode.tools.child_env import child_environment
from vtcode.tools.exec_output import (
    BACKEND,
    BYTES_PER_TOKEN,
    DEFAULT_WAIT_SECONDS,
    KILL_GRACE_SECS,
    STDIN_WRITE_TIMEOUT_SECS,
    Unread,
    build_preview,
    is_inspection_command,
)
from vtcode.tools.exec_procs import kill_group
from vtcode.tools.exec_spool import DEFAULT_MAX_SPOOL_BYTES, Spool

_POLL_SECS = 0.05  # cancellation is an Event, so waits re-check it at this granularity

_ENV_OVERRIDES = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "NO_COLOR": "1",
    "CARGO_TERM_COLOR": "never",
    "TERM": "dumb",
}


def _policy_env(policy: ShellEnvironmentPolicy, extra: dict[str, str] | None) -> dict[str, str]:
    """A child's whole environment: vtcode's filtered by the policy (`child_env`), then ours."""
    return child_environment(
        policy,
        os.environ,
        overrides={**_ENV_OVERRIDES, **(extra or {})},
        withheld=remembered_secrets(),
    )


class ExecSession:
    """One running (or finished) command. All mutable state is guarded by `self.cond`."""

    def __init__(
        self,
        *,
        session_id: str,
        argv: list[str],
        display: str,
        cwd: Path,
        workspace: Path,
        spool_dir: Path,
        spool_enabled: bool,
        timeout: float | None,
        env: dict[str, str] | None = None,
        launch: Launch | None = None,
        max_spool_bytes: int = DEFAULT_MAX_SPOOL_BYTES,
        record_dir: Path | None = None,
    ) -> None:
        self.session_id = session_id
        self.command = display
        self.cwd = cwd
        self.workspace = workspace
        self.inspection = is_inspection_command(display)
        self.spool_enabled = spool_enabled
        self.cond = threading.Condition()
        self.total_bytes = 0
        self.unread = Unread()
        self.spool = Spool(spool_dir, session_id, workspace, max_spool_bytes)
        self.exit_code: int | None = None
        self.timed_out = False
        self.eof = False
        full_env = env if env is not None else _policy_env(ShellEnvironmentPolicy(), None)
        launch = launch or Launch([], None)
        self.contained = launch.contained
        self._finish = launch.finish
        if launch.prefix:
            _check_executable(argv[0], full_env, cwd)  # the launcher would only say "exit 127"
        try:
            self.proc = launch.spawn(
                lambda: subprocess.Popen(
                    [*launch.prefix, *argv],
                    cwd=cwd,
                    env={**full_env, **launch.env},
                    preexec_fn=launch.preexec,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    close_fds=True,
                    bufsize=0,
                )
            )
        except FileNotFoundError as exc:
            raise ToolError(f"command not found: {argv[0]}") from exc
        except PermissionError as exc:
            raise ToolError(f"command not executable: {argv[0]} ({exc.strerror})") from exc
        except OSError as exc:
            raise ToolError(f"could not start {argv[0]}: {exc.strerror or exc}") from exc
        self.pid = self.proc.pid
        self._stdin_lock = threading.Lock()
        if self.proc.stdin is not None:
            os.set_blocking(self.proc.stdin.fileno(), False)
        self.pgid = self.pid  # start_new_session: the child leads its own group
        # For the next run to reap if this vtcode is SIGKILLed (see vtcode.sandbox.reap).
        self._record = reaping.record(record_dir, self.pid) if record_dir else None
        self._timeout = timeout
        self._pump = BackgroundThread(
            target=self._pump_loop, name=f"{session_id}-pump", daemon=True
        )
        self._reaper = BackgroundThread(target=self._reap, name=f"{session_id}-reap", daemon=True)
        self._pump.start()
        self._reaper.start()

    # -- threads ---------------------------------------------------------------------------

    def _pump_loop(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        try:
            while True:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    break
                with self.cond:
                    self.total_bytes += len(chunk)
                    self.unread.add(chunk)
                    if self.spool_enabled:
                        self.spool.add(chunk, self.total_bytes)
                    self.cond.notify_all()
        finally:
            with self.cond:
                if self.spool_enabled:
                    self.spool.finish()
                self.eof = True
                self.cond.notify_all()
            with contextlib.suppress(OSError):
                self.proc.stdout.close()

    def _reap(self) -> None:
        try:
            code = self.proc.wait(timeout=self._timeout)
        except subprocess.TimeoutExpired:
            with self.cond:
                self.timed_out = True
            kill_group(self.pgid, self.proc, KILL_GRACE_SECS)
            code = self.proc.wait()
        if self._finish is not None:  # contained: everything the command started has ended
            removed = self._finish()
            if removed:
                self._pump.join(timeout=5)  # the output's end: the notice comes last
                names = ", ".join(str(p) for p in removed)
                text = f"\n[vtcode sandbox: removed policy files the command created: {names}]\n"
                notice = text.encode()
                with self.cond:
                    self.total_bytes += len(notice)
                    self.unread.add(notice)
        with self.cond:
            self.exit_code = 128 - code if code < 0 else code  # -SIG -> 128+SIG like a shell
            self.cond.notify_all()
        with self._stdin_lock, contextlib.suppress(OSError, ValueError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()  # nobody can read it any more; free the fd

    # -- queries ---------------------------------------------------------------------------

    @property
    def is_exited(self) -> bool:
        with self.cond:
            return self.exit_code is not None

    def write(
        self,
        chars: str,
        *,
        timeout: float = STDIN_WRITE_TIMEOUT_SECS,
        cancel: threading.Event | None = None,
    ) -> None:
        """Send `chars` to stdin; a trailing Ctrl-D (\\x04) closes stdin after writing.

        stdin is non-blocking: a process that stops reading cannot hang the tool call. After
        `timeout` seconds (or on cancel) with bytes still unwritten this raises, saying how many
        bytes went in.
        """
        close = chars.endswith("\x04")
        data = memoryview((chars[:-1] if close else chars).encode("utf-8"))
        total = len(data)
        deadline = time.monotonic() + timeout
        with self._stdin_lock:
            stdin = self.proc.stdin
            if self.is_exited or stdin is None or stdin.closed:
                raise ToolError(
                    f"session {self.session_id} "
                    + ("has exited" if self.is_exited else "has its stdin closed")
                    + "; stdin can no longer be written"
                )
            fd = stdin.fileno()
            try:
                while data:
                    try:
                        n = os.write(fd, data)
                        data = data[n:]
                        continue
                    except BlockingIOError:
                        pass
                    if time.monotonic() >= deadline or (cancel is not None and cancel.is_set()):
                        raise ToolError(
                            f"session {self.session_id}: wrote {total - len(data)} of {total} "
                            "bytes; the process is not reading its stdin"
                        )
                    select.select([], [fd], [], _POLL_SECS)
                if close:
                    stdin.close()
            except (BrokenPipeError, ValueError, OSError) as exc:
                raise ToolError(
                    f"session {self.session_id}: stdin is closed ({type(exc).__name__})"
                ) from exc

    def block(self, deadline: float, cancel: threading.Event, *, drain_grace: float) -> bool:
        """Wait until exited and drained, `deadline` (monotonic) or cancel; True if cancelled.

        Once the process has exited, at most `drain_grace` more seconds are spent waiting for the
        pipe to reach EOF (a background grandchild may hold it open indefinitely).
        """
        with self.cond:
            exited_at: float | None = None
            while True:
                if cancel.is_set():
                    return True
                now = time.monotonic()
                if self.exit_code is not None:
                    if self.eof:
                        return False
                    if exited_at is None:
                        exited_at = now
                    if now >= min(deadline, exited_at + drain_grace):
                        return False
                    limit = min(deadline, exited_at + drain_grace)
                else:
                    limit = deadline
                if now >= limit:
                    return False
                self.cond.wait(min(limit - now, _POLL_SECS))

    def respond(
        self,
        *,
        max_output_tokens: int,
        wall_started: float,
        wait: tuple[float, float] | None = None,
        cancelled: bool = False,
    ) -> dict[str, Any]:
        """The §9.2 response JSON for everything printed since the previous response."""
        budget = max_output_tokens * BYTES_PER_TOKEN
        with self.cond:
            head, dropped, tail = self.unread.take()
            raw_window = len(head) + dropped + len(tail)
            needs_cut = dropped > 0 or raw_window > budget
            if needs_cut and self.spool_enabled and not self.spool.started:
                self.spool.start()  # materialise: everything so far is still in memory
            spooled = self.spool_enabled and self.spool.started and self.spool.error is None
            preview = build_preview(
                head, dropped, tail, budget=budget, spooled=spooled, inspection=self.inspection
            )
            exited = self.exit_code is not None
            resp: dict[str, Any] = {
                # Upstream always sends true here (the tool ran); a small model reads it as the
                # command's outcome, so an exited command's `success` is its exit status (issue 26).
                "success": not exited or self.exit_code == 0,
                "output": preview.text,
                "wall_time": round(time.monotonic() - wall_started, 6),
                "session_id": self.session_id,
                "command": self.command,
                "working_directory": _rel(self.workspace, self.cwd),
                "backend": BACKEND,
                "is_exited": exited,
            }
            if exited:
                resp["exit_code"] = self.exit_code
            else:
                resp["process_id"] = self.pid
            if preview.truncated:
                resp["truncated"] = True
            if self.timed_out:
                resp["timed_out"] = True
            if cancelled:
                resp["cancelled"] = True
            if not exited:
                resp["next_continue_args"] = {"session_id": self.session_id, "chars": ""}
                resp["next_wait_args"] = {
                    "session_id": self.session_id,
                    "action": "wait",
                    "wait_timeout_seconds": DEFAULT_WAIT_SECONDS,
                }
                resp["next_action_hint"] = (
                    f"The command is still running. Call write_stdin with "
                    f'{{"session_id": "{self.session_id}", "action": "wait"}} to block until it '
                    "exits, or with chars to send input."
                )
            if wait is not None:
                resp["waited_seconds"] = round(wait[0], 6)
                resp["wait_deadline_seconds"] = wait[1]
            resp["total_output_bytes"] = self.total_bytes
            resp["output_truncated"] = preview.truncated
            if spooled:
                if exited and not self.spool.complete:
                    resp["spool_complete"] = False
                    resp["spool_pending"] = True
                else:
                    resp["spool_path"] = self.spool.rel_path()
                    resp["output_spooled"] = True
                    resp["spool_complete"] = self.spool.complete
            elif self.spool.error:
                resp["spool_error"] = self.spool.error
            if self.spool.truncated:
                resp["spool_truncated"] = True
                resp["spool_dropped_bytes"] = self.spool.dropped
                resp["spool_max_bytes"] = self.spool.max_bytes
            return resp

    # -- shutdown --------------------------------------------------------------------------

    def terminate(self, grace: float = KILL_GRACE_SECS) -> None:
        """Kill the whole process group and reap it; idempotent."""
        kill_group(self.pgid, self.proc, grace)
        reaping.forget(self._record)
        with contextlib.suppress(OSError, ValueError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        self._reaper.join(timeout=grace + 1.0)
        self._pump.join(timeout=grace + 1.0)


def _check_executable(program: str, env: dict[str, str], cwd: Path) -> None:
    """The errors `Popen` raises for a missing or non-executable program, before the launcher."""
    if "/" in program:
        path = cwd / program
        if not path.exists():
            raise ToolError(f"command not found: {program}")
        if not os.access(path, os.X_OK) or path.is_dir():
            raise ToolError(f"command not executable: {program} (Permission denied)")
    elif shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        raise ToolError(f"command not found: {program}")


def _rel(workspace: Path, path: Path) -> str:
    try:
        text = path.relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return str(path)
    return text or "."
