"""The event dataclasses and the event schemas agree: same fields both ways, same verdicts.

Strategies are derived from the dataclasses themselves (not written by hand), so a new field or
event type is generated, encoded and validated without touching this file.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import typing
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vtcode.events import (
    LineShape,
    decode_envelope,
    encode_event,
    encode_raw_line,
    encode_wrapped_line,
)
from vtcode.events.types import ITEM_DETAILS, KNOWN_EVENT_CLASSES, THREAD_EVENT
from vtcode.jsontypes import IntRange, OpenEnum, TaggedUnion
from vtcode.schemas import fast_validator, load, reference_validator
from vtcode.validate.schemacheck import checker_for

REPO = Path(__file__).resolve().parents[2]
EVENT_SCHEMAS = [
    "thread-event",
    "thread-event-reader",
    "versioned-thread-event",
    "versioned-thread-event-reader",
]
UNIONS = {THREAD_EVENT.name, ITEM_DETAILS.name}

# ------------------------------------------------------------------ walking the definitions


def _strip(tp: Any) -> tuple[Any, tuple[Any, ...]]:
    meta: tuple[Any, ...] = ()
    while get_origin(tp) is typing.Annotated:
        args = get_args(tp)
        tp, meta = args[0], meta + tuple(args[1:])
    return tp, meta


def _optional(tp: Any) -> tuple[Any, bool]:
    args = get_args(tp)
    if get_origin(tp) in (typing.Union, __import__("types").UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        assert len(rest) == 1
        return rest[0], True
    return tp, False


def _hints(cls: type[Any]) -> dict[str, Any]:
    return typing.get_type_hints(cls, include_extras=True)


def json_fields(cls: type[Any]) -> set[str]:
    """Keys a dataclass puts on the wire (tag included, flattened part excluded)."""
    flatten = getattr(cls, "__flatten__", None)
    keys = {
        f.metadata.get("json_name", f.name) for f in dataclasses.fields(cls) if f.name != flatten
    }
    if getattr(cls, "TAG_KEY", None):
        keys.add(cls.TAG_KEY)
    return keys


def walk() -> tuple[dict[str, type[Any]], dict[str, type[enum.Enum]]]:
    """Every dataclass and enum reachable from ThreadEvent."""
    classes: dict[str, type[Any]] = {}
    enums: dict[str, type[enum.Enum]] = {}

    def visit(tp: Any) -> None:
        tp, meta = _strip(tp)
        tp, _ = _optional(tp)
        tp, more = _strip(tp)
        for m in meta + more:
            if isinstance(m, TaggedUnion):
                for v in m.variants:
                    visit(v)
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            enums[tp.__name__] = tp
        elif isinstance(tp, type) and dataclasses.is_dataclass(tp):
            if tp.__name__ not in classes:
                classes[tp.__name__] = tp
                for hint in _hints(tp).values():
                    visit(hint)
        else:
            for a in get_args(tp):
                visit(a)

    for cls in KNOWN_EVENT_CLASSES:
        visit(cls)
    return classes, enums


CLASSES, ENUMS = walk()


@pytest.mark.parametrize("schema", EVENT_SCHEMAS)
def test_every_dataclass_field_is_in_the_schema_and_every_schema_property_is_a_field(
    schema: str,
) -> None:
    defs = load(schema)["$defs"]
    object_defs = {n for n, d in defs.items() if "properties" in d and n not in UNIONS}
    assert object_defs == set(CLASSES), "a $def without a dataclass, or the reverse"
    for name, cls in CLASSES.items():
        assert set(defs[name]["properties"]) == json_fields(cls), name


@pytest.mark.parametrize("schema", EVENT_SCHEMAS)
def test_every_enum_matches_its_schema_definition(schema: str) -> None:
    defs = load(schema)["$defs"]
    enum_defs = {n for n, d in defs.items() if "enum" in d or "examples" in d}
    assert enum_defs == set(ENUMS)
    reader = schema.endswith("-reader")
    for name, tp in ENUMS.items():
        values = [m.value for m in tp if not (issubclass(tp, OpenEnum) and m.name == "UNKNOWN")]
        if reader and issubclass(tp, OpenEnum):
            assert defs[name]["type"] == "string" and defs[name]["examples"] == values
        else:
            assert defs[name]["enum"] == values, name


def test_union_tags_match_the_known_classes() -> None:
    for schema in EVENT_SCHEMAS:
        defs = load(schema)["$defs"]
        branches = [b["if"]["properties"]["type"]["const"] for b in defs["ThreadEvent"]["allOf"]]
        assert branches == [c.TYPE for c in KNOWN_EVENT_CLASSES]
        items = [b["if"]["properties"]["type"]["const"] for b in defs["ThreadItemDetails"]["allOf"]]
        assert items == [c.TYPE for c in ITEM_DETAILS.variants]


# ------------------------------------------------------------------ strategies from the types

I64 = (-(2**63), 2**63 - 1)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(*I64)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=10)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def strategy_for(tp: Any, meta: tuple[Any, ...] = ()) -> st.SearchStrategy[Any]:
    tp, more = _strip(tp)
    meta = meta + more
    inner, optional = _optional(tp)
    if optional:
        return st.none() | strategy_for(inner, meta)
    union = next((m for m in meta if isinstance(m, TaggedUnion)), None)
    if union is not None:
        return st.one_of([strategy_for(v) for v in union.variants])
    if tp is Any:
        return json_values
    if tp is str:
        return st.text(max_size=24)
    if tp is bool:
        return st.booleans()
    if tp is float:
        return st.floats(allow_nan=False, allow_infinity=False)
    if tp is int:
        r = next((m for m in meta if isinstance(m, IntRange)), IntRange(*I64))
        return st.integers(r.minimum, r.maximum)
    if get_origin(tp) is Literal:
        return st.sampled_from(get_args(tp))
    if get_origin(tp) is list:
        return st.lists(strategy_for(get_args(tp)[0]), max_size=3)
    if get_origin(tp) is dict:
        return st.dictionaries(st.text(max_size=8), strategy_for(get_args(tp)[1]), max_size=3)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        members = [m for m in tp if not (issubclass(tp, OpenEnum) and m.name == "UNKNOWN")]
        return st.sampled_from(members)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        return st.builds(
            tp, **{f.name: strategy_for(hints[f.name]) for f in dataclasses.fields(tp)}
        )
    raise TypeError(f"no strategy for {tp!r}")


events = st.one_of([strategy_for(c) for c in KNOWN_EVENT_CLASSES])
timestamps = st.datetimes(timezones=st.just(datetime.UTC)).map(
    lambda d: d.isoformat(timespec="microseconds")
)
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _verdicts(name: str, obj: Any) -> tuple[bool, bool]:
    return reference_validator(name).is_valid(obj), fast_validator(name).is_valid(obj)


@SETTINGS
@given(events)
def test_generated_raw_events_validate_everywhere_and_decode_back_equal(event: Any) -> None:
    line = encode_raw_line(event)
    obj = orjson.loads(line)
    for name in ("thread-event", "thread-event-reader"):
        assert _verdicts(name, obj) == (True, True), name
    assert checker_for(LineShape.RAW).fast_by_type[event.TYPE](obj)
    assert decode_envelope(obj).event == event


@SETTINGS
@given(events, st.integers(1, 2**63), timestamps)
def test_generated_wrapped_events_validate_everywhere_and_decode_back_equal(
    event: Any, seq: int, ts: str
) -> None:
    obj = orjson.loads(encode_wrapped_line(event, seq=seq, ts=ts))
    for name in ("versioned-thread-event", "versioned-thread-event-reader"):
        assert _verdicts(name, obj) == (True, True), name
    assert checker_for(LineShape.WRAPPED).fast_by_type[event.TYPE](obj)
    env = decode_envelope(obj)
    assert (env.event, env.seq, env.ts, env.schema_version) == (event, seq, ts, "0.11.0")


def _fixture_objects() -> list[tuple[str, Any]]:
    out = []
    for path in sorted((REPO / "fixtures" / "logs").glob("*/*.jsonl")):
        for n, raw in enumerate(path.read_bytes().splitlines(), 1):
            try:
                out.append((f"{path.name}:{n}", orjson.loads(raw)))
            except orjson.JSONDecodeError:
                continue
    return out


FIXTURE_OBJECTS = _fixture_objects()


def _agree(obj: Any) -> None:
    """jsonschema and jsonschema-rs agree on `obj` under every event schema, and the per-variant
    fast path agrees with the full writer schema."""
    for name in EVENT_SCHEMAS:
        ref, fast = _verdicts(name, obj)
        assert ref == fast, (name, obj)
    for shape, writer in (
        (LineShape.RAW, "thread-event"),
        (LineShape.WRAPPED, "versioned-thread-event"),
    ):
        ev = obj.get("event") if shape is LineShape.WRAPPED and isinstance(obj, dict) else obj
        tag = ev.get("type") if isinstance(ev, dict) else None
        check = checker_for(shape).fast_by_type.get(tag) if isinstance(tag, str) else None
        if check is not None:
            assert check(obj) == reference_validator(writer).is_valid(obj), (writer, obj)


def test_both_libraries_agree_on_every_fixture_line() -> None:
    assert len(FIXTURE_OBJECTS) > 400
    for where, obj in FIXTURE_OBJECTS:
        try:
            _agree(obj)
        except AssertionError as e:  # pragma: no cover - the message names the line
            raise AssertionError(f"{where}: {e}") from None


def test_every_valid_fixture_line_decodes() -> None:
    for path in sorted((REPO / "fixtures" / "logs" / "valid").glob("*.jsonl")):
        for raw in path.read_bytes().splitlines():
            env = decode_envelope(orjson.loads(raw))
            assert encode_event(env.event) == orjson.loads(raw).get("event", orjson.loads(raw))


# ------------------------------------------------------------------ mutations


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


TAGS = [c.TYPE for c in KNOWN_EVENT_CLASSES] + [c.TYPE for c in ITEM_DETAILS.variants]
odd_values = st.one_of(
    json_values,
    st.sampled_from([*TAGS, "unknown", "in_progress", "0.11.0", "2026-08-23T05:11:10Z", ""]),
    st.integers(-(2**63), 2**64 - 1),
    st.just(1.0),
    st.just(-0.0),
)


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    event = draw(events)
    wrapped = draw(st.booleans())
    obj = orjson.loads(
        encode_wrapped_line(event, seq=draw(st.integers(1, 9)), ts=draw(timestamps))
        if wrapped
        else encode_raw_line(event)
    )
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(obj)))
        parent: Any = obj
        for p in path[:-1]:
            parent = parent[p]
        op = draw(st.sampled_from(["set", "delete", "add", "null"]))
        if not path:
            if op == "add" and isinstance(obj, dict):
                obj[draw(st.text(max_size=6))] = draw(odd_values)
            continue
        key = path[-1]
        if op == "delete" and isinstance(parent, dict):
            del parent[key]
        elif op == "add" and isinstance(parent, dict):
            parent[draw(st.text(max_size=6))] = draw(odd_values)
        elif op == "null":
            parent[key] = None
        else:
            parent[key] = draw(odd_values)
    return obj


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_both_libraries_agree_on_mutated_events(obj: Any) -> None:
    _agree(obj)
