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
period) and reaps it, so a vtcode run leaves no processes behind (processes that leave the group
with `setsid` are the one thing it cannot see).
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import itertools
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import threading
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vtcode.config.model import ShellEnvironmentPolicy
from vtcode.fsutil import FILE_MODE, ensure_private_dir, fsync_dir, write_all
from vtcode.threads import BackgroundThread
from vtcode.tools.base import ToolError
from vtcode.tools.child_env import child_environment

DEFAULT_YIELD_MS = 1000
DEFAULT_MAX_OUTPUT_TOKENS = 10_000
MAX_OUTPUT_TOKENS = 50_000
DEFAULT_WAIT_SECONDS = 600
BYTES_PER_TOKEN = 4
SPOOL_THRESHOLD = 64 * 1024  # output beyond this goes to a spool file
SPOOLED_PREVIEW_CAP = 6 * 1024  # guide: spooled previews are capped at min(budget, 6 KiB)
UNREAD_CAP = MAX_OUTPUT_TOKENS * BYTES_PER_TOKEN + 16 * 1024  # per head and per tail
DRAIN_GRACE_SECS = 0.25  # after exit, how long a response waits for the pipe to reach EOF
KILL_GRACE_SECS = 2.0
STDIN_WRITE_TIMEOUT_SECS = 5.0
MAX_SESSIONS = 64
TRUNCATION_MARKER = "\n[Output truncated]"
BACKEND = "pipe"
_POLL_SECS = 0.05  # cancellation is an Event, so waits re-check it at this granularity

_ANSI_RE = re.compile(
    r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC ... BEL / ST
    r"|\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b[PX^_][^\x1b]*\x1b\\"  # DCS / SOS / PM / APC
    r"|\x1b[@-Z\\-_]"  # two-byte escapes
)
_INSPECTION_COMMANDS = frozenset(
    {"ls", "cat", "head", "tail", "grep", "rg", "egrep", "fgrep", "find", "fd", "tree", "wc"}
    | {"du", "df", "stat", "file", "jq", "less", "more", "nl", "sort", "uniq", "cut", "awk"}
    | {"sed", "diff", "env", "printenv", "pwd", "which", "whoami", "ps"}
)
_INSPECTION_GIT = frozenset(
    {"log", "show", "diff", "status", "blame", "branch", "ls-files", "grep", "remote"}
)
_GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
_ENV_OVERRIDES = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "NO_COLOR": "1",
    "CARGO_TERM_COLOR": "never",
    "TERM": "dumb",
}


def _policy_env(policy: ShellEnvironmentPolicy, extra: dict[str, str] | None) -> dict[str, str]:
    """A child's whole environment: vtcode's filtered by the policy (`child_env`), then ours."""
    return child_environment(policy, os.environ, overrides={**_ENV_OVERRIDES, **(extra or {})})


def strip_ansi(text: str) -> str:
    """Remove terminal escape sequences (colours, cursor moves, titles)."""
    return _ANSI_RE.sub("", text)


def is_inspection_command(command: str) -> bool:
    """Whether `command` reads rather than verifies or mutates (head+tail vs tail previews)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    while words and "=" in words[0] and not words[0].startswith("="):
        words = words[1:]  # leading VAR=value assignments
    if not words:
        return False
    prog = Path(words[0]).name
    if prog == "git":
        args = iter(words[1:])
        for word in args:
            if word in _GIT_VALUE_OPTIONS:
                next(args, None)  # `-C DIR`, `-c key=value`: skip the value too
            elif not word.startswith("-"):
                return word in _INSPECTION_GIT
        return False
    return prog in _INSPECTION_COMMANDS


def shell_argv(command: str) -> list[str]:
    """`bash -c COMMAND` when bash exists, else `sh -c COMMAND`.

    Not a login shell (`-l`), unlike Codex: a login profile costs ~250 ms per command here and
    can block outright (a profile that takes a lock, prompts, or waits on the network), which a
    headless harness must never do. Commands get vtcode's environment as
    `[shell_environment_policy]` filters it (`vtcode.tools.child_env`).
    """
    bash = shutil.which("bash")
    return [bash, "-c", command] if bash else ["/bin/sh", "-c", command]


def _head_lines(data: bytes, limit: int) -> bytes:
    """At most `limit` leading bytes, ending at a line end when one is in range."""
    if len(data) <= limit:
        return data
    cut = data.rfind(b"\n", 0, limit)
    return data[: cut + 1] if cut > 0 else _cut_utf8(data, limit)


def _tail_lines(data: bytes, limit: int) -> bytes:
    """At most `limit` trailing bytes, starting at a line start when one is in range."""
    if len(data) <= limit:
        return data
    start = len(data) - limit
    nl = data.find(b"\n", start - 1, len(data) - 1)  # `start - 1`: already at a line start?
    return data[nl + 1 :] if nl >= 0 else _tail_utf8(data, limit)


def _cut_utf8(data: bytes, limit: int) -> bytes:
    """The first `limit` bytes, backed off to a UTF-8 character boundary."""
    if len(data) <= limit:
        return data
    cut = limit
    while cut > 0 and (data[cut] & 0xC0) == 0x80:
        cut -= 1
    return data[:cut]


def _tail_utf8(data: bytes, limit: int) -> bytes:
    """The last `limit` bytes, moved forward to a UTF-8 character boundary."""
    if len(data) <= limit:
        return data
    start = len(data) - limit
    while start < len(data) and (data[start] & 0xC0) == 0x80:
        start += 1
    return data[start:]


class _Unread:
    """Output not yet returned to the model: a bounded head, a bounded tail, a dropped count."""

    def __init__(self, cap: int = UNREAD_CAP) -> None:
        self.cap = cap
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, data: bytes) -> None:
        room = self.cap - len(self.head)
        if room > 0 and not self.tail and not self.dropped:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            excess = len(self.tail) - self.cap
            if excess > 0:
                del self.tail[:excess]
                self.dropped += excess

    def take(self) -> tuple[bytes, int, bytes]:
        out = (bytes(self.head), self.dropped, bytes(self.tail))
        self.head, self.tail, self.dropped = bytearray(), bytearray(), 0
        return out


@dataclass(frozen=True, slots=True)
class Preview:
    """The model-visible text of one response and how it was cut."""

    text: str
    truncated: bool
    window_bytes: int


def build_preview(
    head: bytes,
    dropped: int,
    tail: bytes,
    *,
    budget: int,
    spooled: bool,
    inspection: bool,
) -> Preview:
    """Turn one window of raw output into the bounded, ANSI-stripped preview.

    Unspooled (upstream rule): the first `budget` bytes + "\\n[Output truncated]". Spooled
    (guide rule): at most min(budget, 6 KiB), head+tail for inspection commands (the start and
    the end of a listing both matter), only the tail for everything else (errors come last).
    """
    window = len(head) + dropped + len(tail)
    clean_head = strip_ansi(head.decode("utf-8", "replace")).encode()
    clean_tail = strip_ansi(tail.decode("utf-8", "replace")).encode()
    if not dropped:
        clean = clean_head + clean_tail
        if len(clean) <= budget:
            return Preview(clean.decode("utf-8", "replace"), False, window)
        clean_head, clean_tail = clean, clean
    if not spooled:
        text = _cut_utf8(clean_head, budget).decode("utf-8", "replace") + TRUNCATION_MARKER
        return Preview(text, True, window)
    cap = min(budget, SPOOLED_PREVIEW_CAP)
    if inspection:
        half = cap // 2
        first = _head_lines(clean_head, half).decode("utf-8", "replace")
        last = _tail_lines(clean_tail, cap - half).decode("utf-8", "replace")
        text = f"{first}\n[... output omitted; full output in the spool file ...]\n{last}"
    else:
        last = _tail_lines(clean_tail, cap).decode("utf-8", "replace")
        text = f"[... earlier output omitted; full output in the spool file ...]\n{last}"
    return Preview(text + TRUNCATION_MARKER, True, window)


class _Spool:
    """The spool file of one session: lazily created, appended by the pump, fsynced at EOF."""

    def __init__(self, directory: Path, name: str, workspace: Path) -> None:
        self.directory = directory
        self.name = name
        self.workspace = workspace
        self.early = bytearray()  # output before the file exists (<= SPOOL_THRESHOLD)
        self.fd: int | None = None
        self.path: Path | None = None
        self.error: str | None = None
        self.complete = False

    @property
    def started(self) -> bool:
        return self.path is not None

    def rel_path(self) -> str | None:
        if self.path is None:
            return None
        try:
            return self.path.relative_to(self.workspace.resolve()).as_posix()
        except ValueError:
            return str(self.path)

    def add(self, data: bytes, total: int) -> None:
        if self.error:
            return
        if self.fd is None:
            self.early += data
            if total > SPOOL_THRESHOLD:
                self.start()
            return
        self._write(data)

    def start(self) -> None:
        """Create the file (O_EXCL, 0600) and write everything seen so far."""
        if self.started or self.error:
            return
        try:
            ensure_private_dir(self.directory)
            self.fd, self.path = _create_exclusive(self.directory, self.name)
            self._write(bytes(self.early))
        except OSError as exc:
            self.error = f"spool unavailable: {exc.strerror or exc}"
            self._close()
        self.early = bytearray()

    def finish(self) -> None:
        """The pipe hit EOF: make the spool durable and mark it complete."""
        if self.fd is not None:
            try:
                os.fsync(self.fd)
                if self.path is not None:
                    fsync_dir(self.path.parent)
            except OSError as exc:
                self.error = f"spool fsync failed: {exc.strerror or exc}"
            self._close()
        self.complete = True

    def _write(self, data: bytes) -> None:
        if self.fd is None or not data:
            return
        try:
            write_all(self.fd, data)
        except OSError as exc:
            self.error = f"spool write failed: {exc.strerror or exc}"
            self._close()

    def _close(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None


def _create_exclusive(directory: Path, name: str) -> tuple[int, Path]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_CLOEXEC", 0)
    for attempt in itertools.count():
        stem = name if attempt == 0 else f"{name}-{os.getpid()}-{attempt}"
        path = directory / f"{stem}.txt"
        try:
            return os.open(path, flags, FILE_MODE), path
        except FileExistsError:
            if attempt > 1000:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


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
    ) -> None:
        self.session_id = session_id
        self.command = display
        self.cwd = cwd
        self.workspace = workspace
        self.inspection = is_inspection_command(display)
        self.spool_enabled = spool_enabled
        self.cond = threading.Condition()
        self.total_bytes = 0
        self.unread = _Unread()
        self.spool = _Spool(spool_dir, session_id, workspace)
        self.exit_code: int | None = None
        self.timed_out = False
        self.eof = False
        full_env = env if env is not None else _policy_env(ShellEnvironmentPolicy(), None)
        try:
            self.proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=full_env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
                bufsize=0,
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
                "success": True,
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
            return resp

    # -- shutdown --------------------------------------------------------------------------

    def terminate(self, grace: float = KILL_GRACE_SECS) -> None:
        """Kill the whole process group and reap it; idempotent."""
        kill_group(self.pgid, self.proc, grace)
        with contextlib.suppress(OSError, ValueError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        self._reaper.join(timeout=grace + 1.0)
        self._pump.join(timeout=grace + 1.0)


def _rel(workspace: Path, path: Path) -> str:
    try:
        text = path.relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return str(path)
    return text or "."


def group_alive(pgid: int) -> bool:
    """Whether any non-zombie process is still in group `pgid` (zombies cannot run)."""
    proc = Path("/proc")
    if not proc.is_dir():  # pragma: no cover - non-Linux fallback
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    for entry in os.scandir(proc):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ..." - comm may contain spaces and parens
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) >= 3 and int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            return True
    return False


def kill_group(pgid: int, proc: subprocess.Popen[bytes] | None, grace: float) -> None:
    """SIGTERM the group, wait up to `grace` for it to empty, then SIGKILL; reap the leader."""
    if not _signal_group(pgid, signal.SIGTERM):
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
        _signal_group(pgid, signal.SIGKILL)
    if proc is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace + 1.0)


def _signal_group(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a recycled pgid owned by someone else
        return False
    return True


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
    ) -> None:
        self.spool_enabled = spool_enabled
        self.env_policy = env_policy or ShellEnvironmentPolicy()  # [shell_environment_policy]
        self.max_sessions = max_sessions
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
            )
            self._sessions[session_id] = session
            return session

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
            _signal_group(s.pgid, signal.SIGTERM)
        threads = [BackgroundThread(target=s.terminate, args=(grace,)) for s in sessions]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

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
