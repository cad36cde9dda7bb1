"""Order-keeping list merges shared by the envelope (context) and the steering queue.

A core utility so that neither package reaches into the other for it.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["merge_latest"]


def merge_latest(old: Sequence[str], new: Sequence[str], limit: int) -> list[str]:
    """old then new, deduplicated keeping each value's latest position, newest `limit` kept."""
    seen: dict[str, None] = {}
    for v in (*old, *new):
        seen.pop(v, None)
        seen[v] = None
    out = list(seen)
    return out[-limit:] if limit else out
