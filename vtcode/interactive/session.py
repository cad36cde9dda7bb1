"""`ChatSession`: the user side of an interactive run (prompt, slash commands, plan, permissions).

The runner calls `next_action` whenever it waits in `idle`; this reads lines until one means
something to the loop (a message, a compaction, leaving) and handles everything else itself
(`/help`, `/status`, `/steer`, `/effort`, `/model` without compaction). Ctrl-C at the prompt
arms leaving; a second Ctrl-C in a row leaves (`exit`); Ctrl-D or `/exit` ends the session
(`completed`), see `vtcode.interactive.outcomes`.
"""

from __future__ import annotations

from typing import Any

from vtcode.interactive.commands import Command, ParseError, help_text, parse_line
from vtcode.interactive.controls import Controls
from vtcode.interactive.outcomes import leave_outcome
from vtcode.interactive.permission import PermissionPrompt
from vtcode.interactive.plan import PlanFlow
from vtcode.interactive.shell import run_user_command
from vtcode.interactive.terminal import Key, Terminal
from vtcode.loop.outcomes import OutcomeKind
from vtcode.loop.parts import UserAction
from vtcode.loop.runner import Runner
from vtcode.messages import Message
from vtcode.runtime.exec_run import Interaction, RunParts
from vtcode.store.artifacts import record_prompt
from vtcode.tools.permissions import PermissionVerdict

__all__ = ["ChatSession"]

PROMPT = "> "
PLAN_PROMPT = "plan> "


class ChatSession(Interaction):
    """One interactive session on a terminal (a new one per `/new`)."""

    def __init__(self, terminal: Terminal) -> None:
        self.t = terminal
        self.controls = Controls()
        self.plan = PlanFlow(terminal, self.controls)
        self.permissions = PermissionPrompt(terminal)
        self.new_session = False
        self._armed_exit = False
        self._commands_before: set[str] = set()

    # ------------------------------------------------------------------ Interaction

    def attach(self, parts: RunParts) -> None:
        self.controls.attach(parts)
        self.permissions.bind(parts.emit, parts.runner.cancel)
        self.t.before_prompt = parts.settle
        r = parts.runner
        self.t.line(
            f"vtcode chat: session {parts.session_id}, model {r.provider.model} "
            f"({r.provider.name}). /help lists the commands; /exit or Ctrl-D ends the session."
        )
        if r.prompt and r.prompt.strip():  # the PROMPT argument: shown as if typed
            self.t.line(f"{PROMPT}{r.prompt}")

    def resolve_permission(
        self, tool: str, arguments: Any, verdict: PermissionVerdict
    ) -> PermissionVerdict:
        return self.permissions.resolve(tool, arguments, verdict)

    def turn_ending(self, runner: Runner) -> None:
        if runner.chat is not None and runner.chat.failure == "turn cancelled":
            stopped = self.controls.stop_commands_since(self._commands_before)
            if stopped:
                runner.recorder.warning("Ctrl-C stopped " + ", ".join(stopped))
        self.plan.turn_ending(runner)

    def next_action(self, runner: Runner) -> UserAction:
        action = self._next_action(runner)
        if action.message is not None:
            self._commands_before = self.controls.command_ids()
        return action

    def _next_action(self, runner: Runner) -> UserAction:
        if self.plan.pending is not None:
            action = self.plan.approve(runner, self.controls.p.emit)
            if action is not None:
                return action
        while True:
            line = self.t.read(PLAN_PROMPT if self.plan.armed else PROMPT, chat=True)
            if line.key is Key.INTERRUPT:
                if self._armed_exit:
                    return self._leave(OutcomeKind.EXIT, runner)
                self._armed_exit = True
                self.t.line("(Ctrl-C again leaves the session; /exit or Ctrl-D ends it)")
                continue
            self._armed_exit = False
            if line.key is Key.TERMINATE:
                return self._leave(OutcomeKind.CANCELLED, runner)
            if line.key is Key.EOF:
                return self._leave(OutcomeKind.COMPLETED, runner)
            if not line.text.strip():
                continue
            try:
                cmd = parse_line(line.text)
            except ParseError as e:
                self.t.line(str(e))
                continue
            action = self._dispatch(cmd, runner)
            if action is not None:
                return action

    # ------------------------------------------------------------------ commands

    def _leave(self, kind: OutcomeKind, runner: Runner) -> UserAction:
        self.new_session = kind is OutcomeKind.NEW_SESSION
        return UserAction(
            leave=leave_outcome(kind, runner.chat.last_block if runner.chat else None)
        )

    def _dispatch(self, cmd: Command, runner: Runner) -> UserAction | None:
        name, arg = cmd.name, cmd.arg
        if name is None:
            record_prompt(self.controls.workspace, runner.session_id, arg)  # for the page
            if self.plan.armed:
                return self.plan.start(arg)
            return UserAction(message=Message(role="user", content=arg))
        if name == "shell":
            run_user_command(arg, runner, self.controls)
        elif name == "help":
            self.t.line(help_text())
        elif name == "exit":
            return self._leave(OutcomeKind.COMPLETED, runner)
        elif name == "new":
            return self._leave(OutcomeKind.NEW_SESSION, runner)
        elif name == "status":
            self.t.line("\n".join(self.controls.status_lines()))
        elif name == "compact":
            if not self.controls.compaction_available():
                self.t.line("compaction is not available in this build (no context manager)")
            elif not runner.history:
                self.t.line("nothing to compact yet")
            else:
                return UserAction(compact="manual")
        elif name == "plan":
            if arg:
                return self.plan.start(arg)
            self.plan.armed = not self.plan.armed
            self.t.line(
                "plan mode: the next message gets a plan to approve (/plan again: off)"
                if self.plan.armed
                else "plan mode off"
            )
        elif name == "steer":
            self._steer(runner, arg)
        elif name == "effort":
            self.controls.set_effort(arg)
            self.t.line(f"reasoning effort {arg} (a new request segment starts)")
        elif name == "model":
            compact = self.controls.set_model(arg)
            self.t.line(f"model {arg} (a new request segment starts)")
            if compact:
                return UserAction(compact="model_switch")
        return None

    def _steer(self, runner: Runner, text: str) -> None:
        try:
            from vtcode.steering.queue import SteeringQueue
        except ImportError:
            self.t.line("steering is not available in this build")
            return
        from vtcode.errors import VtcodeError

        cfg = self.controls.p.config
        queue = SteeringQueue(
            self.controls.workspace, runner.session_id, lock_timeout=cfg.store.lock_timeout_secs
        )
        try:
            intent = queue.enqueue(text)
        except VtcodeError as e:
            self.t.line(f"[warning] {e}")
            return
        self.t.line(f"queued follow-up {intent.id} (applied after the next model response)")
