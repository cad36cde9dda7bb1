"""`[providers.NAME]`: the model endpoints of vtcode.toml (kept apart from model.py, which holds
every other section, so that file stays one screenful per section).

`BUILTIN_PROVIDERS` are the shipped public APIs, one per kind; config/providers.py overlays the
user's tables on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated

from vtcode.jsontypes import U32, U64, Doc, FloatRange

__all__ = [
    "BUILTIN_PROVIDERS",
    "MAX_PRICE_PER_MTOK",
    "Price",
    "ProviderConfig",
    "ProviderKind",
    "ProviderPricing",
]

# No model costs a million dollars per million tokens; the cap keeps every cost finite (u64
# tokens at this price stay below 2e19 USD), so a budget can always trip. A negative price made
# `total_cost_usd` negative and a budget that never tripped; inf made the cost unknowable.
MAX_PRICE_PER_MTOK = 1_000_000.0

Price = Annotated[float, FloatRange(0, MAX_PRICE_PER_MTOK)]


class ProviderKind(StrEnum):
    """The wire API a `[providers.NAME]` table speaks."""

    OPENAI = "openai"  # Chat Completions: OpenAI and every compatible server
    ANTHROPIC = "anthropic"  # Messages API
    OPENAI_RESPONSES = "openai-responses"  # Responses API


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderPricing:
    """`[providers.NAME.pricing]`: USD per million tokens (replaces the built-in price table)."""

    input_per_mtok: Price
    output_per_mtok: Price
    cached_input_per_mtok: Annotated[Price | None, Doc("default: the input price")] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderConfig:
    """`[providers.NAME]`: one model endpoint; an unset key takes the kind's default.

    A table named like a shipped provider (openai, anthropic, openai-responses) changes only
    the keys it sets. `--provider NAME` or `agent.provider` chooses one.
    """

    kind: Annotated[
        ProviderKind | None, Doc("openai | anthropic | openai-responses (required for a new name)")
    ] = None
    base_url: Annotated[
        str | None, Doc("default: the kind's public API, or OPENAI_BASE_URL / ANTHROPIC_BASE_URL")
    ] = None
    api_key_env: Annotated[
        str | None, Doc("the environment variable holding the key (never the key itself)")
    ] = None
    model: Annotated[
        str | None, Doc("default model; --model wins, and agent.model when this is agent.provider")
    ] = None
    context_window: Annotated[U64 | None, Doc("tokens; default: the built-in table")] = None
    pricing: Annotated[
        ProviderPricing | None,
        Doc("USD per million tokens: {input_per_mtok, output_per_mtok, cached_input_per_mtok}"),
    ] = None
    max_output_tokens: Annotated[
        U32 | None, Doc("output cap sent on every request (default 8192)")
    ] = None
    headers: Annotated[
        dict[str, str], Doc("extra HTTP headers, literal values (shown redacted)")
    ] = field(default_factory=dict)
    images: Annotated[
        bool | None,
        Doc("the model takes images (exec -i); false: -i is exit 2; unset: vtcode's table"),
    ] = None


BUILTIN_PROVIDERS: dict[str, ProviderConfig] = {
    kind.value: ProviderConfig(kind=kind) for kind in ProviderKind
}
