"""The numeric range of a vtcode.toml key, shared by `config check` and the CLI options.

`--max-budget-usd -1` was refused while `agent.harness.max_budget_usd = -1` passed `config
check` and the run then spent money against a cap of $-1: two definitions of one range had
drifted. There is now one: the key's `IntRange`/`FloatRange` in `vtcode.config.model`, which the
generated `vtcode-toml` schema carries (so `config check` and the loader enforce it) and which
this module reads back from that schema (`keys.find`) for a CLI option that sets the same value
(`vtcode.cli.ranges` turns it into the option's click type). A bounded float must be finite.
"""

from __future__ import annotations

import dataclasses
import math

from vtcode.config import keys
from vtcode.config.tomlscan import parse_key

__all__ = ["KeyRange", "key_range"]


@dataclasses.dataclass(frozen=True, slots=True)
class KeyRange:
    """Inclusive bounds of one numeric key (None: unbounded on that side)."""

    key: str
    integer: bool
    minimum: float | None
    maximum: float | None

    def problem(self, value: float) -> str | None:
        """Why `value` is out of range (a phrase after the value), or None when it fits."""
        if not math.isfinite(value):
            return "is not a finite number"
        if self.minimum is not None and value < self.minimum:
            return f"is below the minimum {_show(self.minimum)}"
        if self.maximum is not None and value > self.maximum:
            return f"is above the maximum {_show(self.maximum)}"
        return None


def _show(bound: float) -> str:
    return str(int(bound)) if float(bound).is_integer() else f"{bound:g}"


def key_range(key: str) -> KeyRange:
    """The range of the numeric key `key` (a programming error if it is not one)."""
    spec = keys.find(parse_key(key))
    if spec is None or spec.kind != "scalar" or spec.json_type not in ("integer", "number"):
        raise KeyError(f"{key} is not a numeric vtcode.toml key")
    return KeyRange(
        key=key,
        integer=spec.json_type == "integer",
        minimum=spec.minimum,
        maximum=spec.maximum,
    )
