"""`make_provider`: the one place a provider name becomes a configured `Provider`.

Provider modules are imported only when chosen, so a replay run never imports httpx. Endpoints
and keys come from the environment: `OPENAI_BASE_URL` / `OPENAI_API_KEY`, `ANTHROPIC_BASE_URL` /
`ANTHROPIC_API_KEY` (a loopback base URL needs no key). Retries: `agent.max_task_retries`;
deadlines: `agent.request_timeout_secs`, `agent.stream_idle_timeout_secs`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from vtcode.config.model import VtcodeConfig
from vtcode.errors import UsageError
from vtcode.providers.base import Provider
from vtcode.providers.deadline import Deadlines
from vtcode.providers.retry import RetryPolicy

__all__ = ["KNOWN_PROVIDERS", "make_provider"]

Factory = Callable[[VtcodeConfig, str | None, str | None, Path], Provider]


def _replay(
    config: VtcodeConfig, model: str | None, script: str | None, workspace: Path
) -> Provider:
    from vtcode.providers.replay import ReplayProvider
    from vtcode.providers.script import resolve_script

    path = resolve_script(script, workspace=workspace)
    return ReplayProvider.from_file(path, model=model)


def _require_model(provider: str, model: str | None) -> str:
    if not model or not model.strip():
        raise UsageError(
            f"the {provider} provider needs a model", hint="pass --model NAME or set agent.model"
        )
    return model.strip()


def _retry(config: VtcodeConfig) -> RetryPolicy:
    return RetryPolicy(max_retries=config.agent.max_task_retries)


def _deadlines(config: VtcodeConfig) -> Deadlines:
    """`agent.request_timeout_secs` and `agent.stream_idle_timeout_secs` (0 = no limit)."""
    try:
        return Deadlines(
            total=config.agent.request_timeout_secs, idle=config.agent.stream_idle_timeout_secs
        )
    except ValueError as exc:
        raise UsageError(str(exc), hint="fix it in config.toml or with -c KEY=VALUE") from None


def _openai(
    config: VtcodeConfig, model: str | None, script: str | None, workspace: Path
) -> Provider:
    from vtcode.providers.openai import OpenAIProvider

    return OpenAIProvider(
        model=_require_model("openai", model), retry=_retry(config), deadlines=_deadlines(config)
    )


def _anthropic(
    config: VtcodeConfig, model: str | None, script: str | None, workspace: Path
) -> Provider:
    from vtcode.providers.anthropic import AnthropicProvider

    return AnthropicProvider(
        model=_require_model("anthropic", model), retry=_retry(config), deadlines=_deadlines(config)
    )


_FACTORIES: dict[str, Factory] = {"replay": _replay, "openai": _openai, "anthropic": _anthropic}
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
