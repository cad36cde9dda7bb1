"""Long-running command sessions: real processes, pumped output, spool files, waits, shutdown.

Each session is one process started in its own process group (`start_new_session=True`) with
stdout and stderr merged into one pipe. A pump thread reads that pipe and keeps

- the bytes not yet shown to the model (a bounded head + tail, so memory stays bounded however
  much the command prints), and
- the spool: the first `SPOOL_THRESHOLD` bytes in memory, and once output outgrows that (or a
  response has to truncate) everything in `.vtcode/context/tool_outputs/run-<n>.txt` (0600 in a
  0700 folder), fsynced when the pipe reaches EOF (`spool_complete`).

A reaper thread waits for the process (and enforces an optional hard `timeout`). Responses are
built by `ExecSession.respond`, which returns what was printed since the previous response.
`ExecSessionManager.close_all()` kills every process group (SIGTERM, then SIGKILL after a grace
period) and reaps it, so a vtcode run leaves no processes behind.

Each command starts through the run's `vtcode.sandbox.Sandbox` (`[sandbox]`): Landlock, a network
namespace, and a PID namespace whose init dies with vtcode (even on SIGKILL), so neither the
command nor a `setsid` daemon it starts can outlive it. Where no sandbox exists the command runs
unsandboxed with PR_SET_PDEATHSIG on its shell; either way its group leader is recorded under
`.vtcode/context/procs` and a later run reaps what a killed one left (`vtcode.sandbox.reap`).
The output helpers live in `exec_output`, the spool (capped by `tools.max_spool_bytes`) in
`exec_spool`, one process in `exec_session`, process-group signalling in `exec_procs`.
"""

from __future__ import annotations

import atexit
import errno
import os
import re
import signal
import threading
import weakref
from pathlib import Path

from vtcode.config.model import SandboxConfig, ShellEnvironmentPolicy
from vtcode.sandbox import Sandbox
from vtcode.sandbox import reap as reaping
from vtcode.sandbox.reap import group_alive
from vtcode.threads import BackgroundThread
from vtcode.tools.base import ToolError
from vtcode.tools.exec_output import (
    DEFAULT_MAX_OUTPUT_TOKENS,
    DEFAULT_WAIT_SECONDS,
    DEFAULT_YIELD_MS,
    DRAIN_GRACE_SECS,
    KILL_GRACE_SECS,
    MAX_OUTPUT_TOKENS,
    MAX_SESSIONS,
    SPOOLED_PREVIEW_CAP,
    TRUNCATION_MARKER,
    Preview,
    build_preview,
    is_inspection_command,
    shell_argv,
    strip_ansi,
)
from vtcode.tools.exec_procs import signal_group
from vtcode.tools.exec_session import ExecSession, _policy_env
from vtcode.tools.exec_spool import DEFAULT_MAX_SPOOL_BYTES

__all__ = [
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "DEFAULT_WAIT_SECONDS",
    "DEFAULT_YIELD_MS",
    "DRAIN_GRACE_SECS",
    "MAX_OUTPUT_TOKENS",
    "SPOOLED_PREVIEW_CAP",
    "TRUNCATION_MARKER",
    "ExecSession",
    "ExecSessionManager",
    "Preview",
    "build_preview",
    "group_alive",
    "is_inspection_command",
    "shell_argv",
    "strip_ansi",
]

_LIVE_MANAGERS: weakref.WeakSet[ExecSessionManager] = weakref.WeakSet()


@atexit.register
def _close_live_managers() -> None:  # pragma: no cover - runs at interpreter exit
    for manager in list(_LIVE_MANAGERS):
        manager.close_all(grace=0.5)


class ExecSessionManager:
    """The exec sessions of one vtcode run. Thread-safe; `close_all` at session end."""

    def __init__(
        self,
        *,
        spool_enabled: bool = True,
        max_sessions: int = MAX_SESSIONS,
        env_policy: ShellEnvironmentPolicy | None = None,
        sandbox: SandboxConfig | None = None,
        max_spool_bytes: int = DEFAULT_MAX_SPOOL_BYTES,
    ) -> None:
        self.spool_enabled = spool_enabled
        self.env_policy = env_policy or ShellEnvironmentPolicy()  # [shell_environment_policy]
        self.sandbox_config = sandbox or SandboxConfig()  # [sandbox]
        self.max_spool_bytes = max_spool_bytes  # tools.max_spool_bytes
        self.max_sessions = max_sessions
        self._sandbox: Sandbox | None = None
        self._reaped: set[Path] = set()
        self._warned = False
        self._lock = threading.Lock()
        self._sessions: dict[str, ExecSession] = {}
        self._next: dict[Path, int] = {}
        self._closed = False
        _LIVE_MANAGERS.add(self)

    def start(
        self,
        *,
        argv: list[str],
        display: str,
        cwd: Path,
        workspace: Path,
        spool_dir: Path,
        timeout: float | None = None,
        env: dict[str, str] | None = None,
    ) -> ExecSession:
        with self._lock:
            if self._closed:
                raise ToolError("exec sessions are shut down")
            self._prune()
            running = sum(1 for s in self._sessions.values() if not s.is_exited)
            if running >= self.max_sessions:
                raise ToolError(
                    f"too many running exec sessions ({running}); wait for or finish one first"
                )
            if spool_dir not in self._reaped:
                self.reap_leftovers(spool_dir)
            session_id = self._allocate_id(spool_dir)
            session = ExecSession(
                session_id=session_id,
                argv=argv,
                display=display,
                cwd=cwd,
                workspace=workspace,
                spool_dir=spool_dir,
                spool_enabled=self.spool_enabled,
                timeout=timeout,
                env=_policy_env(self.env_policy, env),
                launch=self.sandbox.launch(workspace),
                max_spool_bytes=self.max_spool_bytes,
                record_dir=_records_dir(spool_dir),
            )
            self._sessions[session_id] = session
            return session

    def take_notices(self) -> list[str]:
        """Warnings for the run's log, once: commands run unsandboxed here (and why)."""
        sandbox = self._sandbox
        if sandbox is None or sandbox.available or self._warned:
            return []
        self._warned = True
        return [sandbox.state.summary()]

    @property
    def sandbox(self) -> Sandbox:
        """The run's sandbox, probed on first use (a run without commands never probes)."""
        if self._sandbox is None:
            self._sandbox = Sandbox(self.sandbox_config)
        return self._sandbox

    def reap_leftovers(self, spool_dir: Path) -> list[int]:
        """Kill what a SIGKILLed earlier run left (see `vtcode.sandbox.reap`); once per folder."""
        self._reaped.add(spool_dir)
        return reaping.reap_orphans(_records_dir(spool_dir))

    def get(self, session_id: str) -> ExecSession:
        with self._lock:
            session = self._sessions.get(str(session_id))
            known = ", ".join(sorted(self._sessions)) or "none"
        if session is None:
            raise ToolError(f"unknown exec session {session_id!r} (known sessions: {known})")
        return session

    def sessions(self) -> list[ExecSession]:
        with self._lock:
            return list(self._sessions.values())

    def close_all(self, grace: float = KILL_GRACE_SECS) -> None:
        """Kill every session's process group (SIGTERM, SIGKILL after `grace`) and reap them."""
        with self._lock:
            self._closed = True
            sessions = list(self._sessions.values())
        for s in sessions:  # signal everyone first so the grace periods overlap
            signal_group(s.pgid, signal.SIGTERM)
        threads = [BackgroundThread(target=s.terminate, args=(grace,)) for s in sessions]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if self._sandbox is not None:
            self._sandbox.close()

    def _allocate_id(self, spool_dir: Path) -> str:
        key = spool_dir
        if key not in self._next:
            self._next[key] = _first_free_run_number(spool_dir)
        n = self._next[key]
        self._next[key] = n + 1
        return f"run-{n}"

    def _prune(self) -> None:
        """Forget the oldest finished sessions beyond the cap (their spools stay on disk)."""
        finished = [sid for sid, s in self._sessions.items() if s.is_exited and s.eof]
        for sid in finished[: max(0, len(self._sessions) - self.max_sessions + 1)]:
            del self._sessions[sid]


def _records_dir(spool_dir: Path) -> Path:
    """`.vtcode/context/procs`: the records of running commands, beside the spool folder."""
    return spool_dir.parent / "procs"


def _first_free_run_number(spool_dir: Path) -> int:
    highest = 0
    try:
        for entry in os.scandir(spool_dir):
            m = re.fullmatch(r"run-(\d+)(?:-.*)?\.txt", entry.name)
            if m:
                highest = max(highest, int(m.group(1)))
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
            raise ToolError(f"cannot read spool folder {spool_dir}: {exc.strerror}") from exc
    return highest + 1
