"""The loop's state machine: the table is the control flow, and every run ends exactly once.

The stateful test drives the REAL runner with a provider whose responses hypothesis chooses
(text, tool calls, transient/fatal failures, cancellation at any point) and checks the event
sequence invariants users rely on: one `thread.started` first, exactly one `thread.completed`
last, balanced turns, and a machine that ends in `complete`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from vtcode.events.codec import encode_event
from vtcode.events.enums import ToolCallStatus, ToolOutcome
from vtcode.events.types import ThreadCompletedEvent, Usage
from vtcode.loop.cancel import CancelToken
from vtcode.loop.fsm import Assessment, LoopMachine, MachineError, as_json, as_mermaid
from vtcode.loop.fsm_table import GUARDS, STATES, TERMINAL, TRANSITIONS
from vtcode.loop.limits import Limits
from vtcode.loop.parts import ToolExecutor, ToolRunOutcome
from vtcode.loop.runner import Runner
from vtcode.messages import (
    ModelRequest,
    ResponseCompleted,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
)
from vtcode.providers.base import FailureKind, Pricing, ProviderError
from vtcode.schemas import fast_validator

STATE_NAMES = {s.name for s in STATES}


def test_table_is_well_formed() -> None:
    for t in TRANSITIONS:
        assert t.dest in STATE_NAMES
        assert set(t.source) <= STATE_NAMES
        assert set(t.conditions) <= set(GUARDS)
        assert TERMINAL not in t.source, "the terminal state has no way out"
    # every state is reachable from the initial one, and every live state can stop
    reachable = {"orient"}
    changed = True
    while changed:
        changed = False
        for t in TRANSITIONS:
            if set(t.source) & reachable and t.dest not in reachable:
                reachable.add(t.dest)
                changed = True
    assert reachable == STATE_NAMES
    stoppable = {s for t in TRANSITIONS if t.trigger == "stop" for s in t.source}
    assert stoppable == STATE_NAMES - {TERMINAL}


def test_guard_chain_order_picks_first_passing() -> None:
    m = LoopMachine()
    m.oriented(facts=Assessment())
    m.responded(facts=Assessment(has_tool_calls=True))
    assert m.state == "tool"
    # limit beats compaction, compaction beats the plain next request
    m.tools_done(facts=Assessment(limit_reached=True, compaction_due=True))
    assert m.state == "complete"
    with pytest.raises(MachineError):
        m.responded(facts=Assessment())


def test_renderings_come_from_the_table(snapshot: Any) -> None:
    data = as_json()
    assert len(data["transitions"]) == len(TRANSITIONS)
    mermaid = as_mermaid()
    for t in TRANSITIONS:
        for src in t.source:
            assert f"{src} --> {t.dest} : {t.trigger}" in mermaid
    assert mermaid == snapshot


@given(st.lists(st.sampled_from([t.trigger for t in TRANSITIONS]), max_size=30), st.data())
def test_random_triggers_never_leave_complete(triggers: list[str], data: st.DataObject) -> None:
    entered: list[str] = []
    m = LoopMachine(on_enter=lambda s, e: entered.append(s))
    for name in triggers:
        facts = Assessment(**{g: data.draw(st.booleans()) for g in GUARDS})
        was_terminal = m.is_terminal
        try:
            m.trigger(name, facts=facts)
        except MachineError:
            assert m.state in STATE_NAMES
        if was_terminal:
            assert m.is_terminal
    if not m.is_terminal:
        m.stop(facts=Assessment())
    assert m.is_terminal
    assert entered.count(TERMINAL) == 1


# ---------------------------------------------------------------------------------------------
# The real runner under random provider behaviour


class ScriptedProvider:
    """A provider whose next response is drawn by hypothesis (the replay provider's contract)."""

    name = "hypothesis"
    model = "test-model"
    context_window = 200_000

    def __init__(self, data: st.DataObject, cancel: CancelToken, priced: bool) -> None:
        self.data = data
        self.cancel = cancel
        self._pricing = Pricing(input_per_mtok=3.0, output_per_mtok=15.0) if priced else None
        self.calls = 0

    @property
    def pricing(self) -> Pricing | None:
        return self._pricing

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        self.calls += 1
        kind = self.data.draw(
            st.sampled_from(["text", "tools", "transient", "fatal", "cancel", "truncated"])
        )
        if kind == "transient":
            raise ProviderError("503 from upstream", kind=FailureKind.TRANSIENT)
        if kind == "fatal":
            raise ProviderError("401 unauthorized", kind=FailureKind.FATAL)
        yield TextDelta("working on it ")
        if kind == "cancel":
            self.cancel.cancel()
        if kind == "truncated":
            return
        if kind == "tools":
            n = self.data.draw(st.integers(1, 3))
            for i in range(n):
                yield ToolCallDelta(index=i, id=f"c{self.calls}_{i}", name="echo")
                yield ToolCallDelta(index=i, arguments='{"text": "x"}')
            yield ResponseCompleted("tool_calls", Usage(input_tokens=100, output_tokens=10))
            return
        yield TextDelta("done")
        yield ResponseCompleted("end_turn", Usage(input_tokens=100, output_tokens=5))

    def close(self) -> None:
        pass


class EchoTools(ToolExecutor):
    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def execute(self, call: ToolCall, arguments: Any, cancel: CancelToken) -> ToolRunOutcome:
        ok = self.data.draw(st.booleans())
        return ToolRunOutcome(
            output="echo",
            status=ToolCallStatus.COMPLETED if ok else ToolCallStatus.FAILED,
            outcome=ToolOutcome.SUCCESS if ok else ToolOutcome.ERROR,
        )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.integers(1, 6), st.booleans(), st.sampled_from([None, 0.0005, 1.0]))
def test_every_run_ends_with_exactly_one_thread_completed(
    data: st.DataObject, max_turns: int, priced: bool, budget: float | None
) -> None:
    events: list[Any] = []
    cancel = CancelToken()
    runner = Runner(
        session_id="s1",
        provider=ScriptedProvider(data, cancel, priced),
        tools=EchoTools(data),
        limits=Limits(
            max_turns=max_turns,
            max_tool_loops=4,
            max_tool_calls_per_turn=2,
            max_tool_wall_clock_secs=600,
            max_budget_usd=budget,
            budget_warning_threshold=0.75,
        ),
        emit=events.append,
        system_prompt=lambda o: "system",
        prompt="do the thing",
        cancel=cancel,
    )
    result = runner.run()
    types = [type(e).__name__ for e in events]
    assert types[0] == "ThreadStartedEvent"
    assert types.count("ThreadCompletedEvent") == 1
    assert types[-1] == "ThreadCompletedEvent"
    assert runner.machine.is_terminal
    depth = 0
    for t in types:
        if t == "TurnStartedEvent":
            assert depth == 0
            depth += 1
        elif t in ("TurnCompletedEvent", "TurnFailedEvent"):
            assert depth == 1
            depth -= 1
    assert depth == 0
    done = events[-1]
    assert isinstance(done, ThreadCompletedEvent)
    assert done.subtype == result.outcome.kind.subtype
    assert (done.result is not None) == result.outcome.kind.is_success
    assert done.num_turns <= max_turns
    assert (done.total_cost_usd is None) == (not priced)
    validator = fast_validator("thread-event")
    for e in events:
        assert validator.is_valid(encode_event(e)), encode_event(e)


class RandomTriggers(RuleBasedStateMachine):
    """Fire any trigger with any facts; the machine must stay consistent and end once."""

    def __init__(self) -> None:
        super().__init__()
        self.completions = 0
        self.m = LoopMachine(on_enter=self._entered)

    def _entered(self, state: str, event: Any) -> None:
        if state == TERMINAL:
            self.completions += 1

    @rule(
        name=st.sampled_from(sorted({t.trigger for t in TRANSITIONS})),
        facts=st.builds(Assessment, **{g: st.booleans() for g in GUARDS}),
    )
    def fire(self, name: str, facts: Assessment) -> None:
        with contextlib.suppress(MachineError):
            self.m.trigger(name, facts=facts)

    @invariant()
    def at_most_one_completion(self) -> None:
        assert self.completions <= 1
        assert (self.completions == 1) == self.m.is_terminal

    def teardown(self) -> None:
        if not self.m.is_terminal:
            self.m.stop(facts=Assessment())
        assert self.completions == 1


TestRandomTriggers = RandomTriggers.TestCase


def test_every_live_state_has_exactly_one_step() -> None:
    """The runner's step table matches the FSM table; a state without work fails at import."""
    from vtcode.loop.fsm import check_steps
    from vtcode.loop.fsm_table import STATES
    from vtcode.loop.runner import STEPS

    assert set(STEPS) == {s.name for s in STATES if not s.final}
    with pytest.raises(RuntimeError, match=r"missing \['idle'\]"):
        check_steps({k: v for k, v in STEPS.items() if k != "idle"})
    with pytest.raises(RuntimeError, match=r"unknown \['nap'\]"):
        check_steps({**STEPS, "nap": STEPS["turn"]})
