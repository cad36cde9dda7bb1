"""`vtcode agent`: run a configured subagent, or verify a proposed change with a read-only one."""

from __future__ import annotations

from typing import Any

import rich_click as click

from vtcode.cli.cmd_completion import complete_session_id
from vtcode.cli.context import AppContext
from vtcode.cli.groups import SuggestingGroup
from vtcode.termtext import inert_line


def _sinks(app: AppContext) -> list[Any]:
    from vtcode.cli.output import want_color
    from vtcode.cli.sinks import HumanProgressSink

    return [] if app.quiet else [HumanProgressSink(color=want_color(app.color))]


@click.group("agent", cls=SuggestingGroup)
def agent() -> None:
    """Subagents declared as [agent.subagents.NAME] in vtcode.toml."""


@agent.command("list")
@click.option("--json", "as_json", is_flag=True, help='The specs, as {"subagents": [...]}.')
@click.pass_obj
def list_(app: AppContext, as_json: bool) -> int:
    """List the configured subagents."""
    from vtcode.jsontypes import encode

    specs = app.loaded_config().config.agent.subagents
    if as_json:
        from vtcode.cli.output import emit_json

        emit_json({"subagents": [{"name": n, **encode(spec)} for n, spec in sorted(specs.items())]})
        return 0
    if not specs and not app.quiet:
        click.echo("no subagents configured ([agent.subagents.NAME] in vtcode.toml)", err=True)
    for name, spec in sorted(specs.items()):
        flags = [spec.isolation.value] + (["read-only"] if spec.read_only else [])
        click.echo(f"{inert_line(name)}\t{','.join(flags)}\t{inert_line(spec.description)}")
    return 0


@agent.command("run")
@click.argument("name")
@click.argument("words", nargs=-1, metavar="[TASK|-]")
@click.option("--json", "as_json", is_flag=True, help="Print the child run's summary as JSON.")
@click.pass_obj
def run(app: AppContext, name: str, words: tuple[str, ...], as_json: bool) -> int:
    """Run subagent NAME on TASK as a child session; exit with the child's exit code.

    With isolation = "worktree" the child works in a new git worktree under
    .vtcode/worktrees/ and its changes stay there until `vtcode worktree merge`.
    """
    from vtcode.cli.stdin import read_stdin_text
    from vtcode.runtime.subagents import run_subagent

    task = read_stdin_text() if list(words) == ["-"] else " ".join(words)
    result = run_subagent(app.workspace, app.loaded_config().config, name, task, sinks=_sinks(app))
    if as_json:
        from vtcode.cli.output import emit_json

        emit_json(result.to_json())
    if result.error:
        from vtcode.cli.output import print_error

        print_error(result.error, color=app.color)
    if not app.quiet:
        where = (
            f"worktree {result.worktree.name} ({result.worktree.path})"
            if result.worktree
            else str(result.workspace)
        )
        click.echo(f"subagent {name}: session {result.session_id} in {where}", err=True)
    return int(result.exit_code)


@agent.command("verify")
@click.argument("name")
@click.option(
    "--files",
    "files",
    multiple=True,
    required=True,
    metavar="PATH",
    help="An affected file, relative to the workspace (repeatable).",
)
@click.option("--description", default="", help="What the proposed change does.")
@click.option(
    "--parent",
    "parent",
    metavar="SESSION_ID",
    shell_complete=complete_session_id,
    help="Record the verification in this existing session (default: a new one).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the VerificationResult as JSON.")
@click.pass_obj
def verify(
    app: AppContext,
    name: str,
    files: tuple[str, ...],
    description: str,
    parent: str | None,
    as_json: bool,
) -> int:
    """Ask read-only subagent NAME to approve or reject a proposed change.

    The verifier is a child session whose tools are read-only, with no shared context
    (no orientation, no conversation of the proposer). The parent session records
    harness items verification_started and verification_passed / verification_failed.
    Exit code: 0 approved, 1 rejected (including a verifier that failed or gave no
    decision: unverified changes are never approved).
    """
    from vtcode.runtime.subagents import verify_change

    paths: list[str] = []
    for f in files:
        paths.extend(p for p in f.split(",") if p)
    result = verify_change(
        app.workspace,
        app.loaded_config().config,
        name,
        paths,
        description or "(no description given)",
        parent_session_id=parent,
        sinks=_sinks(app),
    )
    if as_json:
        from vtcode.cli.output import emit_json
        from vtcode.jsontypes import encode

        emit_json(encode(result))
    else:
        click.echo("APPROVED" if result.approved else "REJECTED")
        for issue in result.issues:
            click.echo(f"- ISSUE: {inert_line(issue)}")
    if not app.quiet:
        click.echo(
            f"parent session {result.parent_session_id}; verifier session "
            f"{result.verifier_session_id}",
            err=True,
        )
    return 0 if result.approved else 1
