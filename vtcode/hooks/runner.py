"""Run lifecycle hooks: argv (never a shell unless asked), JSON payload on stdin, minimal env,
a timeout that kills the hook's whole process group, capped output.

Locks: a hook is never run inside a `with lock:` block of ours (the steering queue lock, the
`vtcode compact` session lock). An exec run itself holds its session's writer lock for its whole
life; hooks it runs cannot inherit that lock (Python fds are non-inheritable and `subprocess`
closes the rest), and the lock dies with the vtcode process, never with a lingering hook.

Answers: exit 0 with optional JSON `{"decision": "allow"|"deny", "reason", "message"}` on stdout;
exit 2 means "deny" (only `pre_tool_use` can deny: the reason is stderr, else stdout); any other
exit, a timeout or a spawn failure is a hook *failure*: reported, never fatal, never a denial.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

import orjson

from vtcode.hooks.config import EVENTS, HookPlan, HookSpec
from vtcode.hooks.models import HookDecision, HookOutput
from vtcode.jsontypes import DecodeError, decode, encode
from vtcode.threads import BackgroundThread

__all__ = ["MAX_HOOK_OUTPUT", "HookResult", "HookRunner", "hook_env"]

MAX_HOOK_OUTPUT = 64 * 1024
_ENV_ALLOW = ("PATH", "HOME", "LANG", "TERM", "TMPDIR")


def hook_env(
    *,
    workspace: Path,
    session_id: str,
    event_name: str,
    transcript_path: str | None,
    parent: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The allow-listed environment of a hook (nothing else of ours leaks, no secrets)."""
    src = os.environ if parent is None else parent
    env = {k: v for k, v in src.items() if k in _ENV_ALLOW or k.startswith("LC_")}
    env.setdefault("PATH", os.defpath)
    project = str(workspace)
    env.update(
        VT_PROJECT_DIR=project,
        CLAUDE_PROJECT_DIR=project,
        VT_SESSION_ID=session_id,
        CLAUDE_SESSION_ID=session_id,
        VT_HOOK_EVENT=event_name,
    )
    if transcript_path:
        env.update(VT_TRANSCRIPT_PATH=transcript_path, CLAUDE_TRANSCRIPT_PATH=transcript_path)
    return env


# The events whose exit code 2 is an answer (deny, block), not a failure (as in Claude Code).
EXIT_2_DECIDES = ("pre_tool_use", "stop", "user_prompt_submit", "permission_request")


@dataclasses.dataclass(frozen=True, slots=True)
class HookResult:
    """What one hook did."""

    spec: HookSpec
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    error: str | None = None  # could not start
    output: HookOutput | None = None
    duration_ms: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out and self.exit_code == 0

    @property
    def denied(self) -> bool:
        if self.exit_code == 2 and not self.timed_out:
            return True
        return self.ok and self.output is not None and self.output.decision is HookDecision.DENY

    @property
    def reason(self) -> str:
        if self.output is not None and self.output.reason:
            return self.output.reason
        return (self.stderr.strip() or self.stdout.strip() or "no reason given")[:2000]

    def failure(self) -> str | None:
        """One line describing a failed hook, or None when it did its job."""
        name = f"{self.spec.event} hook `{self.spec.label}`"
        if self.error is not None:
            return f"{name} could not start: {self.error}"
        if self.timed_out:
            return f"{name} timed out after {self.spec.timeout_seconds:g}s and was killed"
        if self.exit_code not in (0, 2) or (
            self.exit_code == 2 and self.spec.event not in EXIT_2_DECIDES
        ):
            detail = self.stderr.strip().splitlines()[-1:] or [""]
            return f"{name} exited with {self.exit_code}" + (
                f": {detail[0][:300]}" if detail[0] else ""
            )
        return None


def _reader(stream: IO[bytes], sink: list[bytes], limit: int) -> None:
    """Keep the first `limit` bytes, drain (and drop) the rest so the hook never blocks."""
    kept = 0
    try:
        while chunk := stream.read(65536):
            if kept < limit:
                sink.append(chunk[: limit - kept])
                kept += min(len(chunk), limit - kept)
    except (OSError, ValueError):
        pass


def _writer(stream: IO[bytes], data: bytes) -> None:
    try:
        stream.write(data)
    except (BrokenPipeError, OSError, ValueError):
        pass  # a hook may ignore its stdin
    finally:
        with contextlib.suppress(OSError):
            stream.close()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the hook's process group (what a timeout promises; also ends leftovers)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):  # SIGKILL cannot be ignored
        proc.wait(timeout=5.0)


def run_one(
    spec: HookSpec,
    payload: bytes,
    *,
    cwd: Path,
    env: dict[str, str],
    max_output: int = MAX_HOOK_OUTPUT,
) -> HookResult:
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(spec.argv),
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: a timeout kills all of it
            close_fds=True,
        )
    except OSError as e:
        return HookResult(spec, None, "", "", error=e.strerror or str(e))
    assert proc.stdin and proc.stdout and proc.stderr
    out: list[bytes] = []
    err: list[bytes] = []
    threads = [
        BackgroundThread(target=_writer, args=(proc.stdin, payload), daemon=True),
        BackgroundThread(target=_reader, args=(proc.stdout, out, max_output), daemon=True),
        BackgroundThread(target=_reader, args=(proc.stderr, err, max_output), daemon=True),
    ]
    for t in threads:
        t.start()
    timed_out = False
    try:
        proc.wait(timeout=spec.timeout_seconds)
    except subprocess.TimeoutExpired:
        timed_out = True
    # The leader may have exited while children keep the pipes open: end the whole group.
    _kill_group(proc)
    for t in threads:
        t.join(timeout=2.0)
    stdout = b"".join(out).decode("utf-8", "replace")
    stderr = b"".join(err).decode("utf-8", "replace")
    output: HookOutput | None = None
    text = stdout.strip()
    if not timed_out and text.startswith("{"):
        try:
            output = decode(HookOutput, orjson.loads(text))
        except (orjson.JSONDecodeError, DecodeError, RecursionError):
            output = None
    return HookResult(
        spec,
        None if timed_out else proc.returncode,
        stdout,
        stderr,
        timed_out=timed_out,
        output=output,
        duration_ms=int((time.monotonic() - start) * 1000),
    )


class HookRunner:
    """Runs the hooks of one session's plan."""

    def __init__(
        self,
        plan: HookPlan,
        *,
        workspace: Path,
        session_id: str,
        transcript_path: str | None = None,
        parent_env: Mapping[str, str] | None = None,
    ) -> None:
        self.plan = plan
        self.workspace = Path(workspace)
        self.session_id = session_id
        self.transcript_path = transcript_path
        self.parent_env = parent_env

    def has(self, event: str) -> bool:
        return bool(self.plan.for_event(event))

    def run(self, event: str, payload: Any, *, subject: str | None = None) -> list[HookResult]:
        """Run every hook of `event` whose matcher accepts `subject`, in order."""
        specs = [s for s in self.plan.for_event(event) if s.matches(subject)]
        if not specs:
            return []
        data = orjson.dumps(encode(payload))
        env = hook_env(
            workspace=self.workspace,
            session_id=self.session_id,
            event_name=EVENTS[event],
            transcript_path=self.transcript_path,
            parent=self.parent_env,
        )
        return [run_one(s, data, cwd=self.workspace, env=env) for s in specs]
