"""`!CMD` in chat: the user runs a shell command directly, recorded as a `command_execution` item.

Upstream's interactive shell commands emit `item.started(command_execution{status: in_progress,
aggregated_output: ""})`, then `item.completed` with the final status, exit code and output
(contract §1.4); this is the one place vtcode produces that item type.

The command goes through the run's own tool executor as an `exec_command` call, so exactly what
governs the model's commands governs the user's: the permission policy (a `deny` refuses it, an
`ask` asks), the pre-tool hooks, the sandbox, the environment policy, output bounds and the spool.
It waits until the command exits (no yield: the user asked for its result), polling through
`write_stdin`'s `wait` as the model would. Ctrl-C stops the command (its process group) and the
item completes `failed`; the session goes on. The model does not see the command or its output
(as a `!` line in a shell history: it is the user's, not part of the conversation).
"""

from __future__ import annotations

import itertools
import signal
from typing import Any

import orjson

from vtcode.events.enums import ToolCallStatus
from vtcode.events.types import (
    CommandExecutionItem,
    ItemCompletedEvent,
    ItemStartedEvent,
    ThreadItem,
)
from vtcode.interactive.controls import Controls
from vtcode.loop.runner import Runner
from vtcode.messages import ToolCall
from vtcode.tools.exec_sessions import MAX_OUTPUT_TOKENS
from vtcode.tools.exec_tools import MAX_YIELD_MS

__all__ = ["SHELL_PREFIX", "run_user_command"]

SHELL_PREFIX = "!"
STOPPED = "stopped by Ctrl-C"
_calls = itertools.count(1)


def _response(output: str) -> dict[str, Any] | None:
    """The exec tool's JSON response, or None when the call was refused before it ran."""
    try:
        value = orjson.loads(output)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) and "is_exited" in value else None


def _call(name: str, arguments: dict[str, Any]) -> ToolCall:
    return ToolCall(
        id=f"user_shell_{next(_calls)}", name=name, arguments=orjson.dumps(arguments).decode()
    )


def run_user_command(command: str, runner: Runner, controls: Controls) -> None:
    """Run `command` for the user and record it (started, then completed) in the session."""
    emit = controls.p.emit
    executor = controls.p.executor
    cancel = runner.cancel
    item_id = runner.recorder.next_item_id()
    started = CommandExecutionItem(command=command, status=ToolCallStatus.IN_PROGRESS)
    emit(ItemStartedEvent(item=ThreadItem(id=item_id, details=started)))
    args: dict[str, Any] = {
        "command": command,
        "yield_time_ms": MAX_YIELD_MS,
        "max_output_tokens": MAX_OUTPUT_TOKENS,
    }
    outcome = executor.execute(_call("exec_command", args), args, cancel)
    resp = _response(outcome.output)
    pieces: list[str] = []
    exit_code: int | None = None
    stopped = False
    if resp is None:  # refused (policy, hook, allow-list) or failed to start: say why
        pieces.append(outcome.output)
    while resp is not None:
        pieces.append(str(resp.get("output", "")))
        if resp.get("is_exited"):
            code = resp.get("exit_code")
            exit_code = code if isinstance(code, int) and not isinstance(code, bool) else None
            break
        if cancel.cancelled or resp.get("cancelled"):
            stopped = controls.stop_command(str(resp.get("session_id")))
            break
        wait = {"session_id": resp["session_id"], "action": "wait"}
        resp = _response(executor.execute(_call("write_stdin", wait), wait, cancel).output)
    if stopped or (cancel.cancelled and cancel.signum == signal.SIGINT):
        # Ctrl-C ended this command only: the session goes on (as a cancelled turn would).
        cancel.event.clear()
        cancel.signum = None
        pieces.append(f"\n[{STOPPED}]\n" if stopped else "")
    ok = exit_code == 0
    done = CommandExecutionItem(
        command=command,
        aggregated_output="".join(pieces),
        exit_code=exit_code,
        status=ToolCallStatus.COMPLETED if ok else ToolCallStatus.FAILED,
    )
    emit(ItemCompletedEvent(item=ThreadItem(id=item_id, details=done)))
