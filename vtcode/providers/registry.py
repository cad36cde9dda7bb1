"""`make_provider`: the one place a provider name becomes a configured `Provider`.

Provider modules are imported only when chosen, so a replay run never imports httpx. A name is
`replay` or a provider of the config (config/providers.py: the shipped `openai`, `anthropic`,
`openai-responses`, overlaid by `[providers.NAME]` tables); its `kind` picks the class. Endpoint:
the table's `base_url`, else `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL`, else the public API; key:
the variable `api_key_env` names, else `OPENAI_API_KEY` / `ANTHROPIC_API_KEY` (a loopback base
URL needs no key). Model: --model; then the table's `model` when the provider is not
`agent.provider`, so `--provider ollama` does not send the agent's Claude model name to Ollama;
then `agent.model`; then the table's. Retries: `agent.max_task_retries`; deadlines:
`agent.request_timeout_secs`, `agent.stream_idle_timeout_secs`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from vtcode.config.model import VtcodeConfig
from vtcode.config.provider_model import ProviderConfig, ProviderKind
from vtcode.config.providers import effective_providers
from vtcode.errors import UsageError
from vtcode.providers.base import Pricing, Provider
from vtcode.providers.deadline import Deadlines
from vtcode.providers.retry import RetryPolicy

if TYPE_CHECKING:  # the classes import httpx, which a replay run never loads
    from vtcode.providers.http_provider import HTTPProvider

__all__ = [
    "KIND_CLASSES",
    "KNOWN_PROVIDERS",
    "PROVIDER_ENV",
    "chosen_provider",
    "make_provider",
]

Factory = Callable[[VtcodeConfig, str | None, str | None, Path], Provider]


def _replay(
    config: VtcodeConfig, model: str | None, script: str | None, workspace: Path
) -> Provider:
    from vtcode.providers.replay import ReplayProvider
    from vtcode.providers.script import resolve_script

    path = resolve_script(script, workspace=workspace)
    return ReplayProvider.from_file(path, model=model, workspace=workspace)


def _require_model(provider: str, model: str | None) -> str:
    if not model or not model.strip():
        raise UsageError(
            f"the {provider} provider needs a model",
            hint=f"pass --model NAME, or set agent.model or providers.{provider}.model",
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


def _openai_class() -> type[HTTPProvider]:
    from vtcode.providers.openai import OpenAIProvider

    return OpenAIProvider


def _anthropic_class() -> type[HTTPProvider]:
    from vtcode.providers.anthropic import AnthropicProvider

    return AnthropicProvider


def _responses_class() -> type[HTTPProvider]:
    from vtcode.providers.openai_responses import OpenAIResponsesProvider

    return OpenAIResponsesProvider


# The class of each wire API, imported only when chosen. A kind without a class here is refused
# with a clear message, never a traceback.
KIND_CLASSES: dict[ProviderKind, Callable[[], type[HTTPProvider]]] = {
    ProviderKind.OPENAI: _openai_class,
    ProviderKind.ANTHROPIC: _anthropic_class,
    ProviderKind.OPENAI_RESPONSES: _responses_class,
}


def _kind_class(name: str, kind: ProviderKind) -> type[HTTPProvider]:
    load = KIND_CLASSES.get(kind)
    if load is None:
        raise UsageError(
            f"provider {name!r}: kind {kind.value!r} is not available in this build",
            hint="use kind openai or anthropic",
        )
    return load()


def _pricing(table: ProviderConfig) -> Pricing | None:
    p = table.pricing
    if p is None:
        return None
    return Pricing(
        input_per_mtok=p.input_per_mtok,
        output_per_mtok=p.output_per_mtok,
        cached_input_per_mtok=p.cached_input_per_mtok,
    )


def _configured(
    name: str, table: ProviderConfig, config: VtcodeConfig, model: str | None
) -> Provider:
    """A `[providers.NAME]` table (shipped defaults overlaid) as a provider."""
    if table.kind is None:
        raise UsageError(
            f"provider {name!r} has no kind",
            hint=f"set providers.{name}.kind to one of: "
            + ", ".join(k.value for k in ProviderKind),
        )
    cls = _kind_class(name, table.kind)
    return cls(
        model=_require_model(name, model),
        base_url=table.base_url,
        api_key_env=table.api_key_env,
        headers=table.headers,
        max_output_tokens=table.max_output_tokens,
        context_window=table.context_window,
        pricing=_pricing(table),
        retry=_retry(config),
        deadlines=_deadlines(config),
        label=name,
        images=table.images,
    )


_FACTORIES: dict[str, Factory] = {"replay": _replay}
KNOWN_PROVIDERS: tuple[str, ...] = ("replay", *(k.value for k in ProviderKind))


PROVIDER_ENV = "VTCODE_PROVIDER"


def chosen_provider(name: str | None, *, script: str | None) -> str:
    """The provider a run uses: the one chosen (flag, `VTCODE_PROVIDER`, `agent.provider`), or
    replay when only a script was given. None of them is a usage error, never a default: a CI job
    that forgot its provider must fail loudly instead of "succeeding" on a scripted model."""
    if name is not None and name.strip():
        return name
    if script is not None:
        return "replay"
    raise UsageError(
        "no provider chosen",
        hint=(
            f"choose one with --provider NAME, the {PROVIDER_ENV} environment variable, or"
            " agent.provider in vtcode.toml; --script FILE (or --provider replay) runs the"
            " embedded replay provider. Providers: " + ", ".join(KNOWN_PROVIDERS)
        ),
    )


def make_provider(
    name: str,
    *,
    config: VtcodeConfig,
    model: str | None,
    script: str | None,
    workspace: Path,
) -> Provider:
    """Build provider `name`; `model` overrides `agent.model`; `script` is for replay only."""
    key = name.strip()
    factory = _FACTORIES.get(key.lower())
    tables = effective_providers(config)
    if factory is None and key not in tables:
        known = ", ".join([*_FACTORIES, *tables])
        raise UsageError(f"unknown provider {name!r}", hint=f"known providers: {known}")
    if script is not None and factory is None:
        raise UsageError(f"--script only applies to the replay provider, not {key!r}")
    if factory is not None:
        return factory(config, model or config.agent.model, script, workspace)
    table = tables[key]
    own = table.model if key != config.agent.provider else None
    chosen = model or own or config.agent.model or table.model
    return _configured(key, table, config, chosen)
