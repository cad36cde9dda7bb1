"""The `tool` state: run the tool calls of the last model response and assess what follows.

Every call is answered (run, refused by a per-turn limit, or cancelled), so the model always
gets a tool message per call; then limits, repetition, reset and compaction are assessed and
the `tools_done` trigger lets the table choose the next state.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from vtcode.events.enums import HarnessEventKind, ToolCallStatus, ToolOutcome
from vtcode.loop.cancel import Cancelled
from vtcode.loop.outcomes import Outcome, OutcomeKind
from vtcode.loop.parallel import run_read_only_batches
from vtcode.loop.parts import ToolRunOutcome
from vtcode.loop.recorder import StreamingToolCall
from vtcode.loop.text_turn import task_of
from vtcode.loop.verified_stop import verified_after_change
from vtcode.messages import Message

if TYPE_CHECKING:
    from vtcode.loop.runner import Runner

__all__ = ["step_tools"]

# Repeating these is how a long command is waited on, not a sign of a stuck loop.
POLLING_TOOLS = frozenset({"write_stdin"})
# A write repeated with the same arguments after it succeeded changes nothing; small models do it
# instead of finishing (issue 28: every solved run on qwen0.5b/1.5b repeated its write_file until
# loop detection or the turn limit), so the result says so and how to finish.
WRITE_TOOLS = frozenset({"write_file", "apply_patch"})
REPEATED_WRITE_NOTE = (
    "\n\nNote: this exact {name} call already succeeded earlier in this run. If the task is "
    "done, reply with a one-line summary and no tool call."
)


# A call refused for what the model wrote (an unknown tool, arguments that are not JSON or fail
# the schema, past the per-turn cap), not by a permission rule or hook.
_MALFORMED = frozenset({ToolOutcome.INVALID_TOOL, ToolOutcome.ERROR})


def step_tools(self: Runner) -> None:
    """The `tool` state's work: run the calls of the last response, in order, then assess."""
    rec = self.recorder
    turn_started = time.monotonic()
    waited = 0.0
    signature_parts: list[str] = []
    had_output = False
    changed = False  # a file written, or a command that exited 0 (it may have changed files)
    cap = self.limits.max_tool_calls_per_turn
    calls = [call for _, call in self.pending_calls]
    ran_together = run_read_only_batches(
        calls,
        self.tools,
        self.cancel,
        limit=self.limits.max_parallel_tool_calls,
        runnable=min(cap, len(calls)) if cap else len(calls),
    )
    for index, (sc, call) in enumerate(self.pending_calls):
        if self.cancel.cancelled:
            sc.complete(None, ToolCallStatus.FAILED, ToolOutcome.CANCELLED)
            sc.output("cancelled before it ran", ToolCallStatus.FAILED)
            self.append(
                Message(role="tool", content="cancelled", tool_call_id=call.id, name=call.name)
            )
            continue
        spent = time.monotonic() - turn_started - waited
        declined = False
        arguments: Any = None
        try:
            arguments = call.parsed_arguments()
            parse_error = None
        except ValueError as e:
            parse_error = f"invalid JSON arguments for {call.name}: {e}"
        if cap and index >= cap:
            result = ToolRunOutcome(
                output=f"tool call limit per turn reached ({cap}); call not run",
                status=ToolCallStatus.FAILED,
                outcome=ToolOutcome.ERROR,
                rejected=True,
            )
        elif spent >= self.limits.max_tool_wall_clock_secs:
            result = ToolRunOutcome(
                output=(
                    "per-turn tool wall-clock budget exhausted "
                    f"({self.limits.max_tool_wall_clock_secs:g}s); call not run"
                ),
                status=ToolCallStatus.FAILED,
                outcome=ToolOutcome.ERROR,
                rejected=True,
            )
        elif parse_error is not None:
            result = ToolRunOutcome(
                output=parse_error,
                status=ToolCallStatus.FAILED,
                outcome=ToolOutcome.ERROR,
                rejected=True,
            )
        elif self.lead_in is not None and call.id in self.lead_in.refused:
            declined = True  # a readable call the harness's guard declined: not malformed
            result = ToolRunOutcome(  # a file block over a file the model has not seen
                output=self.lead_in.refused.pop(call.id),
                status=ToolCallStatus.FAILED,
                outcome=ToolOutcome.ERROR,
                rejected=True,
            )
        elif index in ran_together:
            result = ran_together[index]
        else:
            if self.lead_in is not None and call.id in self.lead_in.spliced:
                # a block over a big file's excerpt: the whole file is what is written
                arguments = {**arguments, "content": self.lead_in.spliced.pop(call.id)}
            try:
                result = self.tools.execute(call, arguments, self.cancel)
            except Cancelled:
                sc.complete(arguments, ToolCallStatus.FAILED, ToolOutcome.CANCELLED)
                sc.output("cancelled while running", ToolCallStatus.FAILED)
                self.append(
                    Message(
                        role="tool",
                        content="cancelled while running",
                        tool_call_id=call.id,
                        name=call.name,
                    )
                )
                raise
        waited += result.wait_seconds
        if call.name in WRITE_TOOLS and result.outcome is ToolOutcome.SUCCESS:
            key = f"{call.name}\x00{json.dumps(arguments, sort_keys=True)}"
            if key in self.watch.succeeded_writes:
                result.output += REPEATED_WRITE_NOTE.format(name=call.name)
            self.watch.succeeded_writes.add(key)
        _emit_tool_result(self, sc, arguments if parse_error is None else call.arguments, result)
        self.append(
            Message(role="tool", content=result.output, tool_call_id=call.id, name=call.name)
        )
        had_output = had_output or result.outcome is ToolOutcome.SUCCESS
        self.watch.succeeded_calls += result.outcome is ToolOutcome.SUCCESS
        noop_write = call.name in WRITE_TOOLS and not result.file_changes
        self.watch.effective_calls += not result.rejected and not noop_write
        self.watch.noop_writes += result.outcome is ToolOutcome.SUCCESS and noop_write
        self.watch.attempted_calls += 1
        if call.name == "exec_command" and result.exit_code == 0 and isinstance(arguments, dict):
            self.watch.commands_ok.append(str(arguments.get("command", "")))
            changed = True
        changed = changed or bool(result.file_changes)
        # (answer-from-config, 2026-12-07: a refused block counted as malformed ended the run
        # as "every call was malformed" before the nudge for the file the task asks for)
        malformed = result.rejected and result.outcome in _MALFORMED and not declined
        self.watch.well_formed_calls += not malformed
        if call.name not in POLLING_TOOLS:
            signature_parts.append(
                f"{call.name}\x00{call.arguments}\x00{result.status}\x00{result.exit_code}"
            )
    self.pending_calls = []
    self.last_turn_had_tool_output = had_output
    self.hooks.on_turn_end(made_progress=had_output)
    for m in [] if self.cancel.cancelled else self.hooks.follow_ups():
        self.deliver_follow_up(m)
    self.watch.saw_round("\x01".join(signature_parts))
    verified = changed and verified_after_change(self, task_of(self))  # never when cancelled
    limit = None if verified else self.limit_outcome()
    if rec.turn_open and self.chat is None and limit is None and not self.cancel.cancelled:
        # A run that ends here (a limit, a cancellation) fails this turn, the one whose request
        # was made, instead of opening a turn with no request behind it.
        rec.turn_completed(self.turn_usage)
    blocked = limit is not None and self.chat is not None and limit.kind.is_hard_block
    if blocked and limit is not None and self.chat is not None:
        # Interactive: a hard block ends the user turn ("turn blocked"), not the session.
        rec.warning(limit.description())
        self.chat.block(limit)
        limit = None
    in_tool_loop = True
    self.machine.tools_done(
        facts=self.facts(
            user_turn_over=blocked,
            limit_reached=limit is not None,
            task_verified=verified,
            reset_due=self.hooks.reset_due(),
            compaction_due=self.hooks.compaction_due(in_tool_loop=in_tool_loop),
        ),
        ending=Outcome(OutcomeKind.SUCCESS) if verified else limit,
    )


def _emit_tool_result(
    self: Runner, sc: StreamingToolCall, arguments: Any, r: ToolRunOutcome
) -> None:
    rec = self.recorder
    name = sc.name
    for retry in r.retries:  # upstream's harness items, before the call's own result
        rec.harness(
            HarnessEventKind.TOOL_RETRY_ATTEMPTED,
            message=f"{name}: {retry.error}; retry {retry.attempt} after {retry.delay_ms}ms",
            attempt=retry.attempt,
            error_category=retry.category,
        )
    if r.retries and r.outcome is ToolOutcome.SUCCESS:
        rec.harness(
            HarnessEventKind.ERROR_RECOVERED,
            message=f"{name} recovered after {len(r.retries)} retries",
            attempt=len(r.retries),
            error_category=r.retries[-1].category,
        )
    sc.complete(arguments, r.status, r.outcome)
    sc.output(
        r.output,
        r.status,
        exit_code=r.exit_code,
        spool_path=r.spool_path,
        started=r.rejected,
    )
    if r.rejected and r.outcome is not ToolOutcome.SUCCESS:
        rec.warning(r.output)
    if r.file_changes:
        rec.file_changes(r.file_changes)
    self.notices()
