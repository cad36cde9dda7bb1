"""The model and environment options of `vtcode exec`, declared once for exec and eval.

`vtcode eval` runs every task as an ordinary `vtcode exec` and passes these options on, so the
two commands must take them with the same names, types, help and checks: one declaration
keeps them from drifting apart (as cli/loop_opts.py does for loop run and fleet add).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import rich_click as click

from vtcode.cli.cmd_completion import complete_provider
from vtcode.cli.context import check_overrides
from vtcode.cli.sandbox_opt import sandbox_option, sandbox_overrides

F = TypeVar("F", bound=Callable[..., Any])

__all__ = [
    "exec_args",
    "exec_model_options",
    "instruction_overrides",
    "model_options",
    "no_instructions_option",
    "overrides_option",
    "provider_option",
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
