"""`vtcode config`: show, get, set, check and init vtcode.toml (parse and render only).

Data goes to stdout (TOML for people, one JSON document with `--json`); notes, warnings and
problems go to stderr. Invalid config exits 2 with `file:line:col: key: message` lines.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import rich_click as click

from vtcode.cli.cmd_completion import complete_config_key
from vtcode.cli.context import AppContext
from vtcode.cli.groups import SuggestingGroup

if TYPE_CHECKING:
    from vtcode.config.load import LoadedConfig


def _note(app: AppContext, text: str) -> None:
    if not app.quiet:
        click.echo(text, err=True)


def _warn(app: AppContext, warnings: tuple[str, ...]) -> None:
    from vtcode.cli.output import print_warning

    if not app.quiet:
        for w in warnings:
            print_warning(w, color=app.color)


def _toml_value(value: Any) -> str:
    from vtcode.config.render import inline

    return inline(value)


def _toml_document(data: dict[str, Any]) -> str:
    from vtcode.config.render import document

    return document(data)


@click.group("config", cls=SuggestingGroup)
def config() -> None:
    """Show, check and edit vtcode.toml.

    Layers, lowest precedence first: built-in defaults; user config ($VTCODE_HOME/config.toml,
    else $XDG_CONFIG_HOME/vtcode/config.toml, else ~/.config/vtcode/config.toml); the workspace
    vtcode.toml; --config FILE; then each -c KEY=VALUE. Tables merge key by key, arrays replace.
    Keys and types: man 5 vtcode.toml.
    """


@config.command("show")
@click.option("--json", "as_json", is_flag=True, help="One JSON document on stdout.")
@click.option("--origin", is_flag=True, help="Say which layer set each key.")
@click.pass_obj
def show(app: AppContext, as_json: bool, origin: bool) -> int:
    """Print the effective config (every key, defaults included) as TOML.

    Credentials are masked: URL passwords, secret-named query values and values of
    secret-named keys print as *** (`config get KEY` prints the exact value).
    """
    from vtcode.config.mask import mask_secrets

    loaded = app.loaded_config()
    _warn(app, loaded.warnings)
    data = mask_secrets(loaded.effective())
    if as_json:
        from vtcode.cli.output import emit_json

        if origin:
            origins: dict[str, Any] = {k: s.to_json() for k, s in loaded.origins().items()}
            for d, _ in loaded.decisions:
                if d.key in origins:  # the value shown is not (only) the workspace's
                    origins[d.key]["workspace"] = str(d.action)
            from vtcode.config.key_status import STATUS, NoEffect

            for key, entry in origins.items():
                if isinstance(STATUS.get(key), NoEffect):
                    entry["no_effect"] = True
            emit_json({"config": data, "origins": origins, "trust": _trust_json(loaded)})
        else:
            emit_json(data)
        return 0
    if not origin:
        click.echo(_toml_document(data), nl=False)
        return 0
    from vtcode.config.key_status import NO_EFFECT_WARNING, STATUS, NoEffect

    marks = {d.key: d for d, _ in loaded.decisions}
    rows = []
    for key, source in loaded.origins().items():
        note = str(source)
        mark = marks.get(key)
        if mark is not None:
            note += f"; workspace value {mark.action}"
        if isinstance(STATUS.get(key), NoEffect):
            note += f"; no effect ({NO_EFFECT_WARNING})"
        rows.append((f"{key} = {_toml_value(_lookup(data, key))}", note))
    width = min(max(len(text) for text, _ in rows), 60)
    for text, note in rows:
        click.echo(f"{text:<{width}}  # {note}")
    for d, where in loaded.decisions:
        click.echo(
            f"# {d.action} from the untrusted workspace: {d.key} ({d.cls}) at {where}: {d.why}"
        )
    return 0


def _trust_json(loaded: LoadedConfig) -> dict[str, Any]:
    """Whether the workspace layer was filtered, and each key it could not apply as written."""
    return {
        "workspace_filtered": loaded.untrusted_workspace,
        "decisions": [
            {
                "key": d.key,
                "class": str(d.cls),
                "action": str(d.action),
                "location": where,
                "reason": d.why,
            }
            for d, where in loaded.decisions
        ],
    }


def _lookup(data: dict[str, Any], key: str) -> Any:
    from vtcode.config.tomlscan import parse_key

    node: Any = data
    for part in parse_key(key):
        node = node[part]
    return node


@config.command("get")
@click.argument("key", shell_complete=complete_config_key)
@click.option("--json", "as_json", is_flag=True, help="The value as JSON (null when unset).")
@click.pass_obj
def get(app: AppContext, key: str, as_json: bool) -> int:
    """Print the effective value of KEY (e.g. agent.harness.max_budget_usd).

    Strings print bare, tables as TOML. A known key with no value prints nothing (exit 0);
    an unknown key exits 2 with the closest known key.
    """
    from vtcode.config.edit import get_value

    loaded = app.loaded_config()
    _warn(app, loaded.warnings)
    value = get_value(loaded, key)
    if as_json:
        from vtcode.cli.output import emit_json

        emit_json(value)
        return 0
    if value is None:
        _note(app, f"{key} is not set")
    elif isinstance(value, dict):
        click.echo(_toml_document(value), nl=False)
    elif isinstance(value, str) and value.isprintable():
        click.echo(value)
    else:
        click.echo(_toml_value(value))
    return 0


@config.command("set")
@click.argument("key", shell_complete=complete_config_key)
@click.argument("value")
@click.option("--user", "to_user", is_flag=True, help="Edit the user config instead.")
@click.option(
    "--file",
    "file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Edit this file instead.",
)
@click.pass_obj
def set_(app: AppContext, key: str, value: str, to_user: bool, file: Path | None) -> int:
    """Set KEY to VALUE in the workspace vtcode.toml, keeping comments and layout.

    VALUE is a TOML value (5, 2.5, true, "text", [1, 2], {a = 1}); a bare word that is not TOML
    is taken as a string. The result is validated before it is written (atomically, under a
    lock on the file's folder, so no lock file is left behind); on any problem the file is left
    unchanged.
    """
    from vtcode.config.edit import set_value
    from vtcode.config.load import WORKSPACE_FILE, Layer, user_config_path
    from vtcode.errors import UsageError

    if to_user and file is not None:
        raise UsageError("--user and --file cannot be used together")
    if to_user:
        target = user_config_path()
        if target is None:
            raise UsageError("no user config location: set VTCODE_HOME or HOME")
        result = set_value(target, key, value, layer=Layer.USER, make_parents=True)
    elif file is not None:
        result = set_value(file, key, value, layer=Layer.FILE)
    else:
        path = app.workspace / WORKSPACE_FILE
        result = set_value(path, key, value, layer=Layer.WORKSPACE)
    _note(app, f"{result.path}: set {result.key} = {_toml_value(result.value)}")
    return 0


@config.command("check")
@click.argument("files", nargs=-1, metavar="[FILE...|-]")
@click.option("--json", "as_json", is_flag=True, help="A JSON report on stdout.")
@click.pass_obj
def check(app: AppContext, files: tuple[str, ...], as_json: bool) -> int:
    """Check the config; exit 0 when valid, 2 with located problems otherwise.

    Without FILE, checks every layer as vtcode would load it (including --config and -c).
    With FILEs (or - for stdin), checks each file on its own over the defaults (the
    pre-commit hook `vtcode-config-check` passes every staged vtcode.toml at once).
    """
    from vtcode.config.load import (
        ConfigInvalid,
        ConfigProblem,
        check_text,
        decode_config_bytes,
        read_config_text,
    )
    from vtcode.errors import ConfigError, UsageError

    def check_one(file: str) -> tuple[list[ConfigProblem], tuple[str, ...]]:
        try:
            if file == "-":
                from vtcode.cli.stdin import read_stdin_bytes

                text = decode_config_bytes(read_stdin_bytes(1024 * 1024), "<stdin>")
                result = check_text(text, "<stdin>")
            else:
                text = read_config_text(Path(file), required=True) or ""
                result = check_text(text, file)
        except (ConfigError, UsageError) as e:
            return [ConfigProblem(e.message, location=e.location, hint=e.hint)], ()
        return list(result.problems), tuple(result.warnings)

    if files.count("-") > 1:
        raise UsageError("standard input (-) can be read only once")
    problems: list[ConfigProblem] = []
    checked: list[str] = []
    valid: list[str] = []
    warnings: tuple[str, ...] = ()
    if not files:
        try:
            loaded = app.loaded_config()
        except ConfigInvalid as e:
            problems = e.problems
        except ConfigError as e:
            problems = [ConfigProblem(e.message, location=e.location, hint=e.hint)]
        else:
            checked = valid = [str(p) for p in loaded.sources] or ["(defaults only)"]
            warnings = (*loaded.warnings, *loaded.no_effect)
    for file in files:
        name = "<stdin>" if file == "-" else file
        checked.append(name)
        found, warned = check_one(file)
        problems += found
        warnings += warned
        if not found:
            valid.append(name)
    _warn(app, warnings)
    if as_json:
        from vtcode.cli.output import emit_json

        emit_json(
            {
                "valid": not problems,
                "checked": checked,
                "problems": [p.to_json() for p in problems],
                "warnings": list(warnings),
            }
        )
    else:
        from vtcode.cli.output import print_error

        for p in problems:
            print_error(str(p), color=app.color)
        for name in valid:
            click.echo(f"{name}: valid")
    return 2 if problems else 0


@config.command("init")
@click.option("--force", is_flag=True, help="Overwrite an existing vtcode.toml.")
@click.pass_obj
def init_(app: AppContext, force: bool) -> int:
    """Write a commented starter vtcode.toml into the workspace (every key at its default)."""
    from vtcode.config.edit import init

    path = init(app.workspace, force=force)
    _note(app, f"wrote {path}")
    return 0
