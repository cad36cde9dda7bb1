"""`vtcode handoff`: write the handoff for the next session from the current state."""

from __future__ import annotations

import rich_click as click

from vtcode.cli.context import AppContext
from vtcode.cli.ranges import FiniteFloatRange


@click.command("handoff")
@click.option("--json", "as_json", is_flag=True, help="Print the HandoffRequest as JSON.")
@click.option("--summary", help="What was accomplished and what remains (Current State).")
@click.option(
    "--next", "next_actions", multiple=True, metavar="TEXT", help="A next action (repeatable)."
)
@click.option(
    "--issue", "issues", multiple=True, metavar="TEXT", help="A known issue (repeatable)."
)
@click.option(
    "--decision", "decisions", multiple=True, metavar="TEXT", help="An open decision (repeatable)."
)
@click.option("--task", help="The original task (default: the progress ledger's goal).")
@click.option("--target", default="", help="The agent the handoff is for (default: any).")
@click.option(
    "--test-cmd",
    metavar="CMD",
    help=(
        "Run CMD now (bash -lc in the workspace, not sandboxed) and put its real output under "
        "Test Results. If CMD fails or times out, handoff exits 1 (the handoff is still written)."
    ),
)
@click.option(
    "--test-timeout",
    type=FiniteFloatRange(min=1),
    default=600.0,
    show_default=True,
    help="Seconds before --test-cmd is killed.",
)
@click.option("--dry-run", is_flag=True, help="Print the handoff without writing it.")
@click.pass_obj
def handoff(
    app: AppContext,
    as_json: bool,
    summary: str | None,
    next_actions: tuple[str, ...],
    issues: tuple[str, ...],
    decisions: tuple[str, ...],
    task: str | None,
    target: str,
    test_cmd: str | None,
    test_timeout: float,
    dry_run: bool,
) -> int:
    """Write .vtcode/tasks/current_handoff.md (+ .json) for the next session.

    Modified files come from `git status --porcelain` (when this is a git repository),
    boundary status from the latest progress ledger's milestones, and Test Results from
    the actual output of --test-cmd, which handoff runs itself (bash -lc, in the workspace,
    outside the sandbox, even with --dry-run). The next session shows the handoff in its
    orientation and then archives it under .vtcode/tasks/handoffs/.

    Exit code: 0, or 1 when --test-cmd exited non-zero or timed out (said on stderr; the
    handoff is written either way). Leave --test-cmd out to write a handoff without running
    anything.
    """
    from vtcode.orient.handoff import (
        build_handoff,
        run_test_command,
        to_handoff_prompt,
        write_handoff,
    )

    test_run = run_test_command(test_cmd, app.workspace, timeout=test_timeout) if test_cmd else None
    req = build_handoff(
        app.workspace,
        summary=summary,
        next_actions=next_actions,
        known_issues=issues,
        open_decisions=decisions,
        target_agent=target,
        task_context=task,
        test_run=test_run,
    )
    if not dry_run:
        md, _ = write_handoff(app.workspace, req)
        if not app.quiet:
            click.echo(f"handoff written to {md}", err=True)
    if as_json:
        from vtcode.cli.output import emit_json
        from vtcode.jsontypes import encode

        emit_json(encode(req))
    else:
        from vtcode.termtext import inert

        click.echo(inert(to_handoff_prompt(req)))
    if test_run is None or test_run.passed:
        return 0
    status = "timed out" if test_run.exit_code is None else f"exited {test_run.exit_code}"
    click.echo(f"vtcode handoff: --test-cmd {status}; exit code 1", err=True)
    return 1
