"""`vtcode eval SUITE`: run a task suite through one or more agents and report pass rates."""

from __future__ import annotations

from pathlib import Path

import rich_click as click
from click import get_current_context
from click.core import ParameterSource

from vtcode.cli.context import AppContext
from vtcode.cli.exec_opts import exec_args, exec_model_options
from vtcode.cli.ranges import FiniteFloatRange

EPILOG = """Exit codes: 0 done (and at or above --min-pass-rate), 1 the first agent's pass@1 is
below --min-pass-rate, 2 usage (a bad suite or task.toml, an unknown --task, a missing peer),
75 the eval is running in another process, 130 interrupted (finished runs are kept).
Results: WORKSPACE/.vtcode/evals/<EVAL_ID>/ (eval.json, runs/<run-key>.json, runs/<run-key>/
with the run's workspace and session); an eval whose id exists resumes where it stopped.
See docs/eval.md for the task format, the metrics and the agents."""

AGENTS = ("vtcode", "codex", "claude")


@click.command("eval", epilog=EPILOG)
@click.argument("suite", required=False, type=click.Path(path_type=Path))
@click.option("-k", "k", type=click.IntRange(1, 1000), default=None, help="Runs per task [1].")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=1, help="Runs at once [1].")
@click.option("--task", "task_ids", multiple=True, metavar="ID", help="Only this task (repeat).")
@click.option("--tag", "tags", multiple=True, metavar="TAG", help="Only tasks with this tag.")
@click.option(
    "--agent",
    "agents",
    multiple=True,
    type=click.Choice(AGENTS),
    help="Agent to run (repeat for side by side) [vtcode].",
)
@click.option(
    "--agent-cmd",
    metavar="TEMPLATE",
    help="Any agent: a shell command with {prompt}, {workspace}, {model} (shell-quoted).",
)
@exec_model_options
@click.option("--id", "eval_id", metavar="ID", help="Eval id (default: a new one).")
@click.option("--resume", metavar="ID", help="Finish eval ID as it was planned.")
@click.option("--json", "as_json", is_flag=True, help="The result document on stdout.")
@click.option(
    "--html",
    "html_file",
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write a self-contained HTML report.",
)
@click.option(
    "--min-pass-rate",
    type=FiniteFloatRange(0, 1),
    metavar="X",
    help="Exit 1 when the first agent's pass@1 is below X (0..1).",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
@click.pass_obj
def eval_cmd(
    app: AppContext,
    suite: Path | None,
    k: int | None,
    jobs: int,
    task_ids: tuple[str, ...],
    tags: tuple[str, ...],
    agents: tuple[str, ...],
    agent_cmd: str | None,
    provider: str | None,
    model: str | None,
    overrides: tuple[str, ...],
    sandbox_mode: str | None,
    eval_id: str | None,
    resume: str | None,
    as_json: bool,
    html_file: Path | None,
    min_pass_rate: float | None,
    quiet: bool,
) -> int:
    """Run every task of SUITE (a folder of task folders) through an agent, check each
    result, and report pass@1, pass@k, pass^k, turns, tokens, cost and time.

    Each run is an ordinary `vtcode exec` (or `codex exec`, `claude -p`, a command) in a fresh
    workspace; the results are kept per run, so an interrupted eval resumes where it stopped.
    """
    from vtcode.cli.eval_render import ProgressView, render_table
    from vtcode.cli.output import emit_json
    from vtcode.errors import UsageError
    from vtcode.eval.plan import PlanRequest, open_eval
    from vtcode.eval.runner import run_eval
    from vtcode.eval.summary import pass_rate
    from vtcode.jsontypes import encode
    from vtcode.outpath import check_output, write_output

    if resume is not None:
        # Only what the command line says: --provider may also come from VTCODE_PROVIDER.
        source = get_current_context().get_parameter_source
        given = [
            name
            for name, param in (("SUITE", "suite"), ("-k", "k"), ("--task", "task_ids"),
                                ("--tag", "tags"), ("--agent", "agents"),
                                ("--agent-cmd", "agent_cmd"), ("--provider", "provider"),
                                ("--model", "model"), ("-c", "overrides"),
                                ("--sandbox", "sandbox_mode"), ("--id", "eval_id"))
            if source(param) is ParameterSource.COMMANDLINE
        ]  # fmt: skip
        if given:
            raise UsageError(
                f"--resume takes the plan from the eval; drop {', '.join(given)}",
                hint="to change the plan, start a new eval",
            )
    elif suite is None:
        raise UsageError("no SUITE: pass a folder of task folders", hint="vtcode eval evals/public")
    html_target = None if html_file is None else check_output(html_file, workspace=app.workspace)
    page_on_stdout = html_target is not None and html_target.path is None
    if page_on_stdout and as_json:
        raise UsageError("--html - and --json both write to standard output; choose one")
    app.add_overrides((*overrides,))
    config = app.loaded_config().config
    store, plan, settings = open_eval(
        PlanRequest(
            workspace=app.workspace,
            suite=suite,
            resume=resume,
            eval_id=eval_id,
            k=k or 1,
            task_ids=task_ids,
            tags=tags,
            agents=agents,
            agent_cmd=agent_cmd,
            provider=provider,
            model=model,
            exec_args=exec_args(provider, model, overrides, sandbox_mode),
            sandbox=sandbox_mode,
            config_file=app.config_file,
        ),
        config,
    )
    view = ProgressView(
        plan, store.root, enabled=not (quiet or app.quiet), color=app.color and not as_json
    )
    with view:
        report = run_eval(store, plan, settings, jobs=jobs, progress=view.update)
    if as_json:
        emit_json(encode(report))
    elif not page_on_stdout:  # `--html -`: the page alone on stdout
        render_table(report)
    if html_target is not None:
        import sys

        from vtcode.eval.html import render_report

        write_output(html_target, render_report(report).encode(), sys.stdout.buffer)
    if min_pass_rate is not None and pass_rate(report) < min_pass_rate:
        view.note(f"pass@1 {pass_rate(report):.3f} is below --min-pass-rate {min_pass_rate}")
        return 1
    return 0
