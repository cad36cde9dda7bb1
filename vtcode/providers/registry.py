"""`make_provider`: the one place a provider name becomes a configured `Provider`.

Provider modules are imported only when chosen, so a replay run never imports httpx.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from vtcode.config.model import VtcodeConfig
from vtcode.errors import UsageError
from vtcode.providers.base import Provider

__all__ = ["KNOWN_PROVIDERS", "make_provider"]

Factory = Callable[[VtcodeConfig, str | None, str | None, Path], Provider]


def _replay(
    config: VtcodeConfig, model: str | None, script: str | None, workspace: Path
) -> Provider:
    from vtcode.providers.replay import ReplayProvider
    from vtcode.providers.script import resolve_script

    path = resolve_script(script, workspace=workspace)
    return ReplayProvider.from_file(path, model=model)


_FACTORIES: dict[str, Factory] = {"replay": _replay}
KNOWN_PROVIDERS: tuple[str, ...] = tuple(_FACTORIES)


def make_provider(
    name: str,
    *,
    config: VtcodeConfig,
    model: str | None,
    script: str | None,
    workspace: Path,
) -> Provider:
    """Build provider `name`; `model` overrides `agent.model`; `script` is for replay only."""
    key = name.strip().lower()
    factory = _FACTORIES.get(key)
    if factory is None:
        raise UsageError(
            f"unknown provider {name!r}", hint=f"known providers: {', '.join(_FACTORIES)}"
        )
    if script is not None and key != "replay":
        raise UsageError(f"--script only applies to the replay provider, not {key!r}")
    return factory(config, model or config.agent.model, script, workspace)
