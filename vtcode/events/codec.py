"""Encode and decode ThreadEvents as raw lines and as canonical envelope lines.

Raw line (`exec --json`, `--events`): `{"type":"turn.started"}`.
Canonical line (`events.jsonl`): `{"schema_version":"0.11.0","event":{...},"seq":1,"ts":"..."}`;
`seq` and `ts` are our additions, which upstream readers ignore as unknown keys.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson

from vtcode import EVENT_SCHEMA_VERSION
from vtcode.events.types import THREAD_EVENT, ThreadEvent, UnknownEvent
from vtcode.jsontypes import DecodeError, EncodeError, decode_union, encode
from vtcode.lineshape import LineShape

__all__ = [
    "DecodeError",
    "EncodeError",
    "Envelope",
    "LineShape",
    "decode_envelope",
    "decode_event",
    "dumps",
    "encode_event",
    "encode_raw_line",
    "encode_wrapped_line",
    "line_shape",
    "loads",
]


def dumps(obj: Any) -> bytes:
    """Compact JSON bytes, like serde_json (UTF-8, no spaces)."""
    try:
        return orjson.dumps(obj)
    except TypeError as e:  # orjson raises TypeError for big ints, odd types, non-str keys
        raise EncodeError(str(e)) from e


def loads(data: bytes | str) -> Any:
    """Parse JSON strictly (no NaN/Infinity, no lone surrogates)."""
    return orjson.loads(data)


def encode_event(event: ThreadEvent) -> dict[str, Any]:
    """The JSON object of an event, field for field as upstream serializes it."""
    if isinstance(event, UnknownEvent):
        return dict(event.raw) if event.raw else {"type": event.type}
    out: dict[str, Any] = encode(event)
    return out


def encode_raw_line(event: ThreadEvent) -> bytes:
    """One raw ThreadEvent line, newline-terminated."""
    return dumps(encode_event(event)) + b"\n"


def encode_wrapped_line(
    event: ThreadEvent, *, seq: int | None = None, ts: str | None = None
) -> bytes:
    """One canonical envelope line, newline-terminated."""
    env: dict[str, Any] = {"schema_version": EVENT_SCHEMA_VERSION, "event": encode_event(event)}
    if seq is not None:
        env["seq"] = seq
    if ts is not None:
        env["ts"] = ts
    return dumps(env) + b"\n"


def decode_event(obj: Any, pointer: str = "") -> ThreadEvent:
    """Decode one event object; unknown types become `UnknownEvent` (kept whole)."""
    event: ThreadEvent = decode_union(THREAD_EVENT, obj, pointer)
    return event


@dataclasses.dataclass(frozen=True, slots=True)
class Envelope:
    """A decoded log line: the event plus the envelope fields when the line was wrapped."""

    event: ThreadEvent
    shape: LineShape
    schema_version: str | None = None
    seq: int | None = None
    ts: str | None = None


def line_shape(obj: Any) -> LineShape | None:
    """Tell a wrapped line from a raw one (None when it is neither)."""
    if not isinstance(obj, dict):
        return None
    if "event" in obj and "schema_version" in obj:
        return LineShape.WRAPPED
    if "type" in obj:
        return LineShape.RAW
    return None


def decode_envelope(obj: Any, shape: LineShape | None = None) -> Envelope:
    """Decode a parsed line of either shape (auto-detected when `shape` is None)."""
    shape = shape or line_shape(obj)
    if shape is None:
        raise DecodeError(
            "", "neither a ThreadEvent (`type`) nor an envelope (`schema_version`, `event`)"
        )
    if shape is LineShape.RAW:
        return Envelope(event=decode_event(obj), shape=shape)
    if not isinstance(obj, dict):
        raise DecodeError("", "expected an object")
    sv = obj.get("schema_version")
    if not isinstance(sv, str):
        raise DecodeError("/schema_version", "missing or non-string schema_version")
    seq = obj.get("seq")
    ts = obj.get("ts")
    return Envelope(
        event=decode_event(obj.get("event"), "/event"),
        shape=shape,
        schema_version=sv,
        seq=seq if isinstance(seq, int) and not isinstance(seq, bool) else None,
        ts=ts if isinstance(ts, str) else None,
    )
