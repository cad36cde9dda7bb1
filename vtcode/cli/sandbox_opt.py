"""`--sandbox MODE` on exec, chat and loop run: a shorthand for `-c sandbox.mode=MODE`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import rich_click as click

from vtcode.config.model import SandboxMode

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["sandbox_option", "sandbox_overrides"]


def sandbox_option(func: F) -> F:
    """The click option, the same on every command that runs exec_command."""
    return click.option(
        "--sandbox",
        "sandbox_mode",
        type=click.Choice([m.value for m in SandboxMode]),
        help="exec_command's sandbox (sandbox.mode); network: -c sandbox.network=true.",
    )(func)


def sandbox_overrides(mode: str | None) -> tuple[str, ...]:
    """The `-c` override `--sandbox MODE` stands for (layered after the other -c options)."""
    return () if mode is None else (f"sandbox.mode={mode}",)
