"""An incremental Server-Sent Events parser (the WHATWG event-stream rules) over raw bytes.

Both HTTP providers read their streams through it: bytes arrive in arbitrary chunks (a line, a
multi-byte character or a CRLF pair may be split between reads), lines end in LF, CRLF or CR,
`data:` lines of one event join with LF, `:` lines are comments (keep-alives), a blank line
dispatches. `[DONE]` is just data here; the OpenAI layer gives it meaning.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

__all__ = ["SSEEvent", "SSEParser", "iter_sse"]


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One dispatched event: `event` defaults to "message" as in browsers."""

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SSEParser:
    """Feed bytes, get complete events; `close()` flushes a final event lacking its blank line."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending: list[str] = []  # the start of a line whose end has not arrived
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._last_id: str | None = None
        self._retry: int | None = None
        self._started = False
        self._skip_lf = False  # a CR ended the previous chunk: a leading LF belongs to it
        self.comments = 0

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        text = self._decoder.decode(chunk)
        if not self._started and text:
            self._started = True
            if text.startswith("\ufeff"):
                text = text[1:]
        if self._skip_lf and text:
            self._skip_lf = False
            if text.startswith("\n"):
                text = text[1:]
        if not text:
            return []
        # Linear in the bytes fed: each terminator is searched for once (the next CR and LF
        # positions are kept), and a line split across chunks waits as pieces in `_pending`,
        # joined once when its end arrives (no re-concatenation or rescan per chunk).
        out: list[SSEEvent] = []
        start = 0
        n = len(text)
        cr = text.find("\r")
        lf = text.find("\n")
        while cr >= 0 or lf >= 0:
            if lf < 0 or (0 <= cr < lf):
                end = cr
                if cr + 1 < n:
                    nxt = cr + 2 if text[cr + 1] == "\n" else cr + 1
                else:
                    nxt = cr + 1
                    self._skip_lf = True
            else:
                end, nxt = lf, lf + 1
            line = text[start:end]
            if self._pending:
                self._pending.append(line)
                line = "".join(self._pending)
                self._pending = []
            self._line(line, out)
            start = nxt
            if 0 <= cr < start:
                cr = text.find("\r", start)
            if 0 <= lf < start:
                lf = text.find("\n", start)
        if start < n:
            self._pending.append(text[start:])
        return out

    def close(self) -> list[SSEEvent]:
        """End of stream: a torn last line is dropped; complete data lines still dispatch."""
        tail = self._decoder.decode(b"", final=True)
        self._pending = []
        del tail  # an unterminated line is torn: never half-parse it
        out: list[SSEEvent] = []
        self._dispatch(out)
        return out

    def _line(self, line: str, out: list[SSEEvent]) -> None:
        if not line:
            self._dispatch(out)
            return
        if line.startswith(":"):
            self.comments += 1
            return
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        elif name == "retry" and value.isdigit():
            self._retry = int(value)
        # any other field is ignored, as the standard says

    def _dispatch(self, out: list[SSEEvent]) -> None:
        if self._id is not None:
            self._last_id = self._id
        if self._data:
            out.append(
                SSEEvent(
                    data="\n".join(self._data),
                    event=self._event or "message",
                    id=self._last_id,
                    retry=self._retry,
                )
            )
        self._data = []
        self._event = ""
        self._id = None
        self._retry = None


def iter_sse(chunks: Iterable[bytes]) -> Iterator[SSEEvent]:
    """Events of a whole byte stream (e.g. `httpx.Response.iter_raw()`)."""
    parser = SSEParser()
    for chunk in chunks:
        yield from parser.feed(chunk)
    yield from parser.close()
