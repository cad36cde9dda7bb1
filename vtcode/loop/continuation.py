"""The plan-build-evaluate continuation: a run that tries to finish is checked against its plan.

With a `task_tracker` plan (`vtcode.tools.task_tracker`), a reply with no tool call is not yet
the end: the harness evaluates the plan (`evaluation_started`), runs each step's `verify`
command through the same executor as the model's `exec_command` (sandbox, permissions, hooks;
`verification_started` then `verification_passed|failed` with the exit code), and accepts the
answer only when every step is completed and every command exits 0 (`evaluation_passed`).
Otherwise (`evaluation_failed`) it starts a revision round (`continuation_started`,
`revision_started`) with what failed as the next user message, at most `max_revision_rounds`;
then the run ends `blocked` (error_during_execution, a blocked handoff written), never success.
A run that never wrote a plan is accepted as before.
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import TYPE_CHECKING

from vtcode.events.enums import HarnessEventKind as H
from vtcode.events.enums import ToolOutcome
from vtcode.loop.outcomes import Outcome, OutcomeKind
from vtcode.messages import Message, ToolCall
from vtcode.tools.exec_tools import MAX_YIELD_MS
from vtcode.tools.task_tracker import TaskTracker

if TYPE_CHECKING:
    from vtcode.loop.runner import Runner

__all__ = ["Continuation", "evaluate_or_revise"]

VERIFY_TOOL = "exec_command"
VERIFY_WAIT_MS = MAX_YIELD_MS  # the longest exec_command waits; still running = failed
_TAIL = 1500  # bytes of a failed command's output given back to the model


@dataclasses.dataclass(slots=True)
class Continuation:
    tracker: TaskTracker
    max_revision_rounds: int
    rounds_used: int = 0


def _verify(self: Runner, number: int, command: str, attempt: int) -> tuple[bool, str]:
    """Run one step's verify command; `attempt` is the evaluation's (1 = the first finish)."""
    rec = self.recorder
    rec.harness(H.VERIFICATION_STARTED, command=command, attempt=attempt, message=f"step {number}")
    started = time.monotonic()
    args = {"command": command, "yield_time_ms": VERIFY_WAIT_MS}
    call = ToolCall(id=f"verify_{number}", name=VERIFY_TOOL, arguments=json.dumps(args))
    result = self.tools.execute(call, args, self.cancel)
    ms = int((time.monotonic() - started) * 1000)
    ok = result.outcome is ToolOutcome.SUCCESS and result.exit_code == 0
    text = _command_output(result.output)
    kind = H.VERIFICATION_PASSED if ok else H.VERIFICATION_FAILED
    fields: dict[str, object] = {"command": command, "duration_ms": ms, "attempt": attempt}
    if result.exit_code is not None:
        fields["exit_code"] = result.exit_code
    if not ok:
        fields["message"] = text or f"exit code {result.exit_code}"
    rec.harness(kind, **fields)
    return ok, text


def _command_output(raw: str) -> str:
    """What the command printed (its last bytes): `exec_command` answers with a JSON envelope
    (timings, session id) that is not the command's and would differ on every run; a refusal
    (permission, hook, bad arguments) is plain text and kept as it is."""
    try:
        envelope = json.loads(raw)
    except ValueError:
        return raw[-_TAIL:]
    out = envelope.get("output") if isinstance(envelope, dict) else None
    return out[-_TAIL:] if isinstance(out, str) else raw[-_TAIL:]


def _failures(self: Runner, cont: Continuation) -> list[str]:
    failures: list[str] = []
    for n, step in enumerate(cont.tracker.steps, 1):
        if step.status != "completed":
            failures.append(f"step {n} ({step.title}) is {step.status}, not completed")
            continue
        if step.verify:
            ok, output = _verify(self, n, step.verify, cont.rounds_used + 1)
            if not ok:
                said = f":\n{output.strip()}" if output.strip() else " (no output)"
                failures.append(f"step {n} ({step.title}): `{step.verify}` failed{said}")
    return failures


def evaluate_or_revise(self: Runner) -> bool:
    """For a reply that would end the run: True when the harness took over (a revision round
    started, or the run ended blocked); False when the answer stands (no plan, or it passed)."""
    cont = self.continuation
    if cont is None or not cont.tracker.steps or self.cancel.cancelled:
        return False
    rec = self.recorder
    rec.harness(H.EVALUATION_STARTED, message=f"{len(cont.tracker.steps)} step(s)")
    failures = _failures(self, cont)
    if not failures:
        rec.harness(H.EVALUATION_PASSED, message="every step completed and verified")
        return False
    summary = "\n".join(f"- {f}" for f in failures)
    rec.harness(H.EVALUATION_FAILED, message=summary)
    limit = self.limit_outcome()
    if cont.rounds_used >= cont.max_revision_rounds or limit is not None:
        ending = limit or Outcome(
            OutcomeKind.BLOCKED,
            detail=(
                f"the plan is not done after {cont.rounds_used} revision round(s) "
                f"(max_revision_rounds = {cont.max_revision_rounds}):\n{summary}"
            ),
        )
        self.machine.responded(facts=self.facts(), ending=ending)
        return True
    cont.rounds_used += 1
    rec.harness(
        H.CONTINUATION_STARTED,
        message=f"revision round {cont.rounds_used} of {cont.max_revision_rounds}",
    )
    rec.harness(H.REVISION_STARTED, attempt=cont.rounds_used, message=summary)
    rec.turn_completed(self.turn_usage)
    self.append(
        Message(
            role="user",
            content=(
                "The task is not done yet; the harness checked your plan (task_tracker):\n"
                f"{summary}\nFix what failed, update the plan, and finish only when every "
                f"step is completed and its verify command passes (revision round "
                f"{cont.rounds_used} of {cont.max_revision_rounds})."
            ),
        )
    )
    self.machine.followed_up(
        facts=self.facts(compaction_due=self.hooks.compaction_due(in_tool_loop=False)),
    )
    return True
