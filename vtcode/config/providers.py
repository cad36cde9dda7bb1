"""The providers a config offers: the shipped public APIs overlaid by `[providers.NAME]` tables.

One definition used by both the registry (which builds the chosen one) and `config show` (which
lists them). A table named like a shipped provider changes only the keys it sets, so
`[providers.openai] model = "gpt-5-mini"` keeps the kind and endpoint. Header values are
credentials in practice (gateway tokens), so the shown form replaces them with `[REDACTED]`; API
keys are never in the config at all, only the name of the variable holding one.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from vtcode.config.model import VtcodeConfig
from vtcode.config.provider_model import BUILTIN_PROVIDERS, ProviderConfig
from vtcode.jsontypes import encode

__all__ = ["REDACTED", "effective_providers", "overlay", "shown_providers"]

REDACTED = "[REDACTED]"


def overlay(base: ProviderConfig, table: ProviderConfig) -> ProviderConfig:
    """`table`'s set keys over `base` (None and an empty header map mean 'not set')."""
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(ProviderConfig):
        value = getattr(table, f.name)
        if value is not None and value != {}:
            changes[f.name] = value
    if table.headers:
        changes["headers"] = {**base.headers, **table.headers}
    return dataclasses.replace(base, **changes)


def effective_providers(config: VtcodeConfig) -> dict[str, ProviderConfig]:
    """Every provider name the config offers, shipped ones first."""
    out = dict(BUILTIN_PROVIDERS)
    for name, table in config.providers.items():
        base = out.get(name)
        out[name] = table if base is None else overlay(base, table)
    return out


def shown_providers(config: VtcodeConfig) -> dict[str, Any]:
    """The `providers` table of `config show`: all of them, header values redacted."""
    shown: dict[str, Any] = {}
    for name, provider in effective_providers(config).items():
        entry = encode(provider)
        assert isinstance(entry, dict)
        if provider.headers:
            entry["headers"] = dict.fromkeys(provider.headers, REDACTED)
        shown[name] = entry
    return shown
