"""The budgets and run options of a loop, declared once for `loop run` and `fleet add`.

A fleet step is exactly `loop run --steps 1` with the options `fleet add` registered, so the two
commands must take the same options with the same names, types, help and defaults: one
declaration keeps them from drifting apart.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import rich_click as click

from vtcode.cli.cmd_completion import complete_script
from vtcode.cli.exec_opts import provider_option
from vtcode.cli.ranges import FiniteFloatRange, key_option_type

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["loop_run_options"]

_OPTIONS = (
    click.option("--max-steps", type=click.IntRange(min=0), help="Budget: total steps (stored)."),
    click.option("--max-tokens", type=click.IntRange(min=0), help="Budget: total tokens (stored)."),
    click.option("--max-cost", type=FiniteFloatRange(min=0), help="Budget: total USD (stored)."),
    provider_option,
    click.option(
        "--script",
        shell_complete=complete_script,
        help="Replay script: a path or a shipped script name.",
    ),
    click.option("--model", help="Model id (overrides agent.model)."),
    click.option(
        "--max-turns",
        type=key_option_type("automation.full_auto.max_turns"),
        help="Turn cap of each step.",
    ),
)


def loop_run_options(func: F) -> F:
    """--max-steps, --max-tokens, --max-cost, --provider, --script, --model, --max-turns (in
    this order in --help), passed as max_steps, max_tokens, max_cost, provider, script, model,
    max_turns."""
    for option in reversed(_OPTIONS):
        func = option(func)
    return func
