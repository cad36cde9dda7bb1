"""How a model turn ends when it cannot end well: an unusable reply (cut by the output cap,
or empty), a cancelled stream (its usage estimated), a provider failure (retry, one recovery
compaction, or the end of the run or of the chat's user turn).

Functions over the runner, kept apart so `runner.py` stays the steps and the machine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vtcode.context.tokens import default_estimator
from vtcode.events.enums import HarnessEventKind, ToolCallStatus, ToolOutcome
from vtcode.events.types import Usage
from vtcode.loop.cancel import Cancelled
from vtcode.loop.continuation import evaluate_or_revise
from vtcode.loop.outcomes import Outcome, OutcomeKind
from vtcode.loop.recorder import StreamingToolCall
from vtcode.loop.structured import ends_or_retries
from vtcode.messages import Message, ModelRequest
from vtcode.providers.base import FailureKind, ProviderError
from vtcode.threads import wait_event

if TYPE_CHECKING:
    from vtcode.loop.runner import Runner

__all__ = ["answered", "charge_estimate", "end_on_reply", "provider_failed"]


def answered(self: Runner, content: str) -> None:
    """A usable reply with no tool calls: the hooks' follow-ups, a nudge or retry when it is not
    the answer asked for, or the end of the turn as a success."""
    self.watch.tool_loops = 0
    self.hooks.on_turn_end(made_progress=bool(content.strip()))
    follow_ups = [] if self.cancel.cancelled else self.hooks.follow_ups()
    if follow_ups:
        if self.chat is not None:
            self.chat.end()
        else:
            self.recorder.turn_completed(self.turn_usage)
        for m in follow_ups:
            self.deliver_follow_up(m)
        limit = self.limit_outcome()
        self.machine.followed_up(
            facts=self.facts(
                limit_reached=limit is not None,
                compaction_due=self.hooks.compaction_due(in_tool_loop=False),
            ),
            ending=limit,
        )
        return
    if ends_or_retries(self, content):  # not the answer asked for: nudged, or the end
        return
    if self.chat is None and evaluate_or_revise(self):  # the plan is not done: revise or end
        return
    if self.chat is None and self.recorder.changed and not self.cancel.cancelled:
        rejected = self.hooks.verify_changes(dict(self.recorder.changed), content, self.recorder)
        if rejected is not None:  # a verifier rejected the changes: never a success
            ending = Outcome(OutcomeKind.BLOCKED, detail=rejected)
            self.machine.responded(facts=self.facts(), ending=ending)
            return
    headless = self.chat is None and not self.cancel.cancelled
    blocked = self.hooks.stop_blocked() if headless else None
    if blocked is not None:  # a stop hook wants more work: its reason is the next user message
        self.recorder.turn_completed(self.turn_usage)
        self.deliver_follow_up(Message(role="user", content=blocked))
        limit = self.limit_outcome()
        self.machine.followed_up(
            facts=self.facts(
                limit_reached=limit is not None,
                compaction_due=self.hooks.compaction_due(in_tool_loop=False),
            ),
            ending=limit,
        )
        return
    self.machine.responded(
        facts=self.facts(user_turn_over=self.chat is not None),
        ending=Outcome(OutcomeKind.SUCCESS),
    )


def end_on_reply(self: Runner, outcome: Outcome) -> None:
    """End the run (a chat: the user turn) on an unusable reply; calls are answered, not run."""
    for sc, call in self.pending_calls:
        note = "not run: the reply was cut off by the output-token cap"
        sc.complete(None, ToolCallStatus.FAILED, ToolOutcome.ERROR)
        sc.output(note, ToolCallStatus.FAILED)
        self.append(Message(role="tool", content=note, tool_call_id=call.id, name=call.name))
    self.pending_calls = []
    self.watch.tool_loops = 0
    self.hooks.on_turn_end(made_progress=False)
    if self.chat is not None:
        self.recorder.warning(outcome.description())
        self.chat.block(outcome)
    self.machine.responded(facts=self.facts(user_turn_over=self.chat is not None), ending=outcome)


def charge_estimate(self: Runner, request: ModelRequest, received: str) -> None:
    """A stream cancelled before the server reported usage still spent tokens: count an
    estimate of what was sent and received (the budget and the usage reports include it)
    and say so, since the wire Usage has no way to mark a figure as estimated."""
    est = default_estimator()
    usage = Usage(input_tokens=est.request(request), output_tokens=est.text_tokens(received))
    self.turn_usage = self.turn_usage.add(usage)
    self.budget.add(usage)
    self.recorder.warning(
        f"usage estimated: the stream was cancelled before the server reported usage; "
        f"counted about {usage.input_tokens} input and {usage.output_tokens} output tokens"
    )


def provider_failed(self: Runner, e: ProviderError, calls: dict[int, StreamingToolCall]) -> None:
    for sc in calls.values():
        sc.complete(None, ToolCallStatus.FAILED, ToolOutcome.CANCELLED)
        sc.output(f"not run: {e.message}", ToolCallStatus.FAILED)
    recoverable = (
        e.kind in (FailureKind.TRANSIENT, FailureKind.CONTEXT_LENGTH)
        and self.last_turn_had_tool_output
        and not self.recovery_used
    )
    if (
        not recoverable
        and e.kind is FailureKind.TRANSIENT
        and e.attempts <= 1  # an HTTP provider that already retried has used the budget
        and self.retries_used < self.limits.max_task_retries
    ):
        # The same request again after a backoff: `turn` -> `turn` through the table.
        self.retries_used += 1
        delay = min(30.0, self.limits.retry_backoff_secs * 2 ** (self.retries_used - 1))
        self.recorder.warning(
            f"provider error (transient): {e.message}; retry {self.retries_used} of "
            f"{self.limits.max_task_retries} in {delay:g}s"
        )
        if wait_event(self.cancel.event, delay):
            raise Cancelled(self.cancel.signum)
        self.machine.provider_failed(facts=self.facts(retry_allowed=True))
        return
    if recoverable:
        self.recovery_used = True
        self._recovering = True
        self.recorder.harness(
            HarnessEventKind.ERROR_RECOVERED,
            message=f"provider failure after tool output; recovering once: {e.message}",
            error_category=e.kind.value,
        )
    detail = f"provider error: {e.message}"
    if self.recovery_used and not recoverable:
        detail = f"provider failed again after recovery compaction: {e.message}"
        kind = OutcomeKind.BLOCKED
    else:
        kind = OutcomeKind.FAILED
    self.stop_reason = "error"  # a stop reason, not prose: the message is in the error item
    turn_over = self.chat is not None and not recoverable
    if turn_over:
        # Interactive: the user turn fails and the session goes on at the prompt.
        self.recorder.warning(detail)
        assert self.chat is not None
        self.chat.block(Outcome(kind, detail=detail))
    self.machine.provider_failed(
        facts=self.facts(recovery_allowed=recoverable, user_turn_over=turn_over),
        ending=Outcome(kind, detail=detail),
    )
