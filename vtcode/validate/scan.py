"""The validator's hot loop: one pass over the lines of one byte range, into a `ScanState`.

Each line first meets the typed screen (`screen.py`); a line it proves valid only needs the seq
and lifecycle rules. Any other line takes the exact path: orjson, the per-variant jsonschema-rs
check, the reader-parity rules, and a worded finding for every problem. Both paths feed the same
`Lifecycle` with the same facts, so the verdict on a line never depends on the path it took.

The state is a plain object so that a scan can start mid-file (`split.py` runs the second half
of a large file in another process): `seq_known` False means the seq before this range is not
known yet, and the first seq seen is recorded in `first_seq` instead of being checked.
"""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from msgspec import UNSET

from vtcode.lineshape import LineShape
from vtcode.validate.lifecycle import Lifecycle
from vtcode.validate.lines import LAST_UNTERMINATED, OK, TOO_LONG, LineReader
from vtcode.validate.profile import ReplayReader, resolve_in_stream
from vtcode.validate.report import (
    Problem,
    ProblemCode,
    Profile,
    RuleGroup,
    Severity,
    ValidateOptions,
)
from vtcode.validate.screen import EVENT_TYPES, screen_for
from vtcode.validate.syntax import explain_syntax

__all__ = ["Problems", "ScanState", "new_lifecycle", "scan", "seq_gap"]

Progress = Callable[[int], None]
_PROGRESS_MASK = (1 << 14) - 1
_MAX_MESSAGE = 400  # a hostile log must not blow up the report (or the terminal)
_MAX_VALUE = 160


_READING = frozenset(
    {
        ProblemCode.UNREADABLE,
        ProblemCode.EMPTY_LOG,
        ProblemCode.LINE_TOO_LONG,
        ProblemCode.TORN_LINE,
        ProblemCode.MISSING_NEWLINE,
    }
)
_ENVELOPE = frozenset({ProblemCode.SCHEMA_VERSION, ProblemCode.SEQ_GAP})
_TOLERATED = frozenset(  # what upstream's reader reads without a word: vtcode's stricter rules
    {
        ProblemCode.EXTRA_FIELD,
        ProblemCode.UNKNOWN_EVENT_TYPE,
        ProblemCode.UNKNOWN_ENUM_VALUE,
    }
)
_LIFECYCLE = frozenset(
    c for c in ProblemCode if c.value.startswith(("not-started", "duplicate-thread", "after-"))
) | frozenset(
    {
        ProblemCode.MISSING_THREAD_COMPLETED,
        ProblemCode.THREAD_ID_MISMATCH,
        ProblemCode.NESTED_TURN,
        ProblemCode.TURN_NOT_STARTED,
        ProblemCode.UNCLOSED_TURN,
        ProblemCode.ITEM_NOT_STARTED,
        ProblemCode.DUPLICATE_ITEM_STARTED,
        ProblemCode.ITEM_AFTER_COMPLETED,
        ProblemCode.ITEM_TYPE_CHANGED,
        ProblemCode.ITEM_NOT_COMPLETED,
        ProblemCode.UNKNOWN_CALL_ID,
    }
)


def rule_of(code: ProblemCode, ptr: str) -> RuleGroup:
    """The rule group of a finding, by its code (and for the envelope's fields, its pointer).

    A `shape` finding on a line upstream's reader accepts is relabelled `strict` by `_exact`."""
    if code in _LIFECYCLE:
        return RuleGroup.LIFECYCLE
    if code in _READING:
        return RuleGroup.READING
    if code in _ENVELOPE or (
        code is not ProblemCode.EXTRA_FIELD and ptr.startswith(("/seq", "/ts"))
    ):
        return RuleGroup.ENVELOPE
    if code in _TOLERATED:
        return RuleGroup.STRICT
    return RuleGroup.SHAPE


class Problems:
    """Collects problems up to the cap; counts every one (listed or suppressed) by severity."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.items: list[Problem] = []
        self.errors = 0
        self.warnings = 0
        self.suppressed = 0

    def add(
        self,
        line: int,
        ptr: str,
        code: ProblemCode,
        severity: Severity,
        message: str,
        value: Any = None,
        column: int | None = None,
        rule: RuleGroup | None = None,
    ) -> None:
        if severity is Severity.ERROR:
            self.errors += 1
        else:
            self.warnings += 1
        if len(self.items) < self.cap:
            if len(message) > _MAX_MESSAGE:
                message = message[: _MAX_MESSAGE - 1] + "…"
            if isinstance(value, str) and len(value) > _MAX_VALUE:
                value = value[: _MAX_VALUE - 1] + "…"
            self.items.append(
                Problem(
                    line=line,
                    column=column,
                    pointer=ptr,
                    code=code,
                    severity=severity,
                    message=message,
                    value=value,
                    rule=rule if rule is not None else rule_of(code, ptr),
                )
            )
        else:
            self.suppressed += 1


def seq_gap(add: Callable[..., None], line: int, seq: int, last_seq: int) -> None:
    add(
        line,
        "/seq",
        ProblemCode.SEQ_GAP,
        Severity.ERROR,
        f"seq {seq} where {last_seq + 1} was expected (1-based and gapless)",
        seq,
    )


def new_lifecycle(
    opts: ValidateOptions, problems: Problems, shape: LineShape, cls: type[Lifecycle] = Lifecycle
) -> Lifecycle | None:
    if not opts.lifecycle or opts.profile is Profile.UPSTREAM:
        return None
    pointer = "/event" if shape is LineShape.WRAPPED else ""
    return cls(problems.add, partial=opts.partial, event_pointer=pointer)


@dataclass
class ScanState:
    """Where a scan stands; handed from one byte range to the next."""

    opts: ValidateOptions
    problems: Problems
    shape: LineShape | None
    life: Lifecycle | None = None
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(EVENT_TYPES, 0))
    unknown_types: int = 0
    events: int = 0
    last_seq: float = 0  # NaN while the seq before this range is unknown
    # (line, seq, problems found before it) of the first seq, when the seq before was unknown
    first_seq: tuple[int, int, int] | None = None
    lines: int = 0
    bytes: int = 0


def _explain(state: ScanState, obj: dict[str, Any], line: int) -> None:
    """The slow path, for a line that failed the fast check: say exactly what is wrong."""
    from vtcode.validate.schemacheck import checker_for, version_finding

    assert state.shape is not None
    checker = checker_for(state.shape)
    strict = state.opts.strict
    soft = Severity.ERROR if strict else Severity.WARNING
    findings = checker.explain(obj, strict=strict)
    if checker.shape is LineShape.WRAPPED:
        vf = version_finding(obj.get("schema_version"), strict=strict)
        if vf is not None:
            findings.append(vf)
    for f in findings:
        severity = soft if f.reader_ok else Severity.ERROR
        state.problems.add(line, f.pointer, f.code, severity, f.message, f.value)


def _exact(state: ScanState, data: bytes, obj: dict[str, Any], ev: Any, line: int) -> None:
    """The exact path for a parsed object line: schema, reader parity, counts, lifecycle."""
    from vtcode.validate.parity import parity_for
    from vtcode.validate.schemacheck import checker_for

    assert state.shape is not None
    first = len(state.problems.items)
    if type(ev) is not dict:
        ev = None
    tag = ev.get("type") if ev is not None else None
    etype = tag if type(tag) is str else None
    fast = checker_for(state.shape).fast_by_type.get(etype) if etype is not None else None
    try:
        ok = fast is not None and fast(obj)
    except ValueError:  # jsonschema-rs refuses very deep values
        ok = False
    if not ok:
        _explain(state, obj, line)
    parity = parity_for(state.shape)
    if not ok or parity.suspect(data, obj, ev, etype):
        # serde_json's rules hold in every mode: a reader refuses the line
        for f in parity.findings(data, obj):
            state.problems.add(line, f.pointer, f.code, Severity.ERROR, f.message, f.value)
    _label_strict(state, data, first)
    if etype is not None:
        if etype in state.counts:
            state.counts[etype] += 1
        else:
            state.unknown_types += 1
        if state.life is not None and ev is not None:
            state.life.feed_event(line, etype, ev)


def _label_strict(state: ScanState, data: bytes, first: int) -> None:
    """Findings on a line upstream's reader accepts are vtcode's stricter rules, not its shape."""
    from vtcode.validate.upstream import upstream_for

    items = state.problems.items
    if len(items) == first or not any(p.rule is RuleGroup.SHAPE for p in items[first:]):
        return
    assert state.shape is not None
    if not upstream_for(state.shape).accepts(data):
        return
    for i in range(first, len(items)):
        if items[i].rule is RuleGroup.SHAPE:
            items[i] = dataclasses.replace(items[i], rule=RuleGroup.STRICT)


def scan(
    state: ScanState, reader: LineReader | ReplayReader, progress: Progress | None = None
) -> None:
    """Validate every line `reader` yields, updating `state` (also when a read fails)."""
    from vtcode.validate.schemacheck import detect_shape, json_type  # no heavy import

    if state.opts.profile is Profile.AUTO:
        assert isinstance(reader, LineReader)
        state.opts, reader = resolve_in_stream(state.opts, reader)
        if state.opts.profile is Profile.UPSTREAM:
            state.life = None
    opts = state.opts
    if opts.profile is Profile.UPSTREAM:
        from vtcode.validate.upstream_scan import scan_upstream

        scan_upstream(state, reader, progress)
        return
    problems = state.problems
    add = problems.add
    soft = Severity.ERROR if opts.strict else Severity.WARNING  # what readers tolerate
    partial_sev = Severity.WARNING if opts.partial else Severity.ERROR
    shape = state.shape
    screen = screen_for(shape) if shape is not None else None
    variants = screen.variants if screen is not None else {}
    items = screen.items if screen is not None else {}
    wrapped = shape is LineShape.WRAPPED
    life = state.life
    counts = state.counts
    events = state.events
    last_seq = state.last_seq
    first_seq = state.first_seq
    number = state.lines
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    unset = UNSET
    etype: str
    seq: int | None
    gc_was_on = gc.isenabled()
    gc.disable()  # nothing here makes cycles; the collector cost 10% of the scan
    try:
        for first, run, kind in reader.runs():
            number = first - 1
            for data in run:
                number += 1
                if screen is None:
                    # `--format auto`: learn the shape from the first object line, so that this
                    # line too can take the fast path (a log's first line never needs the slow one)
                    try:
                        head = loads(data)
                    except decode_error:
                        head = None
                    if type(head) is dict:
                        shape = state.shape = detect_shape(head)
                        screen = screen_for(shape)
                        variants, items = screen.variants, screen.items
                        wrapped = shape is LineShape.WRAPPED
                        life = state.life = new_lifecycle(opts, problems, shape)
                # the fast path: a line the screen proves valid needs only seq and lifecycle
                proven = screen(data) if screen is not None and kind == OK else None
                if proven is not None:
                    obj = proven
                    if wrapped:
                        ev = obj.event
                        seq = obj.seq
                        if seq is unset:
                            seq = None
                    else:
                        ev, seq = obj, None
                else:
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
                    try:
                        obj = loads(data)
                    except decode_error as err:
                        if kind == LAST_UNTERMINATED and data.strip():
                            add(
                                number,
                                "",
                                ProblemCode.TORN_LINE,
                                partial_sev,
                                f"torn final line: {len(data)} bytes, no newline, not parsable "
                                "(a write was cut off)",
                            )
                            continue
                        syn = explain_syntax(data, err)
                        sev = soft if syn.code is ProblemCode.BLANK_LINE else Severity.ERROR
                        add(number, "", syn.code, sev, syn.message, None, syn.column)
                        continue
                    if kind == LAST_UNTERMINATED:
                        add(
                            number,
                            "",
                            ProblemCode.MISSING_NEWLINE,
                            Severity.WARNING,
                            "the final line has no newline (writers end every line with one)",
                        )
                    if type(obj) is not dict:
                        add(
                            number,
                            "",
                            ProblemCode.WRONG_TYPE,
                            Severity.ERROR,
                            f"a line must be a JSON object, not {json_type(obj)}",
                        )
                        continue
                    assert shape is not None  # learned from this very line above at the latest
                    if wrapped:
                        ev = obj.get("event")
                        seq = obj.get("seq")
                        if type(seq) is not int:
                            seq = None
                    else:
                        ev, seq = obj, None
                events += 1
                if seq is not None:
                    if seq != last_seq + 1:
                        if first_seq is None and last_seq != last_seq:  # NaN: unknown
                            first_seq = (number, seq, problems.errors + problems.warnings)
                            last_seq = seq
                        else:
                            seq_gap(add, number, seq, int(last_seq))
                            last_seq = max(last_seq + 1, seq)  # resync without cascading
                    else:
                        last_seq = seq
                if proven is not None:
                    variant = variants[type(ev)]
                    etype = variant.tag
                    counts[etype] += 1
                    if life is not None:
                        if variant.has_item:
                            item = ev.item
                            itype = items[type(item)].tag
                            call_id = item.call_id if itype == "tool_output" else None
                            life.item(number, etype, item.id, itype, call_id)
                        else:
                            tid = ev.thread_id if variant.has_thread_id else None
                            life.feed(number, etype, tid)
                else:
                    _exact(state, data, obj, ev, number)
                if not number & _PROGRESS_MASK:
                    gc.collect(0)  # only what this stretch allocated and kept
                    if progress is not None:
                        progress(reader.bytes_read)
    finally:
        if gc_was_on:
            gc.enable()
        state.events = events
        state.last_seq = last_seq
        state.first_seq = first_seq
        state.lines = number
        state.bytes += reader.bytes_read
