"""`vtcode sessions export ID --format raw|wrapped|atif|open-responses`: exports from the log.

The same builders as the live exporters, fed from `events.jsonl` with each line's own `ts`, so
an export made later equals (up to wall-clock fields) the one a live run would have written.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import IO

import orjson

from vtcode.clock import parse_rfc3339
from vtcode.events.codec import encode_raw_line
from vtcode.store.exports.atif import AtifBuilder
from vtcode.store.exports.open_responses import OpenResponsesBuilder
from vtcode.store.exports.sse import SseWriter
from vtcode.store.layout import session_events_path
from vtcode.store.reader import iter_log


class ExportFormat(enum.StrEnum):
    RAW = "raw"
    WRAPPED = "wrapped"
    ATIF = "atif"
    OPEN_RESPONSES = "open-responses"


def export_session(
    workspace: Path,
    session_id: str,
    fmt: ExportFormat,
    out: IO[bytes],
    *,
    model: str | None = None,
) -> int:
    """Write the export to `out`; returns the number of events read."""
    path = session_events_path(workspace, session_id)
    lines = iter_log(path) if path.exists() else iter(())
    n = 0
    if fmt is ExportFormat.RAW:
        for line in lines:
            out.write(encode_raw_line(line.envelope.event))
            n += 1
    elif fmt is ExportFormat.WRAPPED:
        for line in lines:
            out.write(line.raw + b"\n")
            n += 1
    elif fmt is ExportFormat.ATIF:
        atif = AtifBuilder(session_id, model)
        for line in lines:
            atif.process(line.envelope.event, line.envelope.ts)
            n += 1
        out.write(orjson.dumps(atif.build(), option=orjson.OPT_INDENT_2) + b"\n")
    else:
        clock = [0]

        def now() -> int:
            return clock[0]

        builder = OpenResponsesBuilder(session_id, model or "unknown", now=now)
        sse = SseWriter(out)
        for line in lines:
            moment = parse_rfc3339(line.envelope.ts) if line.envelope.ts else None
            if moment is not None:
                clock[0] = int(moment.timestamp())
            sse.write(builder.process(line.envelope.event))
            n += 1
        sse.finish()
    return n
