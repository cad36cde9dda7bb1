"""The runner: does the work of each state and fires the machine's triggers.

It never decides where the loop goes next. After each step it computes an `Assessment` (the
facts: cancelled, a limit reached, compaction due, ...) and fires a trigger with it; the table in
`fsm_table` chooses the destination. Entering `complete` emits the terminal sequence exactly once:
summary `agent_message`, the terminal turn event, `thread.completed`.

Interactive runs (`vtcode chat`) pass `user_turns`; their user-turn logic (a turn pair per USER
turn, the `idle` state, Ctrl-C ending the turn) lives in `loop.user_turns.ChatTurns` (`chat`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from transitions import EventData

from vtcode.events.enums import InterjectionSource, ToolCallStatus, ToolOutcome
from vtcode.events.types import (
    InterjectedEvent,
    ThreadCompletedEvent,
    ThreadErrorEvent,
    ThreadStartedEvent,
    Usage,
)
from vtcode.loop.call_cap import CallCap
from vtcode.loop.cancel import Cancelled, CancelToken
from vtcode.loop.continuation import Continuation
from vtcode.loop.first_draws import stream_first_reply
from vtcode.loop.fsm import Assessment, LoopMachine, MachineError, check_steps
from vtcode.loop.lead_in import LeadIn
from vtcode.loop.limits import Budget, Limits, LimitWatch
from vtcode.loop.outcomes import (
    Outcome,
    OutcomeKind,
    decide_outcome,
    stop_reason_of,
    unusable_reply,
)
from vtcode.loop.parts import LoopHooks, ToolExecutor, UserTurns
from vtcode.loop.prompt_submit import submit_prompt
from vtcode.loop.recorder import Recorder, StreamingPlan, StreamingToolCall
from vtcode.loop.text_turn import recover_calls
from vtcode.loop.tool_round import step_tools
from vtcode.loop.turn_end import answered, charge_estimate, end_on_reply, provider_failed
from vtcode.loop.user_turns import ChatTurns
from vtcode.messages import (
    Image,
    Message,
    ModelRequest,
    OutputSchema,
    ReasoningDelta,
    ResponseCompleted,
    TextDelta,
    ToolCall,
    ToolCallDelta,
)
from vtcode.providers.base import Provider, ProviderError, active_abort

__all__ = ["STEPS", "RunResult", "Runner"]


@dataclasses.dataclass(frozen=True, slots=True)
class RunResult:
    """What a run ended with (the same facts as its `thread.completed`)."""

    outcome: Outcome
    usage: Usage
    total_cost_usd: float | None
    num_turns: int
    final_text: str | None
    last_plan_text: str | None = None


# Outcomes where the thread itself failed (not a limit, a cancellation or the model's reply).
_THREAD_ERRORS = frozenset({OutcomeKind.FAILED, OutcomeKind.BLOCKED, OutcomeKind.ERROR})


class Runner:
    """Drives one run of the loop over a provider, tools and the dispatch gate."""

    def __init__(
        self,
        *,
        session_id: str,
        thread_id: str | None = None,
        provider: Provider,
        tools: ToolExecutor,
        limits: Limits,
        emit: Callable[[Any], None],
        system_prompt: Callable[[str | None], str],
        history: list[Message] | None = None,
        prompt: str | None = None,
        cancel: CancelToken | None = None,
        hooks: LoopHooks | None = None,
        first_item_index: int = 0,
        reasoning_effort: str | None = None,
        on_message: Callable[[Message], None] | None = None,
        emit_thread_started: bool = True,
        workspace: Path | None = None,
        user_turns: UserTurns | None = None,
        output_schema: OutputSchema | None = None,
        lead_in: LeadIn | None = None,
    ) -> None:
        self.session_id = session_id
        self.thread_id = thread_id or session_id
        self.provider = provider
        self.tools = tools
        self.limits = limits
        self.cancel = cancel or CancelToken()
        self.recorder = Recorder(self._shielded(emit), first_item_index=first_item_index)
        self._system_prompt = system_prompt
        self.lead_in = lead_in  # a compact run's request shape; its replies' file blocks are read
        self.history: list[Message] = list(history or [])
        self.prompt = prompt
        self.hooks = hooks or LoopHooks()
        self.hooks.attach(self.recorder)  # the parts report (warnings, boundaries) through it
        self.reasoning_effort = reasoning_effort
        self._on_message = on_message
        self._emit_thread_started = emit_thread_started
        self.workspace = workspace
        self.budget = Budget(provider.pricing, limits, provider.model)
        self.machine = LoopMachine(on_enter=self._entered)
        self.system: str = ""
        self.turns_executed = 0
        self.watch = LimitWatch(limits)  # tool loops and identical rounds
        self.turn_usage = Usage()
        self.stop_reason: str | None = None
        self.final_text: str | None = None
        self.last_plan_text: str | None = None
        # Set by the chat while a planning turn is open: each response's text also streams as
        # a `plan` item with `plan.delta` events (`vtcode.interactive.plan`).
        self.planning = False
        self.pending_calls: list[tuple[StreamingToolCall, ToolCall]] = []
        self.recovery_used = False
        self._recovering = False  # the next compaction is the recovery one
        self.retries_used = 0
        self.nudged: set[str] = set()  # the kinds of corrective nudge given (text_turn)
        self.output_schema = output_schema  # the final answer's shape (loop/structured.py)
        self.schema_retries_used = 0
        self.continuation: Continuation | None = None  # the plan check (loop/continuation.py)
        self.last_turn_had_tool_output = False
        self.result: RunResult | None = None
        self.prompt_images: tuple[Image, ...] = ()  # go with the prompt's message (exec -i)
        # interactive runs: the user-turn logic lives in its own driver
        self.chat: ChatTurns | None = None if user_turns is None else ChatTurns(self, user_turns)

    def _shielded(self, emit: Callable[[Any], None]) -> Callable[[Any], None]:
        """Every emission completes: a signal during one is acted on after it (finish the event)."""

        def shielded_emit(event: Any) -> None:
            with self.cancel.shielded():
                emit(event)

        return shielded_emit

    # ------------------------------------------------------------------ public

    def run(self) -> RunResult:
        """Run to `complete`, whatever happens; the terminal event is always emitted."""
        try:
            if self._emit_thread_started:
                self.recorder.emit(ThreadStartedEvent(thread_id=self.thread_id))
            self.notices()
            while not self.machine.is_terminal:  # starts in `orient`: orientation is its step
                try:
                    STEPS[self.machine.state](self)
                except Cancelled:
                    if self.chat is None or not self.chat.interrupting():
                        raise
                    self.chat.interrupted()
        except Cancelled:
            self._stop(Outcome(OutcomeKind.CANCELLED))
        except ProviderError as e:  # pragma: no cover - handled in _step_turn
            self._stop(Outcome(OutcomeKind.FAILED, detail=e.message))
        except MachineError as e:
            self._stop(Outcome(OutcomeKind.ERROR, detail=f"internal state machine error: {e}"))
        except Exception as e:
            from vtcode.errors import PersistenceError

            if isinstance(e, PersistenceError):
                raise
            self._stop(Outcome(OutcomeKind.ERROR, detail=f"{type(e).__name__}: {e}"))
        assert self.result is not None
        return self.result

    # ------------------------------------------------------------------ steps

    def facts(self, **kw: bool) -> Assessment:
        if self.cancel.cancelled and self.chat is not None and self.chat.interrupting():
            raise Cancelled(self.cancel.signum)  # handled in `run` as the end of the user turn
        return Assessment(cancelled=self.cancel.cancelled, **kw)

    def _step_orient(self) -> None:
        orientation = self.hooks.orientation()
        self.system = self._system_prompt(orientation)
        waiting = self.chat is not None and not self.recorder.turn_open
        if self.prompt is not None and self.prompt.strip():
            if self.chat is not None and not self.recorder.turn_open:
                self.chat.begin()
            if not submit_prompt(self, self.prompt):
                return  # a user_prompt_submit hook blocked it: the run has ended
            self.prompt = None
            waiting = False
        self.machine.oriented(
            facts=self.facts(
                compaction_due=self.hooks.compaction_due(in_tool_loop=False),
                user_turn_over=waiting,
            ),
        )

    def append(self, message: Message) -> None:
        self.history.append(message)
        if self._on_message is not None:
            self._on_message(message)

    def deliver_follow_up(self, message: Message) -> None:
        """A steering follow-up (`vtcode steer`, chat /steer: both go through the session's
        queue) reaches the running session: `interjected`, then the user message."""
        self.recorder.emit(
            InterjectedEvent(source=InterjectionSource.QUEUE, image_count=len(message.images))
        )
        self.watch.idle_turns = 0  # the user gave new work: earlier idle replies do not count
        self.append(message)

    def _request(self) -> ModelRequest:
        history = self.history if (lead := self.lead_in) is None else lead.shape(self.history)
        return ModelRequest(
            model=self.provider.model,
            messages=(Message(role="system", content=self.system), *history),
            tools=tuple(self.tools.catalog()) if lead is None else (),  # see loop/lead_in.py
            reasoning_effort=self.reasoning_effort,
            output_schema=self.output_schema,
            temperature=None if lead is None else lead.temperature,
        )

    def _plan_stream(self) -> StreamingPlan | None:
        if not self.planning or self.chat is None:
            return None
        return self.recorder.plan(self.thread_id, self.chat.turn_id)

    def _plan_done(self, plan: StreamingPlan | None) -> StreamingPlan | None:
        """Close a streamed plan item; the next one, if text follows the tool calls."""
        if plan is None:
            return None
        plan.finish()
        if plan.item_id is not None:
            self.last_plan_text = plan.text
        return self._plan_stream()

    def _step_turn(self) -> None:
        rec = self.recorder
        stalled = self.watch.stalled() if self.chat is None else None
        if stalled is not None:
            self._stop(stalled)
            return
        if not rec.turn_open and self.chat is not None:
            self.chat.begin()  # a steering follow-up is a user turn of its own
        elif not rec.turn_open:
            rec.turn_started()
            self.turn_usage = Usage()
        if self.chat is not None and self.chat.pending is not None:
            self.append(self.chat.pending)
            self.chat.pending = None
        self.history = self.hooks.edit_history(self.history, rec)
        request = self.hooks.finish_request(self._request())  # + the decision ledger
        self.hooks.before_request(request)
        text = rec.text()
        final_text = ""
        reasoning = rec.reasoning()
        plan = self._plan_stream()
        calls: dict[int, StreamingToolCall] = {}
        call_ids: dict[int, str] = {}
        cap = CallCap(self.limits.max_tool_calls_per_turn)
        completed: ResponseCompleted | None = None
        try:
            with self.cancel.interruptible(wake=active_abort(self.provider)):
                stream = stream_first_reply(self, request)  # drawn again if it is no use
                for ev in stream:
                    if isinstance(ev, TextDelta):
                        if reasoning.item_id is not None and text.item_id is None:
                            reasoning.finish()
                            reasoning = rec.reasoning()
                        text.push(ev.text)
                        if plan is not None:
                            plan.push(ev.text)
                    elif isinstance(ev, ReasoningDelta):
                        reasoning.push(ev.text)
                    elif isinstance(ev, ToolCallDelta):
                        if text.item_id is not None and not calls:
                            text.finish()  # the message is whole once tool calls begin
                            final_text = text.text
                            text = rec.text()
                            plan = self._plan_done(plan)
                        sc = calls.get(ev.index)
                        if sc is None:
                            if not cap.admits(ev.index):
                                continue  # past the cap: counted, never recorded
                            call_id = ev.id or f"call_{self.turns_executed}_{ev.index}"
                            call_ids[ev.index] = call_id
                            name = ev.name or ""
                            as_kind = self.tools.item_kind(name)
                            sc = calls[ev.index] = rec.tool_call(name, call_id, as_kind)
                        if ev.arguments:
                            sc.push(ev.arguments)
                    elif isinstance(ev, ResponseCompleted):
                        completed = ev
        except ProviderError as e:
            # A partial answer is closed as cut short, never as a finished message.
            self._plan_done(plan)
            reasoning.abort(e.message)
            text.abort(e.message)
            provider_failed(self, e, calls)
            return
        except Cancelled:
            self._plan_done(plan)
            reasoning.abort("cancelled")
            text.abort("cancelled")
            received = reasoning.text + text.text + "".join(sc.raw_args for sc in calls.values())
            for sc in calls.values():
                sc.complete(None, ToolCallStatus.FAILED, ToolOutcome.CANCELLED)
                sc.output("cancelled before it ran", ToolCallStatus.FAILED)
            charge_estimate(self, request, received)
            raise
        reasoning.finish()
        text.finish()
        self._plan_done(plan)
        dropped = cap.dropped_message()
        if dropped is not None:
            rec.warning(dropped)
        if completed is None:
            provider_failed(
                self, ProviderError("the model stream ended without a final response event"), calls
            )
            return
        self.turns_executed += 1
        self.retries_used = 0
        self.turn_usage = self.turn_usage.add(completed.usage)
        self.budget.add(completed.usage)
        self.hooks.after_response(completed.usage)
        self.stop_reason = completed.stop_reason
        for w in self.budget.warnings():
            rec.warning(w)
        tool_calls = [
            ToolCall(id=call_ids[i], name=calls[i].name, arguments=calls[i].raw_args)
            for i in sorted(calls)
        ]
        content = final_text + text.text
        pairs = [(calls[i], tc) for i, tc in zip(sorted(calls), tool_calls, strict=True)]
        said = content
        if from_text := not tool_calls:  # calls written into the text (whole ones only)
            cut_off = completed.stop_reason == "max_tokens"
            said, pairs = recover_calls(self, content, cut_off=cut_off)
            tool_calls = [tc for _, tc in pairs]
        self.append(
            Message(
                role="assistant",
                content=said,
                tool_calls=tuple(tool_calls),
                reasoning=reasoning.text or None,
                reasoning_blocks=completed.reasoning_blocks,
            )
        )
        if content.strip():
            self.final_text = content
        self.pending_calls = pairs
        self.watch.saw_response(had_tool_calls=bool(tool_calls))
        unusable = unusable_reply(
            completed.stop_reason, content, bool(tool_calls), calls_from_text=from_text
        )
        if unusable is not None:
            end_on_reply(self, unusable)
            return
        if tool_calls:
            self.watch.tool_loops += 1
            self.machine.responded(facts=self.facts(has_tool_calls=True))
            return
        answered(self, content)

    def notices(self) -> None:
        for text in self.tools.take_notices():
            self.recorder.warning(text)

    def session_limit(self) -> Outcome | None:
        """The limits of the whole run (an interactive session too): turns and budget."""
        return self.watch.session_limit(self.turns_executed, self.budget)

    def limit_outcome(self) -> Outcome | None:
        """Every limit, the run's and the tool loop's, after a round of tools."""
        return self.watch.limit_outcome(self.turns_executed, self.budget)

    def _step_compact(self) -> None:
        # Only the compaction that `provider_failed` asked for is a recovery; a later one that a
        # threshold asks for is `auto`, even after a recovery happened in the same turn.
        trigger = "recovery" if self._recovering else "auto"
        self._recovering = False
        asked = self.chat.compact_trigger if self.chat is not None else None
        at_prompt = asked is not None and self.chat is not None and self.chat.pending is None
        if asked is not None and self.chat is not None:
            trigger, self.chat.compact_trigger = asked, None
        self.history = self.hooks.compact(self.history, trigger=trigger, recorder=self.recorder)
        if trigger == "recovery":
            # Exactly one tool-enabled retry: a second failure is final.
            self.last_turn_had_tool_output = False
        self.machine.compacted(
            facts=self.facts(reset_due=self.hooks.reset_due(), user_turn_over=at_prompt),
        )

    def _step_reset(self) -> None:
        self.hooks.reset(self.recorder)
        # Only orientation survives: the conversation restarts from the original request.
        first_user = next((m for m in self.history if m.role == "user"), None)
        self.history = []
        if first_user is not None:
            self.prompt, self.prompt_images = first_user.content, first_user.images
        self.machine.reset_done(facts=self.facts())

    def step_idle(self) -> None:
        """The `idle` state's work: only an interactive run waits at the prompt."""
        assert self.chat is not None, "idle is entered only by interactive runs"
        self.chat.step_idle()

    # ------------------------------------------------------------------ terminal

    def _stop(self, outcome: Outcome) -> None:
        if self.machine.is_terminal:
            return
        self.machine.stop(facts=Assessment(cancelled=self.cancel.cancelled), ending=outcome)

    def _entered(self, state: str, event: EventData) -> None:
        if state != "complete" or self.result is not None:
            return
        ending = event.kwargs.get("ending")
        proposed = ending if isinstance(ending, Outcome) else None
        self._finish(decide_outcome(proposed, cancelled=self.cancel.cancelled))

    def _finish(self, outcome: Outcome) -> None:
        rec = self.recorder
        success = outcome.kind.is_success
        # An interactive session that ends at the prompt has no turn to report the end in.
        at_prompt = self.chat is not None and not rec.turn_open
        try:
            if outcome.kind is OutcomeKind.INPUT_ERROR:
                # A bad line of streamed input, between turns: the log says which, thread-level.
                rec.emit(ThreadErrorEvent(message=outcome.description()))
            elif not success and not at_prompt:
                # The harness's word on how the run ended, never an agent_message (that is text
                # the model said), and no turn is opened for it: a failure that stops the thread
                # (the provider, an internal error) is the thread-level `error` event; a limit,
                # a cancellation or an unusable reply is an `error` item of the turn.
                if outcome.kind in _THREAD_ERRORS:
                    rec.emit(ThreadErrorEvent(message=outcome.description()))
                else:
                    rec.warning(outcome.description())
            self.hooks.on_finish(outcome, rec)
            if rec.turn_open:
                if success:
                    rec.turn_completed(self.turn_usage)
                else:
                    usage = None if self.turn_usage.is_zero else self.turn_usage
                    rec.turn_failed(outcome.description(), usage)
        finally:
            cost = self.budget.cost
            self.result = RunResult(
                outcome=outcome,
                usage=self.budget.usage,
                total_cost_usd=cost,
                num_turns=self.turns_executed,
                final_text=self.final_text,
                last_plan_text=self.last_plan_text,
            )
            rec.emit(
                ThreadCompletedEvent(
                    thread_id=self.thread_id,
                    session_id=self.session_id,
                    subtype=outcome.kind.subtype,
                    outcome_code=outcome.kind.code,
                    result=(self.final_text or "") if success else None,
                    stop_reason=stop_reason_of(outcome, self.stop_reason),
                    usage=self.budget.usage,
                    total_cost_usd=None if cost is None else round(cost, 10),
                    num_turns=self.turns_executed,
                )
            )


# The work of each state. Every non-final state of the table has exactly one step, checked here
# at import: a state added to `fsm_table` without its work fails on import, not by spinning.
STEPS: dict[str, Callable[[Runner], None]] = {
    "orient": Runner._step_orient,
    "turn": Runner._step_turn,
    "tool": step_tools,
    "compact": Runner._step_compact,
    "reset": Runner._step_reset,
    "idle": lambda runner: runner.step_idle(),
}
check_steps(STEPS)
