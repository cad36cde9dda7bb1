"""`vtcode loop`: cron-driven loops that resume where they stopped (state in .vtcode/state/)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import rich_click as click

from vtcode.cli.cmd_completion import complete_loop_id
from vtcode.cli.context import AppContext
from vtcode.cli.exec_opts import (
    instruction_overrides,
    no_instructions_option,
    prompt_options,
    prompt_overrides,
    tool_limits,
    tool_options,
)
from vtcode.cli.groups import SuggestingGroup
from vtcode.cli.loop_opts import loop_run_options
from vtcode.cli.sandbox_opt import sandbox_option, sandbox_overrides

if TYPE_CHECKING:
    from vtcode.orient.models import LoopRunState

RUN_EPILOG = """Exit codes: 0 steps ran (or the loop is already complete), 1/3/130 the exit
code of a failed step, 2 usage or config error, 4 the loop budget (steps, tokens, cost)
stopped it, 75 another process is running this loop (try again later)."""


@click.group("loop", cls=SuggestingGroup)
def loop() -> None:
    """Run, inspect and reset cron-driven loops.

    A loop is a sequence of steps; each step is a new exec-style session with orientation.
    Its state (.vtcode/state/loop-ID.json) is replaced atomically under the loop's lock,
    so cron can start `vtcode loop run` as often as it likes.
    """


@loop.command("run", epilog=RUN_EPILOG)
@click.option(
    "--id",
    "loop_id",
    required=True,
    shell_complete=complete_loop_id,
    help="Loop id (letters, digits, _ . -).",
)
@click.option(
    "--steps",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Steps to run in this invocation.",
)
@loop_run_options
@click.option("--json", "as_json", is_flag=True, help="Print the run report (and state) as JSON.")
@click.argument("words", nargs=-1, metavar="[PROMPT|-]")
@sandbox_option
@no_instructions_option
@prompt_options
@tool_options
@click.pass_obj
def run(
    app: AppContext,
    loop_id: str,
    steps: int,
    max_steps: int | None,
    max_tokens: int | None,
    max_cost: float | None,
    provider: str | None,
    script: str | None,
    model: str | None,
    max_turns: int | None,
    as_json: bool,
    words: tuple[str, ...],
    sandbox_mode: str | None,
    no_instructions: bool,
) -> int:
    """Resume loop ID and run up to --steps steps.

    PROMPT is required on the first run and stored; a later PROMPT replaces it. Step k's
    prompt is the loop prompt plus "step k". A step whose process was killed is run again
    as a NEW session; a finished step is never repeated.
    """
    from vtcode.cli.output import want_color
    from vtcode.cli.sinks import HumanProgressSink
    from vtcode.runtime.loop_runner import LoopRunRequest, run_loop

    prompt: str | None
    if list(words) == ["-"]:
        from vtcode.cli.stdin import read_stdin_text

        prompt = read_stdin_text()
    else:
        prompt = " ".join(words) or None
    app.add_overrides(
        (
            *sandbox_overrides(sandbox_mode),
            *instruction_overrides(no_instructions),
            *prompt_overrides(),
        )
    )
    loaded = app.loaded_config()

    def sinks() -> list[Any]:
        return [] if app.quiet else [HumanProgressSink(color=want_color(app.color))]

    def notify(msg: str) -> None:
        if not app.quiet:
            click.echo(msg, err=True)

    report = run_loop(
        LoopRunRequest(
            workspace=app.workspace,
            config=loaded.config,
            loop_id=loop_id,
            prompt=prompt,
            steps=steps,
            max_steps=max_steps,
            max_tokens=max_tokens,
            max_cost_usd=max_cost,
            provider=provider,
            script=script,
            model=model,
            max_turns=max_turns,
            sinks_factory=sinks,
            notify=notify,
            warn=lambda msg: click.echo(msg, err=True),
            tool_limits=tool_limits(),
        )
    )
    if as_json:
        from vtcode.cli.output import emit_json

        emit_json(report.to_json())
    if report.exit_code != 0:
        from vtcode.cli.output import print_error

        print_error(report.message, color=app.color)  # even with -q: cron mails stderr
    else:
        notify(report.message)
    return int(report.exit_code)


def _activity(state: LoopRunState, running: bool) -> str:
    """What a loop is doing now, for people: the stored `status` is the contract's LoopStatus,
    where `running` means "resumable", not that a process runs it. Only the loop's lock says
    that (a flock, released by the kernel when its holder dies). So a resumable loop nobody runs
    is `idle`, or `interrupted` when its last step was started and never recorded as ended
    (the process died; the next `loop run` records it and starts a new step)."""
    from vtcode.orient.models import LoopStatus, LoopStepStatus

    if running:
        return "running"
    if state.status is not LoopStatus.RUNNING:
        return state.status.value
    last = state.steps[-1] if state.steps else None
    if last is not None and last.status is LoopStepStatus.STARTED:
        return "interrupted"
    return "idle"


def _running_step(state: LoopRunState, running: bool) -> int | None:
    """The step a live loop process is running now: its last step, started and not yet ended.
    `step_index` counts only the ended steps, so "step 2" while step 3 runs misled."""
    from vtcode.orient.models import LoopStepStatus

    last = state.steps[-1] if state.steps else None
    if running and last is not None and last.status is LoopStepStatus.STARTED:
        return last.index
    return None


def _state_json(state: LoopRunState, running: bool) -> dict[str, Any]:
    from vtcode.jsontypes import encode
    from vtcode.orient.loop_state import check_budget

    out: dict[str, Any] = encode(state)
    out["running_now"] = running
    out["running_step"] = _running_step(state, running)
    out["activity"] = _activity(state, running)
    out["budget_status"] = check_budget(state).value
    return out


def _running(app: AppContext, loop_id: str) -> bool:
    from vtcode.orient.paths import loop_lock_path
    from vtcode.store.locks import lock_is_held

    return lock_is_held(loop_lock_path(app.workspace, loop_id))


def _step_text(state: LoopRunState, running: bool) -> str:
    current = _running_step(state, running)
    if current is None:
        return f"{state.step_index}"
    return f"{current} (running; {state.step_index} ended)"


@loop.command("status")
@click.argument("loop_id", required=False, metavar="[ID]", shell_complete=complete_loop_id)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="The state file plus running_now, running_step (the step running now, or null), "
    "activity and budget_status.",
)
@click.pass_obj
def status(app: AppContext, loop_id: str | None, as_json: bool) -> int:
    """Show one loop (default: the most recently updated)."""
    from vtcode.errors import NotFoundError
    from vtcode.orient.loop_state import check_budget, list_states, require_state

    if loop_id is None:
        states = list_states(app.workspace)
        if not states:
            raise NotFoundError(
                "this workspace has no loops yet", hint="vtcode loop run --id ID PROMPT"
            )
        state = states[0]
    else:
        state = require_state(app.workspace, loop_id)
    running = _running(app, state.loop_id)
    if as_json:
        from vtcode.cli.output import emit_json

        emit_json(_state_json(state, running))
        return 0
    u, b = state.cumulative_tokens, state.budget
    activity = _activity(state, running)
    stored = "" if activity == state.status.value else f" (resumable: stored status {state.status})"
    lines = [
        f"loop:       {state.loop_id}",
        f"status:     {activity}{stored}",
        f"step:       {_step_text(state, running)} of max {b.max_steps}",
        f"tokens:     {u.input_tokens + u.output_tokens} of max {b.max_total_tokens}"
        f" (in {u.input_tokens}, out {u.output_tokens})",
        f"cost:       ${u.total_cost_usd:.4f} of max ${b.max_cost_usd:.2f}",
        f"budget:     {check_budget(state).value}",
        f"updated:    {state.updated_at} (version {state.version})",
    ]
    if state.last_session_id:
        lines.append(f"last step:  {state.last_session_id} ({state.last_outcome or '-'})")
    if state.last_artifact_path:
        lines.append(f"artifacts:  {state.last_artifact_path}")
    if state.last_error:
        lines.append(f"last error: {state.last_error}")
    if state.steps and state.steps[-1].status.value in ("started", "interrupted"):
        s = state.steps[-1]
        lines.append(f"step {s.index}:     {s.status.value} (session {s.session_id})")
    from vtcode.termtext import inert

    click.echo(inert("\n".join(lines)))  # loop ids, errors and paths come from files
    return 0


@loop.command("list")
@click.option("--json", "as_json", is_flag=True, help='Every loop\'s state, as {"loops": [...]}.')
@click.pass_obj
def list_(app: AppContext, as_json: bool) -> int:
    """List the loops of this workspace, most recently updated first."""
    from vtcode.orient.loop_state import list_states
    from vtcode.termtext import inert_line

    states = list_states(app.workspace)
    if as_json:
        from vtcode.cli.output import emit_json

        emit_json({"loops": [_state_json(s, _running(app, s.loop_id)) for s in states]})
        return 0
    if not states and not app.quiet:
        click.echo("no loops yet", err=True)
    for s in states:
        activity = _activity(s, _running(app, s.loop_id))
        click.echo(
            f"{inert_line(s.loop_id)}\t{activity}\tstep {s.step_index}\t{inert_line(s.updated_at)}"
        )
    return 0


@loop.command("reset")
@click.argument("loop_id", metavar="ID", shell_complete=complete_loop_id)
@click.pass_obj
def reset(app: AppContext, loop_id: str) -> int:
    """Forget loop ID's state so that its next run starts at step 1 (sessions are kept).

    Exit 75 when the loop is running.
    """
    from vtcode.errors import NotFoundError
    from vtcode.orient.loop_state import delete_state, loop_lock

    with loop_lock(app.workspace, loop_id):
        if not delete_state(app.workspace, loop_id):
            raise NotFoundError(f"no loop {loop_id!r} to reset")
    if not app.quiet:
        click.echo(f"loop {loop_id}: reset", err=True)
    return 0
