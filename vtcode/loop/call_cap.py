"""How many tool calls of one model response are recorded, and how many are only counted.

`agent.harness.max_tool_calls_per_turn` (default 120) limits the calls a turn runs. A response may
ask for far more (one asked for 200,000): recording each one as started, completed and refused
took 58 s, 273 MB and a 170 MB log, until the drain queue overflowed and the run ended as a
persistence failure. So the runner asks `CallCap` before it opens a call's item: the first `limit`
calls of a response are streamed, recorded and answered as usual; every call after them is
counted and its deltas are skipped (no item, no arguments kept). After the response, one `error`
item says how many were dropped (`dropped_message`). With no per-turn cap (0), `HARD_LIMIT`
still applies, so memory and log size are bounded whatever a response holds.

Counting is in constant memory: a call is new when its stream index is above every index seen so
far (servers number calls 0, 1, 2, ...); a server that reorders indexes is counted at least once
per new highest index.
"""

from __future__ import annotations

__all__ = ["HARD_LIMIT", "CallCap"]

HARD_LIMIT = 1024  # calls recorded per response when the per-turn cap is off (0)


class CallCap:
    """Admission of one response's tool calls, by stream index."""

    __slots__ = ("_top", "dropped", "limit", "recorded")

    def __init__(self, per_turn: int) -> None:
        self.limit = per_turn if 0 < per_turn < HARD_LIMIT else HARD_LIMIT
        self.recorded = 0
        self.dropped = 0
        self._top = -1  # the highest stream index seen

    def admits(self, index: int) -> bool:
        """Whether a call first seen at `index` is recorded (else it is counted and skipped).
        Ask only for an index that has no open call yet."""
        new = index > self._top
        self._top = max(self._top, index)
        if self.recorded < self.limit:
            self.recorded += 1
            return True
        if new:
            self.dropped += 1
        return False

    def dropped_message(self) -> str | None:
        """The one error item's text, or None when nothing was dropped."""
        if not self.dropped:
            return None
        were = "was" if self.dropped == 1 else "were"
        return (
            f"the response asked for {self.recorded + self.dropped} tool calls; the first "
            f"{self.recorded} are handled and {self.dropped} {were} dropped without running "
            f"(tool call limit per response: {self.limit})"
        )
