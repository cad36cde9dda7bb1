"""Command groups that answer a mistyped subcommand with the nearest one (like git and gh).

`vtcode sesions list` -> "No such command 'sesions'. Did you mean 'sessions'?" (exit 2), at
every level: the root group and each subgroup (sessions, config, loop, ...) use this class.
"""

from __future__ import annotations

import difflib

import rich_click as click

from vtcode.cli.examples import attach_examples

__all__ = ["SuggestingGroup"]


class SuggestingGroup(click.RichGroup):
    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None:  # its Examples block, from the one table (vtcode/cli/examples.py)
            path = " ".join([*ctx.command_path.split()[1:], cmd_name])
            attach_examples(cmd, path)
        return cmd

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as e:
            name = args[0] if args else ""
            if name and "No such command" in e.message:
                close = difflib.get_close_matches(name, self.list_commands(ctx), n=1, cutoff=0.6)
                if close:
                    hint = f"{e.message.rstrip('.')}. Did you mean {close[0]!r}?"
                    raise click.UsageError(hint, ctx=e.ctx) from None
            raise
