"""`vtcode init`: a starter AGENTS.md and vtcode.toml for the workspace."""

from __future__ import annotations

import rich_click as click

from vtcode.cli.context import AppContext


@click.command("init")
@click.option("--force", is_flag=True, help="Overwrite an existing AGENTS.md and vtcode.toml.")
@click.pass_obj
def init(app: AppContext, force: bool) -> int:
    """Write a starter AGENTS.md (project instructions every run reads) and a commented
    vtcode.toml (every key at its default) into the workspace.

    Without --force an existing file is kept and named (exit 2); the other is still written.
    """
    from vtcode.cli.output import print_error
    from vtcode.config.edit import init as init_config
    from vtcode.errors import ConfigError
    from vtcode.orient.instructions import write_starter

    failed = False
    for write in (write_starter, init_config):
        try:
            path = write(app.workspace, force=force)
        except ConfigError as e:
            print_error(str(e), color=app.color)
            failed = True
            continue
        if not app.quiet:
            click.echo(f"wrote {path}", err=True)
    return 2 if failed else 0
