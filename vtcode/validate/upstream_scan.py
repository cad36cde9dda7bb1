"""`--profile upstream`: each line gets upstream's reader verdict and nothing else.

No envelope rules (`seq`, `ts` and `schema_version`'s value are unknown or free to
`VersionedThreadEvent`), no lifecycle, no stricter-than-upstream checks: a line is an error
exactly when `serde_json::from_str` into upstream's types fails on it, blank lines included.
A line the typed screen proves valid is valid to upstream too (the screen is stricter on every
rule), so only the others pay for the serde model in `upstream.py`.
"""

from __future__ import annotations

from collections.abc import Callable

import orjson

from vtcode.lineshape import LineShape
from vtcode.validate.lines import LAST_UNTERMINATED, OK, TOO_LONG, LineReader
from vtcode.validate.profile import ReplayReader
from vtcode.validate.report import ProblemCode, RuleGroup, Severity
from vtcode.validate.scan import ScanState
from vtcode.validate.screen import screen_for
from vtcode.validate.syntax import explain_syntax
from vtcode.validate.upstream import Rejected, upstream_for

__all__ = ["scan_upstream"]

_PROGRESS_MASK = (1 << 14) - 1
_SHAPE = RuleGroup.SHAPE


def _event_type(obj: object, wrapped: bool) -> str | None:
    ev = obj.get("event") if wrapped and type(obj) is dict else obj
    tag = ev.get("type") if type(ev) is dict else None
    return tag if type(tag) is str else None


def scan_upstream(
    state: ScanState,
    reader: LineReader | ReplayReader,
    progress: Callable[[int], None] | None = None,
) -> None:
    """Validate every line `reader` yields with upstream's reader verdict only."""
    from vtcode.validate.schemacheck import detect_shape

    opts = state.opts
    add = state.problems.add
    shape = state.shape
    screen = screen_for(shape) if shape is not None else None
    model = upstream_for(shape) if shape is not None else None
    counts = state.counts
    number = state.lines
    torn = Severity.WARNING if opts.partial else Severity.ERROR
    try:
        for first, run, kind in reader.runs():
            number = first - 1
            for data in run:
                number += 1
                if kind == TOO_LONG:
                    add(
                        number,
                        "",
                        ProblemCode.LINE_TOO_LONG,
                        Severity.ERROR,
                        f"line of {reader.long_line_size} bytes is over the "
                        f"{opts.max_line_bytes}-byte cap (skipped)",
                    )
                    continue
                if screen is not None and kind == OK:
                    proven = screen(data)
                    if proven is not None:
                        state.events += 1
                        ev = proven.event if screen.wrapped else proven
                        counts[screen.variants[type(ev)].tag] += 1
                        continue
                try:
                    obj = orjson.loads(data)
                except orjson.JSONDecodeError as err:
                    if kind == LAST_UNTERMINATED and data.strip():
                        add(
                            number,
                            "",
                            ProblemCode.TORN_LINE,
                            torn,
                            f"torn final line: {len(data)} bytes, no newline, not parsable "
                            "(a write was cut off)",
                        )
                        continue
                    syn = explain_syntax(data, err)  # a blank line too: "EOF while parsing"
                    add(number, "", syn.code, Severity.ERROR, syn.message, None, syn.column, _SHAPE)
                    continue
                if model is None:
                    shape = state.shape = detect_shape(obj) if type(obj) is dict else LineShape.RAW
                    screen, model = screen_for(shape), upstream_for(shape)
                if type(obj) is dict:
                    state.events += 1
                try:
                    model.check(data, obj)
                except Rejected as r:
                    add(number, r.where, ProblemCode.UPSTREAM_REJECTS, Severity.ERROR, r.message)
                    continue
                except (ValueError, RecursionError) as e:  # only a stack limit differs from orjson
                    add(number, "", ProblemCode.UPSTREAM_REJECTS, Severity.ERROR, str(e))
                    continue
                etype = _event_type(obj, model.wrapped)
                if etype is not None and etype in counts:
                    counts[etype] += 1
                else:
                    state.unknown_types += 1
                if not number & _PROGRESS_MASK and progress is not None:
                    progress(reader.bytes_read)
    finally:
        state.lines = number
        state.bytes += reader.bytes_read
