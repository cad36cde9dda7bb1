"""What the root command hands every subcommand: workspace, overrides, output preferences."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vtcode.config.load import LoadedConfig


@dataclasses.dataclass
class AppContext:
    """Global options, plus the config loaded on first use (so `--help` never reads it)."""

    workspace: Path
    overrides: list[str]
    config_file: Path | None
    quiet: bool
    color: bool
    _loaded: LoadedConfig | None = None

    def loaded_config(self) -> LoadedConfig:
        if self._loaded is None:
            from vtcode.config.load import load_config

            self._loaded = load_config(
                workspace=self.workspace,
                config_file=self.config_file,
                overrides=self.overrides,
            )
        return self._loaded
