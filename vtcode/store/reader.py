"""Read-only access to session logs: the events, for resume, show and exports (summaries for
`sessions list`: store/listing.py).

Readers never take the lock and never repair: they work on read-only mounts and cannot race a
writer. A torn final line (a live writer mid-write, or a crash) is skipped; an invalid line
followed by a valid one raises `CorruptLogError` with file:line.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vtcode.config.model import StoreConfig
from vtcode.errors import CorruptLogError
from vtcode.events.codec import Envelope, LineShape, decode_envelope
from vtcode.events.types import UnknownEvent
from vtcode.jsontypes import DecodeError
from vtcode.ownfile import open_own
from vtcode.store.layout import session_events_path
from vtcode.store.logstate import LINE_SLACK, BadLine, parse_line

DEFAULT_MAX_LINE = StoreConfig().max_event_bytes + LINE_SLACK


@dataclasses.dataclass(frozen=True, slots=True)
class LogLine:
    """One valid line of a canonical log with where it sits."""

    line_no: int
    offset: int
    raw: bytes  # without the newline
    envelope: Envelope


def _to_envelope(obj: Any, seq: int) -> Envelope:
    try:
        env = decode_envelope(obj, LineShape.WRAPPED)
    except (DecodeError, RecursionError):
        # Structurally a line, but an event this version cannot decode (a newer item type, say):
        # keep it whole, as upstream's `Unknown` catch-all would (but without losing the value).
        event = obj["event"]
        env = Envelope(
            event=UnknownEvent(type=event["type"], raw=event),
            shape=LineShape.WRAPPED,
            schema_version=obj["schema_version"],
            seq=seq,
            ts=obj.get("ts") if isinstance(obj.get("ts"), str) else None,
        )
    if env.seq is None:
        env = dataclasses.replace(env, seq=seq)
    return env


def iter_log(path: Path, max_line: int = DEFAULT_MAX_LINE) -> Iterator[LogLine]:
    """The valid lines of a canonical log file, in order (see the module doc for errors)."""
    fd = open_own(path)
    with os.fdopen(fd, "rb") as f:
        offset = 0
        line_no = 0
        expected: int | None = None
        bad: tuple[int, str] | None = None
        while True:
            raw = f.readline(max_line + 2)
            if not raw:
                return
            start = offset
            offset += len(raw)
            if not raw.endswith(b"\n"):
                if len(raw) < max_line + 2:
                    return  # torn final fragment (or a writer mid-line): not an event yet
                rest = f.readline(1 << 20)  # an over-long line: skip to its end, 1 MiB at a time
                while rest and not rest.endswith(b"\n"):
                    offset += len(rest)
                    rest = f.readline(1 << 20)
                offset += len(rest)
                line_no += 1
                bad = bad or (line_no, f"line is longer than {max_line} bytes")
                continue
            line_no += 1
            body = raw[:-1]
            try:
                info, obj = parse_line(body, expected if bad is None else None, max_line)
            except BadLine as e:
                bad = bad or (line_no, str(e))
                continue
            if bad is not None:
                raise CorruptLogError(
                    f"invalid line ({bad[1]}) followed by a valid line {line_no}",
                    location=f"{path}:{bad[0]}:1",
                    hint="`vtcode sessions repair ID` backs the file up, then drops the bad lines",
                )
            expected = info.seq + 1
            yield LogLine(line_no, start, body, _to_envelope(obj, info.seq))


def read_session_events(workspace: Path, session_id: str) -> Iterator[Envelope]:
    """Every event of a session in order, with its `seq` and `ts` (for resume and show)."""
    path = session_events_path(workspace, session_id)
    if not path.exists():
        return iter(())
    return (line.envelope for line in iter_log(path))
