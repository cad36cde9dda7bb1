"""Permission prompts for `ask` rules: `permission.requested`, the question, `permission.resolved`.

Answers: `y` allow once, `a` allow every call the same rule asks about for the rest of the
session, `n` deny (the model is told, the turn goes on: `permission_rejected`). Ctrl-C or Ctrl-D
at the question is `cancelled`: it cancels the running turn, like Ctrl-C anywhere in a turn.
`wait_ms` is the time the question was on screen.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from typing import Any

from vtcode.events.describe import clip
from vtcode.events.enums import PermissionDecision
from vtcode.events.types import PermissionRequestedEvent, PermissionResolvedEvent, ThreadEvent
from vtcode.interactive.terminal import Key, Terminal
from vtcode.loop.cancel import Cancelled, CancelToken
from vtcode.termtext import inert_line
from vtcode.tools.permissions import (
    COMMAND_ARGS,
    PATH_ARGS,
    Decision,
    PermissionVerdict,
)

__all__ = ["PermissionPrompt"]

_ANSWERS = {
    "y": "y",
    "yes": "y",
    "n": "n",
    "no": "n",
    "a": "a",
    "always": "a",
}


def describe_call(tool: str, arguments: Any) -> str:
    """The part of a call a person decides on: the command, the path, else the arguments."""
    if isinstance(arguments, dict):
        key = COMMAND_ARGS.get(tool) or PATH_ARGS.get(tool)
        if key and isinstance(arguments.get(key), str):
            return clip(arguments[key], 200)
        if tool == "apply_patch":
            return "(a patch)"
        return clip(str(arguments), 200) if arguments else ""
    return ""


class PermissionPrompt:
    """Resolves `ask` verdicts on the terminal; everything else passes through unchanged."""

    def __init__(self, terminal: Terminal) -> None:
        self.t = terminal
        self.emit: Callable[[ThreadEvent], None] | None = None
        self.cancel: CancelToken | None = None
        self.always: set[tuple[str, str]] = set()

    def bind(self, emit: Callable[[ThreadEvent], None], cancel: CancelToken) -> None:
        self.emit = emit
        self.cancel = cancel

    def resolve(self, tool: str, arguments: Any, verdict: PermissionVerdict) -> PermissionVerdict:
        if verdict.decision is not Decision.ASK:
            return verdict
        key = (tool, verdict.rule or tool)
        if key in self.always:
            return PermissionVerdict(
                Decision.ALLOW, verdict.rule, f"{verdict.reason}; approved for this session"
            )
        assert self.emit is not None and self.cancel is not None, "bind() first"
        self.emit(PermissionRequestedEvent(tool_name=tool))
        started = time.monotonic()
        answer = self._ask(tool, arguments, verdict)
        wait_ms = int((time.monotonic() - started) * 1000)
        decision = {
            "y": PermissionDecision.ALLOW,
            "a": PermissionDecision.ALLOW,
            "n": PermissionDecision.DENY,
        }.get(answer, PermissionDecision.CANCELLED)
        self.emit(PermissionResolvedEvent(tool_name=tool, decision=decision, wait_ms=wait_ms))
        if decision is PermissionDecision.CANCELLED:
            self.cancel.cancel(signal.SIGINT)
            raise Cancelled(signal.SIGINT)
        if answer == "a":
            self.always.add(key)
        if decision is PermissionDecision.ALLOW:
            return PermissionVerdict(Decision.ALLOW, verdict.rule, f"{verdict.reason}; approved")
        return PermissionVerdict(
            Decision.DENY, verdict.rule, f"{verdict.reason}; the user declined"
        )

    def _ask(self, tool: str, arguments: Any, verdict: PermissionVerdict) -> str:
        # The tool name, its arguments and the rule's reason quote what the model asked for.
        what = inert_line(describe_call(tool, arguments) or "")
        self.t.line(f"{self.t.style('[permission]', '1')} {inert_line(verdict.reason)}")
        question = (
            f"Allow {inert_line(tool)}{f' {what}' if what else ''}? [y]es / [n]o / [a]lways: "
        )
        while True:
            line = self.t.read(question)
            if line.key is not Key.TEXT:
                return "cancelled"
            answer = _ANSWERS.get(line.text.strip().lower())
            if answer is not None:
                return answer
            self.t.line("please answer y, n or a (Ctrl-C cancels the turn)")
