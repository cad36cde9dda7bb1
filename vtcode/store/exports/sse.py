"""The SSE framing of the Open Responses file: `event: <type>` / `data: <json>` / blank line,
every event numbered by the stream's `sequence_number`, ending with `data: [DONE]` exactly once.

Its own module because the live exporter and the on-demand export (`sessions export`) write the
same framing from the same builder.
"""

from __future__ import annotations

from typing import IO, Any

from vtcode.events.codec import dumps

__all__ = ["DONE", "SseWriter"]

DONE = b"data: [DONE]\n\n"


class SseWriter:
    """Numbers stream events and writes them as SSE, ending with `data: [DONE]` once."""

    def __init__(self, out: IO[bytes]) -> None:
        self._out = out
        self.sequence_number = 0
        self.done = False

    def write(self, events: list[dict[str, Any]]) -> None:
        for ev in events:
            ev["sequence_number"] = self.sequence_number
            self.sequence_number += 1
            self._out.write(b"event: " + ev["type"].encode() + b"\ndata: " + dumps(ev) + b"\n\n")

    def finish(self) -> None:
        if not self.done:
            self.done = True
            self._out.write(DONE)
