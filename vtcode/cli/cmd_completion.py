"""`vtcode completion bash|zsh|fish`: click's own completion script, plus session-id completers.

The script calls back into `vtcode` with `_VTCODE_COMPLETE=<shell>_complete` on every TAB; click
answers from the real command tree, and the completers below list the workspace's real session
ids. This module imports only click at load time: command modules reference the completers in
their decorators, and a TAB must stay fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import rich_click as click
from click.shell_completion import CompletionItem, get_completion_class

SHELLS = ("bash", "zsh", "fish")
COMPLETE_VAR = "_VTCODE_COMPLETE"

EPILOG = """Install: bash: eval "$(vtcode completion bash)" in ~/.bashrc;
zsh: eval "$(vtcode completion zsh)" in ~/.zshrc (after compinit);
fish: vtcode completion fish > ~/.config/fish/completions/vtcode.fish."""


def _workspace(ctx: click.Context) -> Path:
    """The --workspace given on the command line being completed (else the current folder)."""
    value: Any = ctx.find_root().params.get("workspace")
    return Path(value) if value else Path.cwd()


def session_items(ctx: click.Context, incomplete: str) -> list[CompletionItem]:
    """Session ids of the workspace starting with `incomplete`, most recent first."""
    try:
        from vtcode.store import list_sessions

        rows = list_sessions(_workspace(ctx))
    except Exception:  # completion must never print a traceback into the user's prompt
        return []
    # no commas in the help: fish's script splits each answer line on them
    return [
        CompletionItem(r.session_id, help=f"{r.status} - {r.turns} turns - {_when(r.updated_at)}")
        for r in rows
        if r.session_id.startswith(incomplete)
    ]


def _when(ts: str | None) -> str:
    return ts[:16].replace("T", " ") if ts else "never updated"


def complete_session_id(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """`shell_complete=` for an argument that names a session."""
    return session_items(ctx, incomplete)


def _items(names: list[str], incomplete: str, help: str = "") -> list[CompletionItem]:
    return [CompletionItem(n, help=help or None) for n in names if n.startswith(incomplete)]


def complete_script(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """`--script`: the shipped replay scripts by name, and files (the shell completes paths)."""
    try:
        from vtcode.providers.script import shipped_scripts

        names = shipped_scripts()
    except Exception:  # completion must never print a traceback into the user's prompt
        names = []
    return [*_items(names, incomplete, "shipped script"), CompletionItem(incomplete, type="file")]


def complete_provider(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """`--provider`: the built-in providers and the [providers.NAME] tables of the config."""
    from vtcode.providers.registry import KNOWN_PROVIDERS

    names = list(KNOWN_PROVIDERS)
    try:
        from vtcode.config.load import load_config

        loaded = load_config(workspace=_workspace(ctx))
        names += [n for n in loaded.config.providers if n not in names]
    except Exception:  # a broken config still completes the built-in names
        return _items(names, incomplete)
    return _items(names, incomplete)


def complete_loop_id(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """A loop id: the loops this workspace has state for (`.vtcode/state/loop-<id>.json`)."""
    try:
        from vtcode.orient.paths import state_dir

        found = sorted(
            p.name[len("loop-") : -len(".json")]
            for p in state_dir(_workspace(ctx)).glob("loop-*.json")
        )
    except Exception:
        found = []
    return _items(found, incomplete, "loop")


def complete_config_key(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """A vtcode.toml key in dotted form (every key the schema knows)."""
    try:
        from vtcode.config.keys import iter_specs
        from vtcode.config.tomlscan import format_key

        names = [format_key(path) for path, _ in iter_specs()]
    except Exception:
        names = []
    return _items(names, incomplete)


def complete_schema_name(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """A published schema's name (`vtcode schema list`)."""
    try:
        from vtcode.validate.schemafiles import list_schemas

        names = [info.name for info in list_schemas()]
    except Exception:
        names = []
    return _items(names, incomplete, "schema")


def complete_exec_words(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """`vtcode exec` words: `resume` first, then a session id after `resume`."""
    words = list(ctx.params.get(param.name or "") or ())
    if not words:
        return [CompletionItem("resume")] if "resume".startswith(incomplete) and incomplete else []
    if words == ["resume"]:
        return session_items(ctx, incomplete)
    return []


@click.command("completion", epilog=EPILOG)
@click.argument("shell", type=click.Choice(SHELLS))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    """Print the shell completion script for SHELL (commands, options, session ids)."""
    cls = get_completion_class(shell)
    assert cls is not None  # every name in SHELLS is one of click's own
    root = ctx.find_root()
    script = cls(root.command, {}, root.info_name or "vtcode", COMPLETE_VAR).source()
    click.echo(script)
