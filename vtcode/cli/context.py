"""What the root command hands every subcommand: workspace, overrides, output preferences."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vtcode.config.load import LoadedConfig


def check_overrides(ctx: Any, param: Any, values: tuple[str, ...]) -> tuple[str, ...]:
    """Click callback of every `-c KEY=VALUE` option (the global one and the per-command ones)."""
    import click

    for v in values:
        if "=" not in v:
            raise click.BadParameter(f"{v!r} is not KEY=VALUE", ctx=ctx, param=param)
    return values


@dataclasses.dataclass
class AppContext:
    """Global options, plus the config loaded on first use (so `--help` never reads it)."""

    workspace: Path
    overrides: list[str]
    config_file: Path | None
    quiet: bool
    color: bool
    _loaded: LoadedConfig | None = None

    def add_overrides(self, values: tuple[str, ...]) -> None:
        """A command's own `-c` options, layered after the global ones (before the first load)."""
        assert self._loaded is None, "overrides must be added before the config is loaded"
        self.overrides.extend(values)

    def loaded_config(self) -> LoadedConfig:
        if self._loaded is None:
            from vtcode.config.load import load_config

            self._loaded = load_config(
                workspace=self.workspace,
                config_file=self.config_file,
                overrides=self.overrides,
            )
            # once per process: what an untrusted workspace config could not apply
            for line in self._loaded.trust_warnings():
                from vtcode.cli.output import print_warning

                print_warning(line, color=self.color)
        return self._loaded
