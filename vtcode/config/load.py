"""Placeholder: the config loader lands with the config work (issue 2, part 5)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from vtcode.config.model import VtcodeConfig


@dataclasses.dataclass(frozen=True)
class LoadedConfig:
    """The effective config and the files it came from (lowest precedence first)."""

    config: VtcodeConfig
    sources: list[Path]


def load_config(
    *, workspace: Path, config_file: Path | None = None, overrides: list[str] | None = None
) -> LoadedConfig:
    return LoadedConfig(config=VtcodeConfig(), sources=[])
