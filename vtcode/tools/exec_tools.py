"""`exec_command` and `write_stdin`: the model-facing tools over `ExecSessionManager`.

Parameters and response keys follow upstream (reference §9.2). `exec_command` starts a session
and returns after the process exits or `yield_time_ms` passes; `write_stdin` sends `chars`, polls
(`action: "poll"`, or `chars: ""`), or waits (`action: "wait"`) until exit or a deadline of
min(requested, the long-running-command ceiling). A deadline never kills the process: the same
`session_id` can be waited on again. Wait time is reported in `ToolResult.wait_seconds` so the loop
can exclude it from the per-turn tool wall-clock budget.
"""

from __future__ import annotations

import shlex
import time
from typing import Any

import orjson

from vtcode.messages import ToolSpec
from vtcode.tools.base import ToolContext, ToolError, ToolResult
from vtcode.tools.exec_sessions import (
    DEFAULT_MAX_OUTPUT_TOKENS,
    DEFAULT_WAIT_SECONDS,
    DEFAULT_YIELD_MS,
    DRAIN_GRACE_SECS,
    MAX_OUTPUT_TOKENS,
    ExecSession,
    ExecSessionManager,
    shell_argv,
)
from vtcode.tools.paths import resolve_path

MAX_YIELD_MS = 300_000

_MAX_TOKENS_SCHEMA: dict[str, Any] = {
    "type": "integer",
    "minimum": 1,
    "maximum": MAX_OUTPUT_TOKENS,
    "default": DEFAULT_MAX_OUTPUT_TOKENS,
    "description": "Bound on the returned output (about 4 bytes per token).",
}
_YIELD_SCHEMA: dict[str, Any] = {
    "type": "integer",
    "minimum": 0,
    "maximum": MAX_YIELD_MS,
    "default": DEFAULT_YIELD_MS,
    "description": "Return after this many milliseconds if the process is still running.",
}

EXEC_COMMAND_SPEC = ToolSpec(
    name="exec_command",
    description=(
        "Run a command in the workspace (a string runs via `bash -c`, not a login shell; a list "
        "is an argv). "
        "stdout and stderr are merged. Returns when the process exits or after yield_time_ms; "
        "a still-running command keeps its session_id for write_stdin (send input, poll, or "
        "action=wait to block until it exits). Large output is bounded and spooled to a file."
    ),
    parameters={
        "type": "object",
        "properties": {
            "command": {
                "anyOf": [
                    {"type": "string", "minLength": 1},
                    {"type": "array", "items": {"type": "string"}, "minItems": 1},
                ],
                "description": "Shell command string, or an argv list run without a shell.",
            },
            "workdir": {
                "type": "string",
                "description": "Working directory, relative to the workspace (default: root).",
            },
            "yield_time_ms": _YIELD_SCHEMA,
            "max_output_tokens": _MAX_TOKENS_SCHEMA,
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "description": "Hard limit in seconds; the process group is killed after it.",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    },
)

WRITE_STDIN_SPEC = ToolSpec(
    name="write_stdin",
    description=(
        "Continue an exec_command session: send `chars` to its stdin (end with \\u0004 to "
        'close stdin), poll for new output (chars="" or action=poll), or action=wait to block '
        "until the process exits or wait_timeout_seconds passes. A wait deadline never kills "
        "the process; wait again with the same session_id."
    ),
    parameters={
        "type": "object",
        "properties": {
            "session_id": {
                "type": ["string", "integer"],
                "description": "The session_id an exec_command response returned.",
            },
            "action": {"type": "string", "enum": ["write", "poll", "wait"]},
            "chars": {"type": "string", "description": "Text to write to stdin."},
            "yield_time_ms": _YIELD_SCHEMA,
            "wait_timeout_seconds": {
                "type": "number",
                "minimum": 1,
                "description": f"For action=wait (default {DEFAULT_WAIT_SECONDS}); capped by the "
                "long-running-command ceiling.",
            },
            "timeout_seconds": {
                "type": "number",
                "minimum": 1,
                "description": "Alias of wait_timeout_seconds.",
            },
            "max_output_tokens": _MAX_TOKENS_SCHEMA,
        },
        "required": ["session_id"],
        "anyOf": [
            {"required": ["chars"]},
            {"required": ["action"], "properties": {"action": {"const": "wait"}}},
        ],
        "additionalProperties": False,
    },
)


def _result(resp: dict[str, Any], *, wait_seconds: float = 0.0) -> ToolResult:
    exited = bool(resp["is_exited"])
    code = resp.get("exit_code") if exited else None
    spool = resp.get("spool_path")
    return ToolResult(
        output=orjson.dumps(resp).decode(),
        success=(not exited) or code == 0,
        exit_code=code,
        spool_path=spool if isinstance(spool, str) else None,
        data=resp,
        wait_seconds=wait_seconds,
    )


class ExecCommandTool:
    """Starts a real process in its own process group (see `exec_sessions`)."""

    def __init__(self, manager: ExecSessionManager) -> None:
        self.manager = manager

    @property
    def spec(self) -> ToolSpec:
        return EXEC_COMMAND_SPEC

    @property
    def read_only(self) -> bool:
        return False

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        started = time.monotonic()
        if ctx.cancel.is_set():
            raise ToolError("cancelled before the command started; it was not run")
        command = arguments["command"]
        if isinstance(command, str):
            if not command.strip():
                raise ToolError("command is empty")
            argv, display = shell_argv(command), command
        else:
            argv, display = list(command), shlex.join(command)
        workdir = arguments.get("workdir")
        cwd = resolve_path(ctx.workspace, workdir, what="workdir") if workdir else ctx.workspace
        cwd = cwd.resolve()
        if not cwd.is_dir():
            raise ToolError(f"workdir {workdir!r} is not a directory")
        timeout = arguments.get("timeout")
        session = self.manager.start(
            argv=argv,
            display=display,
            cwd=cwd,
            workspace=ctx.workspace,
            spool_dir=ctx.spool_dir,
            timeout=float(timeout) if timeout is not None else None,
        )
        yield_ms = int(arguments.get("yield_time_ms", DEFAULT_YIELD_MS))
        cancelled = session.block(
            started + yield_ms / 1000.0, ctx.cancel, drain_grace=DRAIN_GRACE_SECS
        )
        resp = session.respond(
            max_output_tokens=int(arguments.get("max_output_tokens", DEFAULT_MAX_OUTPUT_TOKENS)),
            wall_started=started,
            cancelled=cancelled,
        )
        return _result(resp)


class WriteStdinTool:
    """Writes to, polls, or waits on an existing exec session."""

    def __init__(self, manager: ExecSessionManager) -> None:
        self.manager = manager

    @property
    def spec(self) -> ToolSpec:
        return WRITE_STDIN_SPEC

    @property
    def read_only(self) -> bool:
        return False

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        started = time.monotonic()
        session = self.manager.get(str(arguments["session_id"]))
        action = arguments.get("action") or ("write" if arguments.get("chars") else "poll")
        max_tokens = int(arguments.get("max_output_tokens", DEFAULT_MAX_OUTPUT_TOKENS))
        if action == "wait":
            return self._wait(session, arguments, ctx, started, max_tokens)
        chars = arguments.get("chars", "")
        yield_ms = int(arguments.get("yield_time_ms", DEFAULT_YIELD_MS))
        if action == "write" and chars:
            session.write(chars, timeout=max(1.0, yield_ms / 1000.0), cancel=ctx.cancel)
        elif action == "write" and "chars" not in arguments:
            raise ToolError("action=write needs `chars`")
        cancelled = session.block(
            started + yield_ms / 1000.0, ctx.cancel, drain_grace=DRAIN_GRACE_SECS
        )
        resp = session.respond(
            max_output_tokens=max_tokens, wall_started=started, cancelled=cancelled
        )
        return _result(resp)

    def _wait(
        self,
        session: ExecSession,
        arguments: dict[str, Any],
        ctx: ToolContext,
        started: float,
        max_tokens: int,
    ) -> ToolResult:
        if arguments.get("chars"):
            session.write(arguments["chars"], cancel=ctx.cancel)
        requested = arguments.get("wait_timeout_seconds", arguments.get("timeout_seconds"))
        requested_s = float(requested) if requested is not None else float(DEFAULT_WAIT_SECONDS)
        deadline_s = max(0.0, min(requested_s, float(ctx.long_running_ceiling_secs)))
        # A wait blocks until exit *and* a drained pipe, up to the whole deadline.
        cancelled = session.block(started + deadline_s, ctx.cancel, drain_grace=deadline_s)
        waited = round(time.monotonic() - started, 6)
        deadline_out: float | int = int(deadline_s) if deadline_s.is_integer() else deadline_s
        resp = session.respond(
            max_output_tokens=max_tokens,
            wall_started=started,
            wait=(waited, deadline_out),
            cancelled=cancelled,
        )
        return _result(resp, wait_seconds=waited)
