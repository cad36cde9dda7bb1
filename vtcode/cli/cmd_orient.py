"""`vtcode orient`: print exactly the orientation the next session of this workspace would see."""

from __future__ import annotations

import rich_click as click

from vtcode.cli.context import AppContext


@click.command("orient")
@click.option("--json", "as_json", is_flag=True, help="The gathered parts and the section as JSON.")
@click.pass_obj
def orient(app: AppContext, as_json: bool) -> int:
    """Show the [Orientation Context] a new session would start with.

    It is built by the same function the loop uses: progress ledger, harness artifacts
    (.vtcode/tasks/current_*.md), recent git log, loop notes and decisions, the compaction
    summary, a pending context reset and the current handoff. Nothing is consumed: a
    handoff or reset manifest shown here is still there for the next session.

    After it, when there are any, the project instruction files (AGENTS.md) a run here would
    put into its system prompt, with their sizes (`instructions` in --json).
    """
    from vtcode.cli.output import print_warning
    from vtcode.orient.context import gather_orientation
    from vtcode.orient.instructions import discover_instructions

    ctx = gather_orientation(app.workspace)
    found = discover_instructions(app.workspace, app.loaded_config().config.agent.instructions)
    for message in (*ctx.skipped, *found.warnings):
        print_warning(message, color=app.color)
    if as_json:
        from vtcode.cli.output import emit_json

        emit_json({**ctx.to_json(), "instructions": found.to_json()})
        return 0
    from vtcode.termtext import inert

    section = ctx.to_prompt_section()
    if section is None:
        if not app.quiet:
            click.echo(
                "nothing to orient from yet (no ledger, artifacts, notes or git log)", err=True
            )
    else:
        click.echo(inert(section))  # notes, git log, artifacts: text a repository controls
    if not found.files:
        return 0
    used = sum(f.used for f in found.files)
    click.echo(
        f"\n[Project instructions] {len(found.files)} file(s), {used} of {found.max_bytes} bytes"
    )
    for f in found.files:
        size = f"{f.size} bytes" if not f.truncated else f"{f.used} of {f.size} bytes"
        click.echo(f"  {inert(f.label)}  {size}")
    return 0
