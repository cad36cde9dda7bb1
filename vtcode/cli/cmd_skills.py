"""`vtcode skills`: the skills (SKILL.md folders) a run here lists in its system prompt."""

from __future__ import annotations

import rich_click as click

from vtcode.cli.context import AppContext
from vtcode.cli.groups import SuggestingGroup


@click.group("skills", cls=SuggestingGroup)
def skills() -> None:
    """Skills: folders with a SKILL.md (front matter `name`, `description`) under
    .agents/skills/ in the repository and $VTCODE_HOME/skills/. A run lists their names and
    descriptions in its system prompt; the model reads a skill's file when it uses it."""


@skills.command("list")
@click.option("--json", "as_json", is_flag=True, help='As {"skills": [...], "warnings": [...]}.')
@click.pass_obj
def list_cmd(app: AppContext, as_json: bool) -> int:
    """The skills of this workspace and the user's, as a run would list them."""
    from vtcode.cli.output import print_warning
    from vtcode.orient.skills import discover_skills
    from vtcode.termtext import inert

    found = discover_skills(app.workspace)
    for message in found.warnings:
        print_warning(message, color=app.color)
    if as_json:
        from vtcode.cli.output import emit_json

        emit_json(found.to_json())
        return 0
    if not found.skills and not app.quiet:
        click.echo("no skills (.agents/skills/NAME/SKILL.md)", err=True)
    for s in found.skills:
        click.echo(f"{inert(s.name)}\t{inert(s.description)}\t{inert(s.label)}")
    return 0
