"""The typed screen never accepts a line the exact checker would flag.

`screen.py` accepts a line only when it is proven valid (typed decode + re-encoded length); every
other line goes to the exact path. So the one property that matters: accepted => the exact path
(writer schema via jsonschema-rs, serde_json reader-parity rules) finds nothing. Checked on every
line of the fixture logs and on thousands of hostile variants of valid lines: repeated keys
hidden next to floats that re-encode longer, `-0`, exponents, escapes, whitespace, nulls,
unknown keys, out-of-range integers, impossible dates, deep nesting.
"""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest

from vtcode.events.codec import LineShape
from vtcode.validate.parity import parity_for
from vtcode.validate.schemacheck import checker_for
from vtcode.validate.screen import screen_for

REPO = Path(__file__).resolve().parents[2]
LOGS = sorted((REPO / "fixtures" / "logs").glob("*/*.jsonl"))


def _exact_ok(line: bytes, shape: LineShape) -> bool:
    """What the exact path concludes: valid under the writer schema and every parity rule."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    if type(obj) is not dict:
        return False
    ev = obj.get("event") if shape is LineShape.WRAPPED else obj
    etype = ev.get("type") if type(ev) is dict else None
    fast = checker_for(shape).fast_by_type.get(etype) if type(etype) is str else None
    try:
        valid = fast is not None and fast(obj)
    except ValueError:
        valid = False
    return valid and not parity_for(shape).findings(line, obj)


def _shape(line: bytes) -> LineShape:
    return LineShape.WRAPPED if line.startswith(b'{"schema_version"') else LineShape.RAW


def _corpus() -> list[bytes]:
    lines = [ln for path in LOGS for ln in path.read_bytes().split(b"\n") if ln.strip()]
    sys.path.insert(0, str(REPO / "bench"))
    from validate import _turn  # realistic turns from the real encoders

    from vtcode.events import encode_wrapped_line

    counter = iter(range(10**6))
    for t in range(3):
        for seq, ev in enumerate(_turn(t, lambda: f"item_{next(counter)}"), 1):
            lines.append(encode_wrapped_line(ev, seq=seq, ts="2026-12-04T06:00:00.000001+00:00"))
    return [ln.rstrip(b"\n") for ln in lines]


def test_every_fixture_line_accepted_by_the_screen_is_exactly_valid() -> None:
    accepted = 0
    for line in _corpus():
        shape = _shape(line)
        if screen_for(shape)(line) is not None:
            accepted += 1
            assert _exact_ok(line, shape), line
    assert accepted > 200  # most valid lines take the fast path


def _mutations(line: bytes, rng: random.Random) -> list[bytes]:
    out: list[bytes] = []
    # a repeated key, with a float that re-encodes longer in free-form arguments to hide it
    for key in (b'"type":', b'"id":', b'"text":', b'"seq":', b'"status":', b'"command":'):
        at = line.find(key)
        if at > 0:
            end = line.find(b",", at)
            if end > 0:
                out.append(line[:end] + b"," + line[at:end] + line[end:])
    out.append(line.replace(b'"arguments":{', b'"arguments":{"n":1e15,', 1))
    out.append(line.replace(b'"arguments":{', b'"arguments":{"n":1e15,"n":2,', 1))
    out.append(line.replace(b'"arguments":{', b'"arguments":{"n":-0,', 1))
    out.append(line.replace(b'"arguments":{', b'"arguments":{"n":123456789012345678901234,', 1))
    out.append(line.replace(b'"total_cost_usd":', b'"total_cost_usd":1e300,"total_cost_usd":', 1))
    out.append(line.replace(b'"total_cost_usd":', b'"total_cost_usd":0,"x":', 1))
    for num in (b"0", b"1", b"5", b"10", b"100", b"255"):
        for bad in (num + b".0", num + b"e0", b"-" + num, num + b"E+0", b"1" + num * 10):
            out.append(line.replace(b":" + num + b",", b":" + bad + b",", 1))
            out.append(line.replace(b":" + num + b"}", b":" + bad + b"}", 1))
    out.append(line.replace(b'":"', b'": "', 1))
    out.append(line.replace(b",", b" ,", 1))
    out.append(line + b" ")
    out.append(line.replace(b'"a', b'"\\u0061', 1))
    out.append(line.replace(b'"t', b'"\\t', 1))
    out.append(line.replace(b'"id":"', b'"id":null,"x":"', 1))
    out.append(line.replace(b'"text":"', b'"text":null,"q":"', 1))
    out.append(line.replace(b"}", b',"extra":1}', 1))
    out.append(line.replace(b"2026-12-04T", b"2026-02-30T", 1))
    out.append(line.replace(b"2026-12-04T", b"2025-02-29T", 1))
    out.append(line.replace(b"T06:00:00", b"T24:00:00", 1))
    out.append(line.replace(b"+00:00", b"", 1))
    # the envelope's ts is matched after the decode (no longer by msgspec): every way around it
    stamp = re.search(rb'"ts":"([^"]*)"', line)
    if stamp is not None:
        ts = stamp.group(1)
        for bad in (
            ts + b"\\n",  # an escaped final newline
            ts.replace(b"T", b"t"),
            ts.replace(b"+00:00", b"Z").replace(b"Z", b"z"),
            ts[:19] + b".0000000001Z",  # ten fraction digits
            ts[:19] + b".Z",
            ts[:19] + b"+24:00",
            ts[:19] + b"+0000",
            b"\\u0662" + ts[1:],  # an Arabic-Indic digit
            ts[:19] + b".\\u0663Z",
            ts[:10] + b" " + ts[11:],
        ):
            out.append(line.replace(stamp.group(0), b'"ts":"' + bad + b'"', 1))
        for bad in (b"17", b"null", b'["' + ts + b'"]'):
            out.append(line.replace(stamp.group(0), b'"ts":' + bad, 1))
    out.append(
        line.replace(b'"arguments":{', b'"arguments":{"d":' + b"[" * 130 + b"]" * 130 + b",", 1)
    )
    out.append(
        line.replace(b'"arguments":{', b'"arguments":{"d":' + b"[" * 126 + b"]" * 126 + b",", 1)
    )
    # random byte-level damage
    for _ in range(4):
        i = rng.randrange(len(line))
        out.append(line[:i] + bytes([rng.randrange(256)]) + line[i + 1 :])
        out.append(line[:i] + line[i + 1 :])
        j = rng.randrange(len(line))
        out.append(line[:i] + line[j : j + 8] + line[i:])
    return [m for m in out if m != line]


def test_no_hostile_variant_of_a_valid_line_passes_the_screen_wrongly() -> None:
    rng = random.Random(14)
    checked = rejected = 0
    for line in _corpus():
        shape = _shape(line)
        screen = screen_for(shape)
        for variant in _mutations(line, rng):
            checked += 1
            if screen(variant) is None:
                rejected += 1
                continue
            assert _exact_ok(variant, shape), variant
    assert checked > 5000 and rejected > checked // 2


@pytest.mark.parametrize("plane", range(0, 0x110000, 0x10000))
def test_the_encoder_writes_every_character_in_its_shortest_json_form(plane: int) -> None:
    """The length proof needs it: no input token can be shorter than msgspec's encoding."""
    encode = msgspec.json.encode
    for cp in range(plane, plane + 0x10000):
        if 0xD800 <= cp <= 0xDFFF:
            continue  # not encodable text (lone surrogates are refused on both sides)
        ch = chr(cp)
        if ch in '"\\\\':
            shortest = 2
        elif cp < 0x20:
            shortest = 2 if ch in "\b\f\n\r\t" else 6
        else:
            shortest = len(ch.encode())
        assert len(encode(ch)) - 2 == shortest, hex(cp)


@pytest.mark.parametrize(
    "ts",
    ["2026-12-04T06:00:00Z", "2026-12-04T06:00:00.5+05:30", "2024-12-31T23:59:59.123456789-00:00"],
)
def test_the_screen_still_proves_a_line_with_any_rfc3339_ts(ts: str) -> None:
    """The ts check moved out of msgspec (issue 27): valid stamps keep the fast path."""
    line = _corpus()[-1]
    stamp = re.search(rb'"ts":"([^"]*)"', line)
    assert stamp is not None
    moved = line.replace(stamp.group(1), ts.encode())
    assert screen_for(LineShape.WRAPPED)(moved) is not None
    assert _exact_ok(moved, LineShape.WRAPPED)


def test_a_float_in_free_form_and_a_number_field_are_never_reencoded() -> None:
    screen = screen_for(LineShape.RAW)
    base: dict[str, Any] = {
        "type": "item.completed",
        "item": {"id": "a", "type": "tool_invocation", "tool_name": "t", "status": "completed"},
    }
    ok = orjson.dumps(base)
    assert screen(ok) is not None
    with_float = orjson.dumps({**base, "item": {**base["item"], "arguments": {"x": 1.5}}})
    assert screen(with_float) is not None  # proven by its keys, not its length (issue 27)
    assert _exact_ok(with_float, LineShape.RAW)
    repeated = with_float.replace(b'{"x":1.5}', b'{"x":1.5,"x":1e15}')
    assert screen(repeated) is None  # the dropped pair is seen, however the float re-encodes


def _padded(line: bytes) -> bytes:
    """`line` with spaces after its first comma so its length equals the re-encoded length."""
    decoded = msgspec.json.decode(line)
    pad = len(msgspec.json.encode(decoded)) - len(line)
    assert pad > 0, "the construction needs an output longer than the input"
    return line.replace(b",", b"," + b" " * pad, 1)


def test_a_repeated_key_hidden_by_a_longer_reencoding_is_still_refused() -> None:
    """Whitespace pays for the dropped pair only if something re-encodes longer; nothing may."""
    screen = screen_for(LineShape.RAW)
    head = b'{"type":"item.completed","item":{"id":"a","type":"tool_invocation","tool_name":"t",'
    # the kept value 1e15 re-encodes as 1000000000000000.0 (longer than the dropped `0,"n":`)
    hidden = head + b'"status":"completed","arguments":{"n":0,"n":1e15}}}'
    assert screen(_padded(hidden)) is None
    assert not _exact_ok(_padded(hidden), LineShape.RAW)
    done = (
        b'{"type":"thread.completed","thread_id":"t","session_id":"s","subtype":"success",'
        b'"outcome_code":"success","usage":{"input_tokens":1,"cached_input_tokens":0,'
        b'"cache_creation_tokens":0,"output_tokens":1},"num_turns":1,'
    )
    # an integer-written cost would re-encode as 7.0 if the field were decoded as a float
    costly = done + b'"result":"x","result":"y","total_cost_usd":7}'
    assert screen(costly.replace(b",", b", ", 1)) is None
    assert screen(costly) is None


def test_the_screen_knows_the_event_types_the_event_dataclasses_define() -> None:
    from vtcode.events.types import EVENT_TYPES as DEFINED
    from vtcode.validate.screen import EVENT_TYPES

    assert sorted(EVENT_TYPES) == sorted(DEFINED)


_SPACED_HEAD = (
    b'{"type": "item.completed", "item": {"id": "a", "type": "tool_invocation", '
    b'"tool_name": "t", "status": "completed", "arguments": '
)
_CMD = (
    b'{"type": "item.completed", "item": {"id": "c", "type": "command_execution", "command": "x", '
)


@pytest.mark.parametrize(
    ("line", "proven"),
    [
        (_SPACED_HEAD + b'{"a": 1}}}', True),
        (_SPACED_HEAD + b'{"a": 1.5, "b": "\\u00e9"}}}', True),
        (_SPACED_HEAD + b'{"a" : 1, "a": 2}}}', False),  # a repeated key, spaced
        (_SPACED_HEAD + b'{"a":1,"a" :2}}}', False),  # compact but for one space
        (_SPACED_HEAD + b'{"a": 1.5, "a": 2.5}}}', False),  # with floats
        (_SPACED_HEAD + b'{"a": "x\\u003a", "a": 1}}}', False),  # an escaped colon hides one
        (_SPACED_HEAD + b'{"k\\u003a": 1, "k:": 2}}}', False),  # two spellings of one key
        (_SPACED_HEAD + b'{"a": "b\\":", "a": 1}}}', False),  # a quote-colon inside a string
        (_CMD + b'"aggregated_output": "", "exit_code": -0, "status": "completed"}}', False),
        (_CMD + b'"aggregated_output": "", "exit_code": -0 , "status": "completed"}}', False),
        (
            _CMD + b'"arguments": {"t": 1e-5}, "aggregated_output": "", "exit_code": -0, '
            b'"status": "completed"}}',
            False,  # a float's re-encoding could pay for the `-0` the encoding drops
        ),
        (_CMD + b'"aggregated_output": "-0", "exit_code": 0, "status": "completed"}}', True),
        (_SPACED_HEAD + b'{"n": 1e400}}}', False),  # serde_json: number out of range
        (_SPACED_HEAD + b'[[1, 2], {"x": 123456789012345678901234}]}}', False),
    ],
)
def test_the_key_count_proof_never_proves_a_line_the_exact_path_refuses(
    line: bytes, proven: bool
) -> None:
    """Issue 27: spaced, escaped and float-bearing lines are proven by counting keys; every
    way to hide a repeated key or a bare `-0` from the count goes to the exact path."""
    screen = screen_for(LineShape.RAW)
    assert (screen(line) is not None) is proven
    if proven:
        assert _exact_ok(line, LineShape.RAW)
