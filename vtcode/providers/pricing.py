"""List prices and context windows of well-known OpenAI and Anthropic models.

USD per million tokens, standard (non-batch) tier, as published by the vendors in 2025. Anthropic
cache writes are the 5-minute tier (1.25x input) and cache reads 0.1x input. Dated snapshots
(`claude-sonnet-4-20250514`, `gpt-4o-2024-08-06`), `-latest` aliases and `vendor/` prefixes
(OpenRouter) resolve to their family. Unknown models return None: vtcode then enforces no budget
and omits `total_cost_usd`, as upstream does. Prices change; treat this as a default, not a bill.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from vtcode.providers.base import Pricing

__all__ = ["ModelFacts", "context_window_for", "facts_for", "pricing_for"]


@dataclass(frozen=True, slots=True)
class ModelFacts:
    pricing: Pricing
    context_window: int


def _p(inp: float, out: float, cached: float | None = None, write: float | None = None) -> Pricing:
    return Pricing(
        input_per_mtok=inp,
        output_per_mtok=out,
        cached_input_per_mtok=cached,
        cache_write_per_mtok=write,
    )


def _claude(inp: float, out: float, window: int = 200_000) -> ModelFacts:
    return ModelFacts(_p(inp, out, round(inp * 0.1, 6), round(inp * 1.25, 6)), window)


_OPENAI: dict[str, ModelFacts] = {
    "gpt-5": ModelFacts(_p(1.25, 10.0, 0.125), 400_000),
    "gpt-5-mini": ModelFacts(_p(0.25, 2.0, 0.025), 400_000),
    "gpt-5-nano": ModelFacts(_p(0.05, 0.40, 0.005), 400_000),
    "gpt-4.1": ModelFacts(_p(2.0, 8.0, 0.50), 1_047_576),
    "gpt-4.1-mini": ModelFacts(_p(0.40, 1.60, 0.10), 1_047_576),
    "gpt-4.1-nano": ModelFacts(_p(0.10, 0.40, 0.025), 1_047_576),
    "gpt-4o": ModelFacts(_p(2.50, 10.0, 1.25), 128_000),
    "gpt-4o-mini": ModelFacts(_p(0.15, 0.60, 0.075), 128_000),
    "o1": ModelFacts(_p(15.0, 60.0, 7.50), 200_000),
    "o3": ModelFacts(_p(2.0, 8.0, 0.50), 200_000),
    "o3-mini": ModelFacts(_p(1.10, 4.40, 0.55), 200_000),
    "o4-mini": ModelFacts(_p(1.10, 4.40, 0.275), 200_000),
}

_ANTHROPIC: dict[str, ModelFacts] = {
    "claude-opus-4-5": _claude(5.0, 25.0),
    "claude-opus-4-1": _claude(15.0, 75.0),
    "claude-opus-4": _claude(15.0, 75.0),
    "claude-sonnet-4-5": _claude(3.0, 15.0),
    "claude-sonnet-4": _claude(3.0, 15.0),
    "claude-haiku-4-5": _claude(1.0, 5.0),
    "claude-3-7-sonnet": _claude(3.0, 15.0),
    "claude-3-5-sonnet": _claude(3.0, 15.0),
    "claude-3-5-haiku": _claude(0.80, 4.0),
    "claude-3-opus": _claude(15.0, 75.0),
    "claude-3-haiku": _claude(0.25, 1.25),
}

_TABLES = {"openai": _OPENAI, "anthropic": _ANTHROPIC}
_SUFFIX = re.compile(r"-(?:\d{4}-\d{2}-\d{2}|\d{8}|latest)$")


def facts_for(provider: str, model: str) -> ModelFacts | None:
    """The facts for `model` of `provider` (None when the model is not in the table)."""
    table = _TABLES.get(provider)
    if table is None:
        return None
    name = model.strip().lower().rsplit("/", 1)[-1]
    name = _SUFFIX.sub("", name)
    return table.get(name)


def pricing_for(provider: str, model: str) -> Pricing | None:
    facts = facts_for(provider, model)
    return None if facts is None else facts.pricing


def context_window_for(provider: str, model: str) -> int | None:
    facts = facts_for(provider, model)
    return None if facts is None else facts.context_window
