"""Plan mode: the model proposes a plan, the user approves it (four ways) or not.

A planning turn is a user turn whose message asks for a plan only, with the tool catalog cut to
the read-only tools and the request segment's mode `plan`. Each response's text streams as a
`plan` item (`item.started`, `plan.delta` events, `item.completed`, upstream's shape); the last
one is the proposal, saved to `.vtcode/plans/<session>-<turn id>.md`. At the prompt,
`plan.approval.requested` then the choice, `plan.approval.resolved{decision}`:

- execute: a build turn in the same context ("the plan above is approved");
- fresh_context: "clear context and implement" (`vtcode.context.fresh`): `context.reset`, the
  transcript replaced by one handoff directive carrying the plan, then the build turn;
- revise: the user's feedback starts another planning turn;
- cancel: back to the prompt, nothing runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vtcode.events.enums import PlanApprovalDecision
from vtcode.events.types import (
    PlanApprovalRequestedEvent,
    PlanApprovalResolvedEvent,
    ThreadEvent,
)
from vtcode.interactive.controls import Controls
from vtcode.interactive.prompts import EXECUTE_DIRECTIVE, PLAN_DIRECTIVE, REVISE_DIRECTIVE
from vtcode.interactive.terminal import Key, Terminal
from vtcode.loop.parts import UserAction
from vtcode.loop.runner import Runner
from vtcode.messages import Message

__all__ = ["READ_ONLY_TOOLS", "PlanFlow", "Proposal"]

READ_ONLY_TOOLS = ("read_file", "list_files", "grep")
TASK_TRACKER = Path(".vtcode") / "tasks" / "current_task.md"

_CHOICES: dict[str, PlanApprovalDecision] = {
    "1": PlanApprovalDecision.EXECUTE,
    "e": PlanApprovalDecision.EXECUTE,
    "execute": PlanApprovalDecision.EXECUTE,
    "2": PlanApprovalDecision.FRESH_CONTEXT,
    "f": PlanApprovalDecision.FRESH_CONTEXT,
    "fresh": PlanApprovalDecision.FRESH_CONTEXT,
    "3": PlanApprovalDecision.REVISE,
    "r": PlanApprovalDecision.REVISE,
    "revise": PlanApprovalDecision.REVISE,
    "4": PlanApprovalDecision.CANCEL,
    "c": PlanApprovalDecision.CANCEL,
    "cancel": PlanApprovalDecision.CANCEL,
}

MENU = """Plan ready. What now?
  1) execute        implement it in this conversation
  2) fresh context  clear context and implement (the plan is kept)
  3) revise         tell the model what to change
  4) cancel         keep talking, run nothing"""


@dataclasses.dataclass(frozen=True, slots=True)
class Proposal:
    text: str
    turn_id: str
    plan_file: str | None  # workspace-relative


def fresh_handoff() -> Callable[..., Any] | None:
    """`vtcode.context.fresh.fresh_plan_execution_context`, when the context package has it."""
    try:
        from vtcode.context.fresh import fresh_plan_execution_context
    except ImportError:
        return None
    return fresh_plan_execution_context


class PlanFlow:
    """Planning turns and the approval that follows them."""

    def __init__(self, terminal: Terminal, controls: Controls) -> None:
        self.t = terminal
        self.controls = controls
        self.armed = False  # `/plan` without text: the next message is planned
        self.active = False  # the open user turn is a planning turn
        self.pending: Proposal | None = None
        self._saved_tools: Any = None

    # ------------------------------------------------------------------ the planning turn

    def start(self, request: str, *, revise: bool = False) -> UserAction:
        self.armed = False
        self.active = True
        self._saved_tools = self.controls.restrict_tools(READ_ONLY_TOOLS)
        self.controls.set_mode("plan")
        self.controls.runner.planning = True  # each response streams as a plan item
        template = REVISE_DIRECTIVE if revise else PLAN_DIRECTIVE
        text = template.format(feedback=request) if revise else template.format(request=request)
        return UserAction(message=Message(role="user", content=text))

    def turn_ending(self, runner: Runner) -> None:
        """Inside the planning turn: record its answer as the plan."""
        if not self.active:
            return
        self.active = False
        runner.planning = False
        self.controls.restore_tools(self._saved_tools)
        self.controls.set_mode("chat")
        if runner.chat is None or runner.chat.failure is not None:
            return
        # The runner streamed each response of the turn as a plan item (`plan.delta`); the
        # last answer is the proposal.
        text = next((m.content for m in reversed(runner.history) if m.role == "assistant"), "")
        if not text.strip() or runner.last_plan_text != text:
            return
        turn_id = runner.chat.turn_id
        plan_file = self._save(text, runner.session_id, turn_id)
        self.pending = Proposal(text=text, turn_id=turn_id, plan_file=plan_file)

    def _save(self, text: str, session_id: str, turn_id: str) -> str | None:
        from vtcode.fsutil import atomic_write_bytes, ensure_private_dir

        rel = Path(".vtcode") / "plans" / f"{session_id}-{turn_id}.md"
        path = self.controls.workspace / rel
        try:
            ensure_private_dir(path.parent)
            atomic_write_bytes(path, text.encode("utf-8", "surrogatepass"))
        except OSError as e:
            self.t.line(f"[warning] could not save the plan: {e}")
            return None
        return rel.as_posix()

    # ------------------------------------------------------------------ the approval

    def approve(self, runner: Runner, emit: Callable[[ThreadEvent], None]) -> UserAction | None:
        """Ask what to do with the pending plan; an action to run, or None (back to the prompt)."""
        p = self.pending
        assert p is not None
        self.pending = None
        emit(
            PlanApprovalRequestedEvent(
                thread_id=runner.thread_id, turn_id=p.turn_id, plan_file=p.plan_file
            )
        )
        decision = self._choose()
        emit(
            PlanApprovalResolvedEvent(
                thread_id=runner.thread_id, turn_id=p.turn_id, decision=decision, automatic=False
            )
        )
        if decision is PlanApprovalDecision.EXECUTE:
            return UserAction(message=Message(role="user", content=EXECUTE_DIRECTIVE))
        if decision is PlanApprovalDecision.FRESH_CONTEXT:
            return self._fresh(runner, p, emit)
        if decision is PlanApprovalDecision.REVISE:
            line = self.t.read("what should change? ")
            if line.key is Key.TEXT and line.text.strip():
                return self.start(line.text.strip(), revise=True)
            self.t.line("no feedback given: the plan is dropped")
            return None
        self.t.line("plan cancelled")
        return None

    def _choose(self) -> PlanApprovalDecision:
        self.t.line(MENU)
        available = fresh_handoff() is not None
        while True:
            line = self.t.read("choice [1-4]: ")
            if line.key is not Key.TEXT:
                return PlanApprovalDecision.CANCEL
            decision = _CHOICES.get(line.text.strip().lower())
            if decision is PlanApprovalDecision.FRESH_CONTEXT and not available:
                self.t.line("fresh context is not available in this build; pick another choice")
                continue
            if decision is not None:
                return decision
            self.t.line("please pick 1, 2, 3 or 4")

    def _fresh(
        self, runner: Runner, p: Proposal, emit: Callable[[ThreadEvent], None]
    ) -> UserAction:
        handoff = fresh_handoff()
        assert handoff is not None  # _choose offers it only when present
        workspace = self.controls.workspace
        tracker = TASK_TRACKER.as_posix() if (workspace / TASK_TRACKER).is_file() else None
        result = handoff(
            thread_id=runner.thread_id,
            turn_id=p.turn_id,
            plan=p.text,
            context_usage_percent=self.controls.context_percent(),
            plan_path=p.plan_file,
            tracker_path=tracker,
            emit=emit,
            reset=self.controls.fresh_resets(),
        )
        history: list[Message] = list(result.history)
        runner.history = history[:-1]
        return UserAction(message=history[-1])
