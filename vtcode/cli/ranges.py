"""Click types for options that set a vtcode.toml key: the key's range, never a second copy.

`--max-budget-usd` takes `agent.harness.max_budget_usd`'s range (`vtcode.config.ranges`), so
the flag and `config check` refuse the same values, and the message names the key. `--help`
shows the range as click's own range types do.
"""

from __future__ import annotations

import math
from typing import Any

import click

from vtcode.config.ranges import KeyRange, key_range

__all__ = ["FiniteFloatRange", "key_option_type"]


def key_option_type(key: str) -> click.ParamType[Any]:
    """The click type of an option that sets the numeric key `key` (checked as the key is)."""
    bounds = key_range(key)
    return _KeyInt(bounds) if bounds.integer else _KeyFloat(bounds)


def _check(
    kind: click.ParamType[Any],
    bounds: KeyRange,
    number: float,
    value: Any,
    param: click.Parameter | None,
    ctx: click.Context | None,
) -> None:
    problem = bounds.problem(number)
    if problem is not None:
        kind.fail(f"{value} {problem} (the range of {bounds.key} in vtcode.toml)", param, ctx)


class _KeyInt(click.IntRange):
    def __init__(self, bounds: KeyRange) -> None:
        lo = None if bounds.minimum is None else int(bounds.minimum)
        hi = None if bounds.maximum is None else int(bounds.maximum)
        super().__init__(min=lo, max=hi)
        self.bounds = bounds

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.INT.convert(value, param, ctx)
        _check(self, self.bounds, number, value, param, ctx)
        return number


class _KeyFloat(click.FloatRange):
    def __init__(self, bounds: KeyRange) -> None:
        super().__init__(min=bounds.minimum, max=bounds.maximum)
        self.bounds = bounds

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        _check(self, self.bounds, number, value, param, ctx)
        return number


class FiniteFloatRange(click.FloatRange):
    """`click.FloatRange` for an option that sets no config key, refusing nan and inf: click's
    own accepts "nan" (every comparison with it is false), and `loop run --max-cost nan` then
    died storing the loop's budget ("nan is not representable in JSON")."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value} is not a finite number", param, ctx)
        return super().convert(number, param, ctx)
