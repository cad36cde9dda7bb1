"""`vtcode worktree`: list, merge and drop subagent worktrees (.vtcode/worktrees/)."""

from __future__ import annotations

import rich_click as click

from vtcode.cli.context import AppContext
from vtcode.cli.groups import SuggestingGroup
from vtcode.termtext import inert_line


@click.group("worktree", cls=SuggestingGroup)
def worktree() -> None:
    """Subagent git worktrees: changes stay there until merged."""


@worktree.command("list")
@click.option("--json", "as_json", is_flag=True, help='The worktrees, as {"worktrees": [...]}.')
@click.pass_obj
def list_(app: AppContext, as_json: bool) -> int:
    """List the worktrees with their branch, uncommitted files and commits ahead."""
    from vtcode.orient.worktree import list_worktrees

    wts = list_worktrees(app.workspace)
    if as_json:
        from vtcode.cli.output import emit_json

        emit_json({"worktrees": [w.to_json() for w in wts]})
        return 0
    if not wts and not app.quiet:
        click.echo("no subagent worktrees", err=True)
    for w in wts:
        click.echo(
            f"{inert_line(w.name)}\t{inert_line(w.branch)}\t{len(w.changed)} changed\t"
            f"{w.ahead} ahead\t{inert_line(w.path)}"
        )
    return 0


@worktree.command("merge")
@click.argument("name")
@click.option("--keep", is_flag=True, help="Keep the worktree and its branch after merging.")
@click.option("--json", "as_json", is_flag=True, help="Print what was merged as JSON.")
@click.pass_obj
def merge(app: AppContext, name: str, keep: bool, as_json: bool) -> int:
    """Commit worktree NAME's changes there and merge its branch into the current branch.

    Refuses (exit 1, nothing changed here) when the merge would conflict or when your
    own uncommitted changes are in the way. The child's sessions move into this
    workspace's .vtcode/sessions/ before the worktree is removed.
    """
    from vtcode.orient.worktree import merge_worktree

    info = merge_worktree(app.workspace, name, keep=keep)
    if as_json:
        from vtcode.cli.output import emit_json

        emit_json(info)
    elif not app.quiet:
        click.echo(f"merged {info['branch']} ({info['merge_commit']})", err=True)
    return 0


@worktree.command("drop")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print what was removed as JSON.")
@click.pass_obj
def drop(app: AppContext, name: str, as_json: bool) -> int:
    """Discard worktree NAME and its branch (its sessions are kept)."""
    from vtcode.orient.worktree import drop_worktree

    info = drop_worktree(app.workspace, name)
    if as_json:
        from vtcode.cli.output import emit_json

        emit_json(info)
    elif not app.quiet:
        click.echo(f"dropped {name}", err=True)
    return 0
