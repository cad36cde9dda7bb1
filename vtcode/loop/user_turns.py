"""The user-turn logic of an interactive run (`vtcode chat`), apart from the runner.

A chat's turn is a USER turn: one `turn.started … turn.completed|failed` pair spans the model
requests and tool rounds that answer one message. Between turns the machine waits in `idle` for
the user's next action; a SIGINT cancels the user turn (`turn.failed{"turn cancelled"}`), not
the session. Headless runs have no `ChatTurns` and never enter `idle`.
"""

from __future__ import annotations

import signal
from typing import TYPE_CHECKING

from vtcode.events.enums import ToolCallStatus, ToolOutcome
from vtcode.events.types import Usage
from vtcode.loop.fsm import Assessment
from vtcode.loop.outcomes import Outcome, OutcomeKind
from vtcode.loop.parts import UserAction, UserTurns
from vtcode.messages import Message

if TYPE_CHECKING:
    from vtcode.loop.runner import Runner

__all__ = ["ChatTurns"]


class ChatTurns:
    """The user turns of one interactive run, driven by the runner's `idle` state."""

    def __init__(self, runner: Runner, user: UserTurns) -> None:
        self.runner = runner
        self.user = user
        self.count = 0  # user turns begun
        self.failure: str | None = None  # why the open user turn failed (None: it did not)
        self.last_block: Outcome | None = None  # the last user turn ended blocked/aborted
        self.pending: Message | None = None  # the user's message, sent with the next request
        self.compact_trigger: str | None = None  # `/compact` or a model switch asked for one

    @property
    def turn_id(self) -> str:
        """The open user turn's id in plan events (`turn-1` for the first)."""
        return f"turn-{self.count}"

    def interrupting(self) -> bool:
        """SIGINT cancels the user turn only (SIGTERM still ends the session); a scripted
        front end has no prompt to come back to, so there SIGINT ends the session."""
        return not self.user.headless and self.runner.cancel.signum == signal.SIGINT

    def begin(self) -> None:
        """A new user turn: its own turn pair, per-turn counters and one recovery."""
        r = self.runner
        self.count += 1
        self.failure = None
        r.watch.reset()
        r.recovery_used = False
        r.retries_used = 0
        r.schema_retries_used = 0  # each user turn's answer gets its own output-schema retries
        r.last_turn_had_tool_output = False
        r.recorder.turn_started()
        r.turn_usage = Usage()

    def block(self, outcome: Outcome) -> None:
        """The user turn ends blocked (a hard block) or aborted; the session goes on."""
        blocked = outcome.kind.is_hard_block or outcome.kind is OutcomeKind.BLOCKED
        self.failure = "turn blocked" if blocked else "turn aborted"
        self.last_block = outcome

    def end(self) -> None:
        """Close the open user turn (upstream: completed, or failed with usage if non-zero)."""
        r = self.runner
        self.user.turn_ending(r)
        if self.failure is None:
            self.last_block = None
            r.recorder.turn_completed(r.turn_usage)
        else:
            usage = None if r.turn_usage.is_zero else r.turn_usage
            r.recorder.turn_failed(self.failure, usage)

    def step_idle(self) -> None:
        """Wait at the prompt; what the user does decides the next state."""
        r = self.runner
        if r.recorder.turn_open:
            self.end()
        limit = r.session_limit()
        if limit is not None:  # the session is over: do not prompt for more
            r.machine.user_input(facts=Assessment(limit_reached=True), ending=limit)
            return
        action = self.user.next_action(r)
        while action == UserAction():  # nothing to act on: ask again
            action = self.user.next_action(r)
        if r.cancel.cancelled and self.interrupting():
            # A Ctrl-C between prompts (no turn to cancel, no prompt to end) is dropped.
            r.cancel.event.clear()
            r.cancel.signum = None
        due = r.hooks.compaction_due(in_tool_loop=False) if action.leave is None else False
        if action.message is not None:
            self.pending = action.message
            self.begin()
        self.compact_trigger = action.compact
        r.machine.user_input(
            facts=Assessment(
                cancelled=r.cancel.cancelled,
                leaving=action.leave is not None,
                compaction_due=due or action.compact is not None,
            ),
            ending=action.leave,
        )

    def interrupted(self) -> None:
        """SIGINT in a user turn: answer every open call, fail the turn, keep going."""
        r = self.runner
        answered = set()
        for m in reversed(r.history):
            if m.role != "tool":
                break
            answered.add(m.tool_call_id)
        for sc, call in r.pending_calls:
            if call.id in answered:
                continue
            sc.complete(None, ToolCallStatus.FAILED, ToolOutcome.CANCELLED)
            sc.output("cancelled before it ran", ToolCallStatus.FAILED)
            r.append(
                Message(role="tool", content="cancelled", tool_call_id=call.id, name=call.name)
            )
        r.pending_calls = []
        self.pending = None
        self.compact_trigger = None
        r.cancel.event.clear()
        r.cancel.signum = None
        if r.recorder.turn_open:
            self.failure = "turn cancelled"
        r.machine.stop(facts=Assessment(interrupted=True))
