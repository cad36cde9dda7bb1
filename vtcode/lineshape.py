"""The two line shapes of a ThreadEvent log, on their own so the validator can name them cheaply.

`vtcode validate` must start fast; importing `vtcode.events` (every event dataclass) for this one
enum cost about a fifth of its start-up. `vtcode.events.codec` re-exports it.
"""

from __future__ import annotations

import enum

__all__ = ["LineShape"]


class LineShape(enum.StrEnum):
    """The two line shapes of a ThreadEvent log."""

    RAW = "raw"
    WRAPPED = "wrapped"
