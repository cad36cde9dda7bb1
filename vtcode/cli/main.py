"""The `vtcode` command line: a root group whose subcommands are imported only when used.

Lazy loading keeps `vtcode --version` and `vtcode --help` from importing the validator, the store
or the loop (measured in bench/validate.py). The CLI layer only parses and renders.
"""

from __future__ import annotations

import importlib
import importlib.util
import io
import itertools
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import rich_click as click
from click.exceptions import Abort, Exit

from vtcode import __version__
from vtcode.cli.context import AppContext, check_overrides
from vtcode.cli.examples import attach_examples
from vtcode.cli.groups import SuggestingGroup
from vtcode.errors import ExitCode, VtcodeError

# command name -> (module, attribute, one-line help shown by `vtcode --help`)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "exec": ("vtcode.cli.cmd_exec", "exec_cmd", "Run an agent loop headless to completion."),
    "chat": ("vtcode.cli.cmd_chat", "chat", "Talk to the agent in an interactive session."),
    "skills": ("vtcode.cli.cmd_skills", "skills", "List the skills a run offers the model."),
    "init": ("vtcode.cli.cmd_init", "init", "Write a starter AGENTS.md and vtcode.toml."),
    "validate": ("vtcode.cli.cmd_validate", "validate", "Validate ThreadEvent JSONL logs."),
    "schema": ("vtcode.cli.cmd_schema", "schema", "List, show and export the JSON Schemas."),
    "config": ("vtcode.cli.cmd_config", "config", "Show, check and edit vtcode.toml."),
    "sessions": (
        "vtcode.cli.cmd_sessions",
        "sessions",
        "List, inspect, export and clean sessions.",
    ),
    "fsm": ("vtcode.cli.cmd_fsm", "fsm", "Print the agent-loop state machine."),
    "compact": ("vtcode.cli.cmd_compact", "compact", "Compact a session's transcript now."),
    "steer": ("vtcode.cli.cmd_steer", "steer", "Queue a follow-up for a (running) session."),
    "hooks": ("vtcode.cli.cmd_hooks", "hooks", "List lifecycle hooks; trust workspace hooks."),
    "loop": ("vtcode.cli.cmd_loop", "loop", "Run, inspect and reset cron-driven loops."),
    "fleet": ("vtcode.cli.cmd_fleet", "fleet", "Run loops across many machines on PostgreSQL."),
    "orient": ("vtcode.cli.cmd_orient", "orient", "Show what the next session orients from."),
    "handoff": ("vtcode.cli.cmd_handoff", "handoff", "Write the handoff for the next session."),
    "notes": ("vtcode.cli.cmd_notes", "notes", "Append to and list the loop's notes."),
    "decisions": ("vtcode.cli.cmd_notes", "decisions", "Append to and list the loop's decisions."),
    "eval": ("vtcode.cli.cmd_eval", "eval_cmd", "Run a task suite through agents; pass rates."),
    "agent": ("vtcode.cli.cmd_agent", "agent", "Run or verify with a configured subagent."),
    "worktree": ("vtcode.cli.cmd_worktree", "worktree", "List, merge and drop subagent worktrees."),
    "completion": ("vtcode.cli.cmd_completion", "completion", "Print a shell completion script."),
}

click.rich_click.USE_RICH_MARKUP = False
click.rich_click.USE_MARKDOWN = False
click.rich_click.SHOW_ARGUMENTS = True


class LazyGroup(SuggestingGroup):
    """A group that imports a subcommand's module only when that subcommand is looked up."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [n for n in COMMANDS if self._available(n)]

    @staticmethod
    def _available(name: str) -> bool:
        module = COMMANDS[name][0]
        return importlib.util.find_spec(module) is not None

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None or not self._available(cmd_name):
            return None
        module = importlib.import_module(entry[0])
        cmd: click.Command = getattr(module, entry[1])
        return attach_examples(cmd, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(n, COMMANDS[n][2]) for n in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _show_click_error(e: click.ClickException) -> None:
    """A usage error as click prints it: `Usage: ...`, `Try '... --help' for help.`, a blank
    line, `Error: ...`. rich-click's renderer padded each line with spaces to the terminal width
    (80 off a terminal) and added blank padded lines, which logs and CI output keep (issue 26)."""
    ctx = e.ctx if isinstance(e, click.UsageError) else None
    lines: list[str] = []
    if ctx is not None:
        pieces = " ".join(ctx.command.collect_usage_pieces(ctx))
        lines.append(f"Usage: {ctx.command_path} {pieces}".rstrip())
        if ctx.command.get_help_option(ctx) is not None:
            names = ctx.help_option_names
            flag = next((n for n in names if n.startswith("--")), names[0])
            lines.append(f"Try '{ctx.command_path} {flag}' for help.")
        lines.append("")
    from vtcode.cli.output import want_color
    from vtcode.termtext import inert

    label = "\x1b[31mError\x1b[0m" if want_color(True) else "Error"  # red on a terminal only
    lines.append(f"{label}: {inert(e.format_message())}")
    click.echo("\n".join(lines), err=True, color=want_color(True))


def plain_output(ctx: click.Context | None = None) -> None:
    """No colour or styling anywhere: our helpers, rich-click's help and usage errors (bold
    included, which rich keeps under NO_COLOR), and the programs vtcode runs."""
    os.environ["NO_COLOR"] = "1"
    click.rich_click.COLOR_SYSTEM = None
    config = getattr(ctx, "help_config", None)
    if config is not None:  # the root context read the globals before this option was parsed
        config.color_system = None


def _asked_color(args: list[str]) -> str | None:
    """The colour the command line asks for ("always", "never" or None), read before parsing:
    help and usage errors are printed before the options are parsed (`vtcode --help --no-color`,
    a misplaced `vtcode sessions --no-color`). These words are never valid arguments elsewhere."""
    end = args.index("--") if "--" in args else len(args)
    head = args[:end]
    asked: str | None = None
    for a, nxt in itertools.pairwise([*head, ""]):
        if a == "--no-color":
            asked = "never"
        elif a.startswith("--color="):
            asked = a.split("=", 1)[1]
        elif a == "--color":
            asked = nxt
    return asked if asked in ("always", "never") else None


def force_color() -> None:
    """`--color always`: colour even off a terminal, for us, rich-click's help and children."""
    os.environ.pop("NO_COLOR", None)
    os.environ["FORCE_COLOR"] = "1"
    click.rich_click.FORCE_TERMINAL = True


def _color_option(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """`--color` beats the environment (no-color.org, force-color.org): never is --no-color;
    always forces colour even off a terminal (FORCE_COLOR=1 for everything vtcode renders)."""
    if value == "never":
        plain_output(ctx)
    elif value == "always":
        force_color()
    return value


def _no_color_option(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if value:
        plain_output(ctx)
    return value


@click.group(
    cls=LazyGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, "-V", "--version", prog_name="vtcode")
@click.option(
    "--workspace",
    "-C",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Workspace folder (default: the current directory). Sessions live in WORKSPACE/.vtcode/.",
)
@click.option(
    "-c",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    callback=check_overrides,
    help="Override a config key; VALUE is TOML (e.g. -c agent.harness.max_budget_usd=2.5).",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Extra config file layered over the workspace vtcode.toml.",
)
@click.option("-q", "--quiet", is_flag=True, help="No human progress on stderr.")
@click.option(
    "--no-color",
    is_flag=True,
    is_eager=True,
    callback=_no_color_option,
    help="No colour (also honoured: NO_COLOR=1). Same as --color never.",
)
@click.option(
    "--color",
    "color_mode",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    is_eager=True,
    callback=_color_option,
    help="Colour: auto (a terminal, unless NO_COLOR), always (also FORCE_COLOR=1), never.",
)
@click.pass_context
def cli(
    ctx: click.Context,
    workspace: Path | None,
    overrides: tuple[str, ...],
    config_file: Path | None,
    quiet: bool,
    no_color: bool,
    color_mode: str,
) -> int | None:
    """vtcode: a headless agent-loop harness with one versioned event contract.

    Every run is an explicit state machine (orient, turn, tool, compact/reset, complete) that
    writes ThreadEvent 0.11.0 events to a durable session under WORKSPACE/.vtcode/sessions/.
    Exit codes: 0 success, 1 error, 2 usage/config/input, 3 max turns, 4 max budget,
    75 lock busy (retry later), 130 cancelled. Without a COMMAND on a terminal: `chat`.
    """
    color = not (no_color or os.environ.get("NO_COLOR"))
    ctx.obj = AppContext(
        workspace=(workspace or Path.cwd()).absolute(),
        overrides=list(overrides),
        config_file=config_file,
        quiet=quiet,
        color=color,
    )
    if ctx.invoked_subcommand is not None:
        return None
    # No command: an interactive session on a terminal, the help (usage error) otherwise.
    tty = _is_tty(sys.stdin) and _is_tty(sys.stdout)
    chat = cli.get_command(ctx, "chat") if tty else None
    if chat is None:
        click.echo(ctx.get_help())
        return int(ExitCode.USAGE)
    # Parsed as `vtcode chat` with no arguments (not ctx.invoke, which skips environment
    # variables such as VTCODE_PROVIDER).
    with chat.make_context("chat", [], parent=ctx) as sub:
        result: Any = chat.invoke(sub)
    return int(result) if isinstance(result, int) else None


attach_examples(cli, "")


def _is_tty(stream: Any) -> bool:
    """A closed or missing stream (`vtcode <&-`) is simply not a terminal."""
    try:
        return bool(stream is not None and stream.isatty())
    except (ValueError, OSError):
        return False


def _report(err: VtcodeError, app: AppContext | None) -> None:
    from vtcode.cli.output import print_error

    print_error(str(err), color=bool(app and app.color))


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point: run the CLI, map every failure to a documented exit code, never a traceback."""
    code: int = ExitCode.OK
    app: AppContext | None = None
    asked = _asked_color(sys.argv[1:] if argv is None else argv)
    if asked == "always":
        force_color()
    elif asked == "never" or os.environ.get("NO_COLOR"):  # NO_COLOR beats FORCE_COLOR
        plain_output()
    _name_stdout_errors()
    try:
        result: Any = cli.main(args=argv, prog_name="vtcode", standalone_mode=False)
        code = int(result) if isinstance(result, int) else ExitCode.OK
    except Exit as e:
        code = e.exit_code
    except click.ClickException as e:
        _show_click_error(e)
        code = ExitCode.USAGE if isinstance(e, click.UsageError) else e.exit_code
    except Abort:
        code = ExitCode.CANCELLED
    except VtcodeError as e:
        _report(e, app)
        code = e.exit_code
        if type(e) is VtcodeError and isinstance(e.__context__, OSError):
            # A plain error raised while handling an OSError (`cannot append to
            # .vtcode/state/notes.md: Is a directory`): the environment refused, as below.
            code = ExitCode.USAGE
    except KeyboardInterrupt:
        code = ExitCode.CANCELLED
    except BrokenPipeError:
        # The reader went away (`vtcode ... | head`): not an error of ours.
        _drop_stdout()
        code = ExitCode.OK
    except OSError as e:
        # The environment refused (read-only workspace, a file where a folder belongs, a full
        # disk or standard output): a located usage-class error, not an internal one.
        _report(_os_error(e), app)
        code = ExitCode.USAGE
    except Exception as e:  # pragma: no cover - last resort: still no bare traceback
        if os.environ.get("VTCODE_DEBUG"):
            raise
        from vtcode.cli.output import print_error

        print_error(
            f"internal error: {type(e).__name__}: {e} (set VTCODE_DEBUG=1 for a traceback)",
            color=False,
        )
        code = ExitCode.FAILURE
    code = _flush_stdout(code, app)
    sys.exit(code)


def _stdout_target() -> str:
    """What standard output is connected to, for messages (`standard output (<path>)`)."""
    try:
        return f"standard output ({Path('/proc/self/fd/1').readlink()})"
    except OSError:
        return "standard output"


def _drop_stdout() -> None:
    """Point fd 1 at the null device so the interpreter's exit-time flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    except OSError:
        pass


class _StdoutRaw(io.FileIO):
    """fd 1, whose write errors name standard output (an OSError has no file name otherwise,
    and a full disk behind stdout would read as an internal error)."""

    def write(self, b: Any) -> int:
        try:
            return super().write(b)
        except BlockingIOError:
            raise
        except OSError as e:
            raise type(e)(e.errno, e.strerror, _stdout_target()) from None


def _name_stdout_errors() -> None:
    """Put `_StdoutRaw` under `sys.stdout`, keeping its encoding and buffering."""
    out = sys.stdout
    try:
        if out is None or out.fileno() != 1 or not isinstance(out, io.TextIOWrapper):
            return
        out.flush()
        raw = _StdoutRaw(1, "w", closefd=False)
    except (OSError, ValueError):
        return
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(raw),
        encoding=out.encoding,
        errors=out.errors,
        line_buffering=out.line_buffering,
        write_through=out.write_through,
    )


def _os_error(e: OSError) -> VtcodeError:
    from vtcode.errors import environment_error

    if isinstance(e.filename, str) and e.filename.startswith("standard output"):
        _drop_stdout()
        return environment_error(e, "write")
    return environment_error(e, "complete the command")


def _flush_stdout(code: int, app: AppContext | None) -> int:
    """Flush standard output before exiting: a full or broken one is reported (exit 2), not
    left to the interpreter's exit-time flush (which would print a traceback-like warning)."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        _drop_stdout()
    except (OSError, ValueError) as e:
        from vtcode.errors import environment_error

        if isinstance(e, OSError):
            _report(environment_error(e, "write", path=_stdout_target()), app)
        _drop_stdout()
        return int(ExitCode.USAGE) if code == ExitCode.OK else code
    return code
