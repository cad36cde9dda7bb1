"""Cron-driven loops: each `vtcode loop run` resumes a loop where it stopped and runs N steps.

A step is one exec-style session (with orientation) whose prompt is the loop prompt plus
"step k". The crash-safe protocol, all under the loop's lock and with atomic state writes:

1. record "step k started (session S)" before running it;
2. run the session; record "step k done/failed" with its usage, cost and outcome after it.

An invocation that finds a step still `started` knows its process died (the lock was free):
that step is marked `interrupted` and re-run as a NEW session (the killed session stays on
disk as it was). A finished step is never run again. The budget is checked before every step.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from vtcode.clock import rfc3339
from vtcode.config.model import VtcodeConfig
from vtcode.errors import ExitCode, UsageError, VtcodeError
from vtcode.ids import check_id, new_session_id
from vtcode.jsontypes import encode
from vtcode.orient.loop_state import (
    add_usage,
    check_budget,
    last_step,
    load_state,
    loop_lock,
    new_state,
    save_state,
)
from vtcode.orient.models import (
    BudgetStatus,
    CostBudget,
    LoopRunState,
    LoopStatus,
    LoopStep,
    LoopStepStatus,
)
from vtcode.orient.progress import is_complete, load_progress
from vtcode.providers.registry import chosen_provider
from vtcode.runtime.exec_run import ExecRequest, run_exec
from vtcode.runtime.hooks import default_hooks_factory
from vtcode.store.layout import session_dir
from vtcode.tools.tool_limits import ToolLimits

__all__ = ["LoopRunReport", "LoopRunRequest", "run_loop", "step_prompt"]


def step_prompt(prompt: str, k: int) -> str:
    """The prompt of step k: the loop prompt plus `step k`."""
    return f"{prompt.rstrip()}\n\nstep {k}"


@dataclasses.dataclass(kw_only=True)
class LoopRunRequest:
    """What `vtcode loop run` asks for; budget fields override (and update) the stored budget."""

    workspace: Path
    config: VtcodeConfig
    loop_id: str
    prompt: str | None = None
    steps: int = 1
    max_steps: int | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    provider: str | None = None
    script: str | None = None
    model: str | None = None
    max_turns: int | None = None
    sinks_factory: Callable[[], Sequence[Any]] | None = None
    notify: Callable[[str], None] | None = None
    warn: Callable[[str], None] | None = None  # said even with -q (sessions retention removed)
    tool_limits: ToolLimits | None = None  # --tools / --allowed-tools / --disallowed-tools


@dataclasses.dataclass(frozen=True, slots=True)
class LoopRunReport:
    loop_id: str
    exit_code: ExitCode
    state: LoopRunState
    steps_run: list[LoopStep]
    budget_status: BudgetStatus | None
    message: str

    def to_json(self) -> dict[str, Any]:

        out: dict[str, Any] = {
            "loop_id": self.loop_id,
            "exit_code": int(self.exit_code),
            "message": self.message,
            "steps_run": encode(self.steps_run),
            "state": encode(self.state),
        }
        if self.budget_status is not None:
            out["budget_status"] = self.budget_status.value
        return out


_EXIT_BY_NAME = {e.value: e for e in ExitCode}


def _exit(code: int) -> ExitCode:
    return _EXIT_BY_NAME.get(code, ExitCode.FAILURE)


def _budget(req: LoopRunRequest, current: CostBudget | None) -> CostBudget:
    base = current or CostBudget()
    return CostBudget(
        max_total_tokens=req.max_tokens if req.max_tokens is not None else base.max_total_tokens,
        max_cost_usd=req.max_cost_usd if req.max_cost_usd is not None else base.max_cost_usd,
        max_steps=req.max_steps if req.max_steps is not None else base.max_steps,
    )


def _replace_last(state: LoopRunState, step: LoopStep) -> list[LoopStep]:
    return [*state.steps[:-1], step]


def run_loop(req: LoopRunRequest) -> LoopRunReport:
    """Run up to `req.steps` steps of the loop; raises `LockBusyError` (75) when it is busy."""
    loop_id = check_id(req.loop_id, "loop id")
    if req.steps < 1:
        raise UsageError("--steps must be at least 1")
    ws = req.workspace
    say = req.notify or (lambda _m: None)
    with loop_lock(ws, loop_id):
        state = load_state(ws, loop_id)
        if state is None:
            if not (req.prompt and req.prompt.strip()):
                raise UsageError(
                    f"loop {loop_id!r} does not exist yet: its first run needs a PROMPT",
                    hint=f'vtcode loop run --id {loop_id} "what each step should do"',
                )
            state = save_state(ws, new_state(loop_id, prompt=req.prompt, budget=_budget(req, None)))
            say(f"loop {loop_id}: created")
        else:
            changes: dict[str, Any] = {}
            budget = _budget(req, state.budget)
            if budget != state.budget:
                changes["budget"] = budget
            if req.prompt and req.prompt.strip() and req.prompt != state.prompt:
                changes["prompt"] = req.prompt
            if changes:
                state = save_state(ws, dataclasses.replace(state, **changes))
        if state.status is LoopStatus.COMPLETED:
            return LoopRunReport(
                loop_id, ExitCode.OK, state, [], None, f"loop {loop_id} is already complete"
            )
        if not (state.prompt and state.prompt.strip()):
            raise UsageError(f"loop {loop_id!r} has no prompt; pass PROMPT")
        state = _recover_interrupted(ws, state, say)
        return _run_steps(req, state, say)


def _recover_interrupted(ws: Path, state: LoopRunState, say: Callable[[str], None]) -> LoopRunState:
    last = last_step(state)
    if last is None or last.status is not LoopStepStatus.STARTED:
        return state
    marked = dataclasses.replace(
        last,
        status=LoopStepStatus.INTERRUPTED,
        finished_at=rfc3339(),
        error="the process running this step stopped before it finished; re-run as a new session",
    )
    say(
        f"loop {state.loop_id}: step {last.index} (session {last.session_id}) was interrupted;"
        " running it again as a new session"
    )
    return save_state(ws, dataclasses.replace(state, steps=_replace_last(state, marked)))


def _run_steps(
    req: LoopRunRequest, state: LoopRunState, say: Callable[[str], None]
) -> LoopRunReport:

    ws = req.workspace
    ran: list[LoopStep] = []
    prompt = state.prompt or ""
    for _ in range(req.steps):
        budget_status = check_budget(state)
        if budget_status is not BudgetStatus.OK:
            state = save_state(
                ws,
                dataclasses.replace(
                    state, status=LoopStatus.PAUSED, last_outcome=budget_status.value
                ),
            )
            msg = f"loop {state.loop_id}: budget stop before step {state.step_index + 1}: " + (
                f"{budget_status.value} ({_usage_text(state)})"
            )
            return LoopRunReport(state.loop_id, ExitCode.MAX_BUDGET, state, ran, budget_status, msg)
        # No provider chosen is a usage error before any step is recorded (exec checks it too).
        chosen_provider(req.provider or req.config.agent.provider, script=req.script)
        k = state.step_index + 1
        session_id = new_session_id()
        step = LoopStep(
            index=k, session_id=session_id, status=LoopStepStatus.STARTED, started_at=rfc3339()
        )
        state = save_state(
            ws,
            dataclasses.replace(state, status=LoopStatus.RUNNING, steps=[*state.steps, step]),
        )
        say(f"loop {state.loop_id}: step {k} started (session {session_id})")
        try:
            result = run_exec(
                ExecRequest(
                    workspace=ws,
                    config=req.config,
                    prompt=step_prompt(prompt, k),
                    provider=req.provider,
                    model=req.model,
                    script=req.script,
                    max_turns=req.max_turns,
                    session_id=session_id,
                    sinks=list(req.sinks_factory()) if req.sinks_factory else [],
                    notify=req.warn,
                    hooks_factory=default_hooks_factory,
                    install_signals=threading.current_thread() is threading.main_thread(),
                    tool_limits=req.tool_limits,
                )
            )
        except VtcodeError as e:
            failed = dataclasses.replace(
                step,
                status=LoopStepStatus.ERROR,
                finished_at=rfc3339(),
                exit_code=int(e.exit_code),
                error=e.message,
            )
            state = save_state(
                ws,
                dataclasses.replace(
                    state,
                    status=LoopStatus.FAILED,
                    steps=_replace_last(state, failed),
                    last_error=e.message,
                ),
            )
            ran.append(failed)
            raise
        run = result.run
        code = int(result.exit_code)
        usage_in = run.usage.input_tokens if run else 0
        usage_out = run.usage.output_tokens if run else 0
        cost = run.total_cost_usd if run else None
        outcome = run.outcome.kind.subtype.value if run else None
        finished = dataclasses.replace(
            step,
            status=LoopStepStatus.DONE if code == 0 else LoopStepStatus.FAILED,
            finished_at=rfc3339(),
            exit_code=code,
            outcome=outcome,
            input_tokens=usage_in,
            output_tokens=usage_out,
            cost_usd=cost,
            error=result.error,
        )
        status = LoopStatus.RUNNING
        if code == ExitCode.CANCELLED:
            status = LoopStatus.PAUSED
        elif code != 0:
            status = LoopStatus.FAILED
        else:
            ledger = load_progress(ws, session_id)
            if ledger is not None and ledger.milestones and is_complete(ledger):
                status = LoopStatus.COMPLETED
        state = save_state(
            ws,
            dataclasses.replace(
                state,
                step_index=k,
                status=status,
                steps=_replace_last(state, finished),
                cumulative_tokens=add_usage(
                    state.cumulative_tokens,
                    input_tokens=usage_in,
                    output_tokens=usage_out,
                    cost=cost,
                ),
                last_artifact_path=str(session_dir(ws, session_id)),
                last_session_id=session_id,
                last_outcome=outcome,
                last_error=result.error,
            ),
        )
        ran.append(finished)
        say(f"loop {state.loop_id}: step {k} {finished.status.value} ({outcome or 'no outcome'})")
        if code != 0:
            msg = f"loop {state.loop_id}: step {k} ended with {outcome or 'an error'} (exit {code})"
            return LoopRunReport(state.loop_id, _exit(code), state, ran, None, msg)
        if status is LoopStatus.COMPLETED:
            msg = f"loop {state.loop_id}: complete after step {k} (every milestone is done)"
            return LoopRunReport(state.loop_id, ExitCode.OK, state, ran, None, msg)
    msg = f"loop {state.loop_id}: ran {len(ran)} step(s); now at step {state.step_index}"
    return LoopRunReport(state.loop_id, ExitCode.OK, state, ran, None, msg)


def _usage_text(state: LoopRunState) -> str:
    u, b = state.cumulative_tokens, state.budget
    return (
        f"steps {state.step_index}/{b.max_steps}, "
        f"tokens {u.input_tokens + u.output_tokens}/{b.max_total_tokens}, "
        f"cost ${u.total_cost_usd:.4f}/${b.max_cost_usd:.2f}"
    )
