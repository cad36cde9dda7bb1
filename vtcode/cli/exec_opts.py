"""The model and environment options of `vtcode exec`, declared once for exec and eval.

`vtcode eval` runs every task as an ordinary `vtcode exec` and passes these options on, so the
two commands must take them with the same names, types, help and checks: one declaration
keeps them from drifting apart (as cli/loop_opts.py does for loop run and fleet add).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import rich_click as click

from vtcode.cli.cmd_completion import complete_provider
from vtcode.cli.context import check_overrides
from vtcode.cli.sandbox_opt import sandbox_option, sandbox_overrides

if TYPE_CHECKING:
    from vtcode.tools.tool_limits import ToolLimits

F = TypeVar("F", bound=Callable[..., Any])

__all__ = [
    "exec_args",
    "exec_model_options",
    "instruction_overrides",
    "model_options",
    "no_instructions_option",
    "overrides_option",
    "prompt_options",
    "prompt_overrides",
    "provider_option",
    "tool_limits",
    "tool_options",
]

provider_option = click.option(
    "--provider",
    shell_complete=complete_provider,
    envvar="VTCODE_PROVIDER",
    show_envvar=True,
    help=(
        "openai, anthropic, openai-responses, replay or a [providers.NAME] table; no default"
        " (--script implies replay)."
    ),
)
_MODEL = click.option("--model", help="Model id (overrides agent.model).")
_OVERRIDES = click.option(
    "-c",
    "overrides",
    multiple=True,
    callback=check_overrides,
    metavar="KEY=VALUE",
    help="Override a config key for this run (same as the global -c).",
)


no_instructions_option = click.option(
    "--no-instructions",
    is_flag=True,
    help=(
        "Read no AGENTS.md files this run (as -c agent.instructions.enabled=false),"
        ' e.g. vtcode exec --no-instructions "..."'
    ),
)


_PROMPT_META = "vtcode.prompt_overrides"


def _prompt_key(key: str, is_file: bool) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """Click callback: remember the value as `-c agent.KEY=...` (a file as an absolute path:
    the run reads it relative to the workspace, the user typed it relative to this folder)."""

    def remember(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is None:
            return value
        from pathlib import Path

        from vtcode.config.render import inline

        text = str(Path(value).absolute()) if is_file else str(value)
        ctx.meta.setdefault(_PROMPT_META, []).append(f"agent.{key}={inline(text)}")
        return value

    return remember


_FILE = click.Path(exists=True, dir_okay=False)
_PROMPT_OPTIONS = (
    click.option(
        "--system-prompt",
        metavar="TEXT",
        expose_value=False,
        callback=_prompt_key("system_prompt", False),
        help=(
            "Replace the built-in system prompt (AGENTS.md and orientation still follow),"
            ' e.g. --system-prompt "You review code; never edit." (agent.system_prompt)'
        ),
    ),
    click.option(
        "--system-prompt-file",
        metavar="FILE",
        type=_FILE,
        expose_value=False,
        callback=_prompt_key("system_prompt_file", True),
        help="Replace it with FILE's text, e.g. --system-prompt-file ci/prompt.md.",
    ),
    click.option(
        "--append-system-prompt",
        metavar="TEXT",
        expose_value=False,
        callback=_prompt_key("append_system_prompt", False),
        help='Add TEXT after the system prompt, e.g. --append-system-prompt "Answer in French."',
    ),
    click.option(
        "--append-system-prompt-file",
        metavar="FILE",
        type=_FILE,
        expose_value=False,
        callback=_prompt_key("append_system_prompt_file", True),
        help="Add FILE's text after the system prompt, e.g. --append-system-prompt-file x.md.",
    ),
)


def prompt_options(func: F) -> F:
    """--system-prompt, --system-prompt-file, --append-system-prompt, --append-system-prompt-file
    (not passed: `prompt_overrides()` gives the config overrides they stand for)."""
    for option in reversed(_PROMPT_OPTIONS):
        func = option(func)
    return func


def prompt_overrides() -> tuple[str, ...]:
    """The `-c agent.*system_prompt*=...` overrides the prompt options of this command gave."""
    ctx = click.get_current_context()
    assert ctx is not None  # called from inside a command
    return tuple(ctx.meta.get(_PROMPT_META, ()))


_TOOLS_META = "vtcode.tool_limits"


def _tool_key(key: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def remember(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value:
            ctx.meta.setdefault(_TOOLS_META, {})[key] = value
        return value

    return remember


_TOOL_OPTIONS = (
    click.option(
        "--tools",
        metavar="A,B",
        expose_value=False,
        callback=_tool_key("tools"),
        help="Offer the model only these tools (names or globs), e.g. --tools read_file,grep.",
    ),
    click.option(
        "--allowed-tools",
        metavar="RULE",
        multiple=True,
        expose_value=False,
        callback=_tool_key("allowed"),
        help=(
            "Only tools and calls a RULE covers (repeatable; permission rule grammar),"
            ' e.g. --allowed-tools read_file --allowed-tools "exec_command(git *)".'
        ),
    ),
    click.option(
        "--disallowed-tools",
        metavar="RULE",
        multiple=True,
        expose_value=False,
        callback=_tool_key("disallowed"),
        help=(
            "Remove a tool (bare name) or deny the calls a rule matches (repeatable),"
            ' e.g. --disallowed-tools write_file --disallowed-tools "exec_command(rm *)".'
        ),
    ),
)


def tool_options(func: F) -> F:
    """--tools, --allowed-tools, --disallowed-tools (not passed: see `tool_limits()`); they
    only tighten what the config allows."""
    for option in reversed(_TOOL_OPTIONS):
        func = option(func)
    return func


def tool_limits() -> ToolLimits | None:
    """The run's tool limits from this command's tool options (None when none was given); a
    malformed rule is exit 2 naming the option."""
    from vtcode.tools.tool_limits import ToolLimits

    ctx = click.get_current_context()
    assert ctx is not None  # called from inside a command
    given: dict[str, Any] = ctx.meta.get(_TOOLS_META, {})
    if not given:
        return None
    names = given.get("tools")
    return ToolLimits.parse(
        None if names is None else [n.strip() for n in str(names).split(",")],
        list(given.get("allowed", ())),
        list(given.get("disallowed", ())),
    )


def instruction_overrides(no_instructions: bool) -> tuple[str, ...]:
    """The config overrides `--no-instructions` stands for."""
    return ("agent.instructions.enabled=false",) if no_instructions else ()


def model_options(func: F) -> F:
    """--provider, --model (passed as provider, model)."""
    return provider_option(_MODEL(func))


def overrides_option(func: F) -> F:
    """-c KEY=VALUE, repeatable (passed as overrides)."""
    return _OVERRIDES(func)


def exec_model_options(func: F) -> F:
    """--provider, --model, -c, --sandbox: what `vtcode eval` passes on to each exec."""
    return model_options(overrides_option(sandbox_option(func)))


def exec_args(
    provider: str | None,
    model: str | None,
    overrides: tuple[str, ...],
    sandbox_mode: str | None,
) -> list[str]:
    """The `vtcode exec` arguments these options stand for."""
    args: list[str] = []
    if provider:
        args += ["--provider", provider]
    if model:
        args += ["--model", model]
    for value in (*overrides, *sandbox_overrides(sandbox_mode)):
        args += ["-c", value]
    return args
