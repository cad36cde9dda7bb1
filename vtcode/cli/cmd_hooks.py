"""`vtcode hooks`: show the configured lifecycle hooks and record (or revoke) workspace trust."""

from __future__ import annotations

import rich_click as click

from vtcode.cli.context import AppContext
from vtcode.cli.groups import SuggestingGroup
from vtcode.termtext import inert_line


@click.group("hooks", cls=SuggestingGroup)
def hooks() -> None:
    """Lifecycle hooks and the workspace trust they need.

    Hooks defined in the workspace's own vtcode.toml run only after you trust exactly those
    definitions here; trust is stored outside the repository ($VTCODE_HOME/trust.json or
    ~/.config/vtcode/trust.json). CI can set VTCODE_TRUST_WORKSPACE=1 instead. The same trust
    lets the rest of an untrusted workspace's vtcode.toml apply: until then it may only tighten
    your policy (docs/config-trust.md).
    """


@hooks.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_obj
def list_hooks(app: AppContext, as_json: bool) -> int:
    """The hooks a run would have, whether each came from the workspace, and trust.

    --json: `trusted` is true only when both hold: `config_trusted` (the workspace's vtcode.toml
    applies as written, not filtered) and `hooks_trusted` (its hooks, if any, were trusted).
    """
    from vtcode.cli.output import emit_json
    from vtcode.config.trust_store import is_trusted
    from vtcode.hooks.config import plan_hooks, workspace_fingerprint

    loaded = app.loaded_config()
    cfg = loaded.config
    fp, ws_events = workspace_fingerprint(app.workspace, cfg)
    hooks_trusted = fp is None or is_trusted(app.workspace, fp)
    # `trusted` is the workspace's trust as the loader's warning states it: a workspace whose
    # vtcode.toml was filtered is not trusted, even when it defines no hooks (issue 26).
    config_trusted = not loaded.untrusted_workspace
    plan = plan_hooks(app.workspace, cfg)
    specs = [s for group in plan.specs.values() for s in group]
    rows = [
        {"event": s.event, "argv": list(s.argv), "workspace": s.workspace_defined} for s in specs
    ]
    data = {
        "workspace_events": ws_events,
        "trusted": config_trusted and hooks_trusted,
        "config_trusted": config_trusted,
        "hooks_trusted": hooks_trusted,
        "fingerprint": fp,
        "hooks": rows,
        "skipped_untrusted": plan.skipped_untrusted,
        "problems": plan.problems,
    }
    if as_json:
        emit_json(data)
        return 0
    for s in specs:
        origin = "workspace" if s.workspace_defined else "user"
        click.echo(f"{s.event}\t{origin}\t{inert_line(' '.join(s.argv))}")
    if plan.skipped_untrusted:
        click.echo(
            f"{plan.skipped_untrusted} workspace hook(s) skipped: not trusted "
            "(`vtcode hooks trust`)",
            err=True,
        )
    for p in plan.problems:
        click.echo(f"problem: {inert_line(p)}", err=True)
    return 0


@hooks.command("trust")
@click.pass_obj
def trust(app: AppContext) -> int:
    """Trust this workspace's vtcode.toml and its current hooks (a changed hook needs trust again).

    An untrusted workspace config may only tighten your policy (docs/config-trust.md); once
    trusted, it applies as written.
    """
    from vtcode.config.load import load_config
    from vtcode.config.trust_store import trust_workspace, trusting_env
    from vtcode.hooks.config import workspace_fingerprint

    env = trusting_env()  # see the workspace's own definitions, unfiltered, to fingerprint them
    cfg = load_config(
        workspace=app.workspace, config_file=app.config_file, overrides=app.overrides, env=env
    ).config
    fp, events = workspace_fingerprint(app.workspace, cfg, env)
    path = trust_workspace(app.workspace, fp)
    if fp is None:
        click.echo(f"trusted {app.workspace} (it defines no hooks; recorded in {path})", err=True)
        return 0
    click.echo(
        f"trusted the {', '.join(events)} hook(s) of {app.workspace} (recorded in {path})", err=True
    )
    return 0


@hooks.command("untrust")
@click.pass_obj
def untrust(app: AppContext) -> int:
    """Forget the trust recorded for this workspace."""
    from vtcode.config.trust_store import revoke_workspace

    removed = revoke_workspace(app.workspace)
    click.echo("trust removed" if removed else "this workspace was not trusted", err=True)
    return 0
