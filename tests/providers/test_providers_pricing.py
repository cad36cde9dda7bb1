"""The pricing table: known ids (and their dated snapshots) are priced, unknown ones are not."""

from __future__ import annotations

import pytest

from vtcode.events.types import Usage
from vtcode.providers.pricing import context_window_for, pricing_for


@pytest.mark.parametrize(
    ("provider", "model", "inp", "out"),
    [
        ("openai", "gpt-4o", 2.5, 10.0),
        ("openai", "gpt-4o-2024-08-06", 2.5, 10.0),
        ("openai", "gpt-4o-mini", 0.15, 0.6),
        ("openai", "openai/gpt-4.1-mini", 0.4, 1.6),
        ("openai", "o3-mini-2025-01-31", 1.1, 4.4),
        ("anthropic", "claude-sonnet-4-20250514", 3.0, 15.0),
        ("anthropic", "claude-3-5-haiku-latest", 0.8, 4.0),
        ("anthropic", "claude-opus-4-1-20250805", 15.0, 75.0),
    ],
)
def test_known_models(provider: str, model: str, inp: float, out: float) -> None:
    p = pricing_for(provider, model)
    assert p is not None
    assert (p.input_per_mtok, p.output_per_mtok) == (inp, out)
    assert context_window_for(provider, model) is not None


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("openai", "llama3.2"),
        ("openai", "gpt-4o-turbo-x"),
        ("anthropic", "gpt-4o"),
        ("x", "gpt-4o"),
    ],
)
def test_unknown_models_have_no_pricing(provider: str, model: str) -> None:
    assert pricing_for(provider, model) is None
    assert context_window_for(provider, model) is None


def test_cost_uses_cache_prices() -> None:
    p = pricing_for("anthropic", "claude-sonnet-4")
    assert p is not None
    usage = Usage(
        input_tokens=1_000_000 + 2_000_000 + 1_000_000,
        cached_input_tokens=2_000_000,
        cache_creation_tokens=1_000_000,
        output_tokens=1_000_000,
    )
    # 1M uncached * 3 + 2M read * 0.3 + 1M write * 3.75 + 1M out * 15
    assert p.cost(usage) == pytest.approx(3.0 + 0.6 + 3.75 + 15.0)
