"""Upstream's verdict on one line: what `vtcode-exec-events`' Rust types (serde_json) accept.

This is the *shape* rule group of `vtcode validate`, and the whole verdict of
`--profile upstream`. It is compiled from the published reader schema
(`schemas/*thread-event-reader.schema.json`, generated from the one definition in
`vtcode.events`), read with serde's semantics instead of JSON Schema's. Where each rule comes
from (upstream `crates/common/vtcode-exec-events/src/lib.rs`, serde and serde_json):

* Structs derive `Deserialize` without `deny_unknown_fields`: an unknown key is ignored, even
  when it repeats; a *known* key that repeats is "duplicate field" (serde derive's visitor).
* `Option<T>` fields (absent from the reader's `required`) accept `null` as `None`. The two
  `#[serde(default)] String` fields (`aggregated_output`, `output`: required by the writer schema
  but not the reader's) may be absent but are not nullable.
* `ThreadEvent` is `#[serde(tag = "type")]` with a `#[serde(other)] Unknown` unit variant: an
  unknown type string is accepted and the rest of the object is ignored; a repeated `type` is
  "duplicate field `type`". `ThreadItemDetails` has no catch-all: an unknown item type fails.
* Free-form fields (`arguments: Option<serde_json::Value>`) take any JSON; in a `Value` map a
  repeated key is not an error (the last value wins).
* Integers (`u64`, `usize`, `u32`, `u8`, `i32`): serde_json reads a literal with `.` or an exponent,
  `-0`, or one past the i64/u64 range as an f64, which an integer field refuses; the range is the
  Rust type's (`u8` is 0..=255). `total_cost_usd: Option<serde_json::Number>` takes any number.
* Catch-all enums (`#[serde(other)]`: subtype, trigger, mode, decision) take any string; closed
  enums (status, outcome, harness event, permission decision, patch kind) only their values.
* `VersionedThreadEvent { schema_version: String, event: ThreadEvent }`: any string version;
  vtcode's `seq` and `ts` are unknown fields to it, so ignored.
* serde_json's recursion limit: 127 nested arrays/objects; a blank line is "EOF while parsing".
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

import orjson

from vtcode import schemas as _schemas
from vtcode.lineshape import LineShape
from vtcode.validate.parity import SERDE_DEPTH_LIMIT, _FloatLit, _serde_int, _too_deep
from vtcode.validate.schemacheck import pointer

__all__ = ["UpstreamReader", "upstream_for"]


class _Pairs(list[tuple[str, Any]]):
    """A JSON object as written: every pair, repeats included (serde sees them all)."""


class Rejected(Exception):
    """Upstream's reader refuses the line: `where` is a JSON pointer, `message` serde's reason."""

    def __init__(self, path: list[Any], message: str) -> None:
        super().__init__(message)
        self.where = pointer(path)
        self.message = message


@dataclass(frozen=True, slots=True)
class _Field:
    node: Any
    required: bool
    nullable: bool


@dataclass(slots=True)
class _Struct:
    fields: dict[str, _Field]


@dataclass(frozen=True, slots=True)
class _Tagged:
    variants: dict[str, Any]  # tag -> _Struct (resolved lazily)
    catch_all: bool


@dataclass(frozen=True, slots=True)
class _Item:
    id_node: Any
    details: _Tagged


@dataclass(frozen=True, slots=True)
class _Scalar:
    kind: str  # string | boolean | number | integer | any
    lo: int = 0
    hi: int = 0
    values: frozenset[str] | None = None  # a closed enum / const
    name: str = ""


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "floating point"
    if isinstance(value, str):
        return "string"
    if isinstance(value, _Pairs):
        return "map"
    return "sequence"


class _Compiler:
    def __init__(self, reader: dict[str, Any], writer: dict[str, Any]) -> None:
        self.defs: dict[str, Any] = reader["$defs"]
        self.writer_defs: dict[str, Any] = writer.get("$defs", {})
        self.cache: dict[str, Any] = {}

    def ref(self, s: dict[str, Any]) -> Any:
        name = s["$ref"].rsplit("/", 1)[1]
        if name not in self.cache:
            self.cache[name] = None  # placeholder against cycles (there are none today)
            self.cache[name] = self.named(name, self.defs[name])
        return self.cache[name]

    def named(self, name: str, s: dict[str, Any]) -> Any:
        if name == "ThreadItem":
            details = self.union(self.defs["ThreadItemDetails"], catch_all=False)
            return _Item(self.node(s["properties"]["id"], "id"), details)
        if name == "ThreadEvent":
            return self.union(s, catch_all=True)
        if "properties" in s:
            return self.struct(name, s)
        return self.node(s, name)

    def union(self, s: dict[str, Any], *, catch_all: bool) -> _Tagged:
        variants: dict[str, Any] = {}
        for branch in s["allOf"]:
            tag = branch["if"]["properties"]["type"]["const"]
            variants[tag] = self.ref(branch["then"])
        return _Tagged(variants, catch_all)

    def struct(self, name: str, s: dict[str, Any], skip: tuple[str, ...] = ("type",)) -> _Struct:
        required = set(s.get("required", ()))
        writer_required = set(self.writer_defs.get(name, {}).get("required", ()))
        fields: dict[str, _Field] = {}
        for key, prop in s["properties"].items():
            if key in skip and "const" in prop:
                continue  # the tag of an internally tagged variant
            opt = key not in required
            # `#[serde(default)]` (not Option): optional to the reader, always written
            nullable = opt and key not in writer_required
            fields[key] = _Field(self.node(prop, key), not opt, nullable)
        return _Struct(fields)

    def node(self, s: dict[str, Any], name: str) -> Any:
        if "$ref" in s:
            return self.ref(s)
        if not set(s) - {"description", "title", "examples"}:
            return _Scalar("any", name=name)
        if "enum" in s:
            return _Scalar("string", values=frozenset(s["enum"]), name=name)
        if "const" in s:
            return _Scalar("string", values=frozenset([s["const"]]), name=name)
        kind = s.get("type")
        if kind == "array":
            return [self.node(s.get("items", {}), name)]
        if kind == "integer":
            return _Scalar("integer", int(s["minimum"]), int(s["maximum"]), name=name)
        if kind in ("string", "boolean", "number"):
            return _Scalar(kind, name=name)  # `pattern`/`format` are vtcode's, not serde's
        raise RuntimeError(f"upstream reader model: cannot read schema of {name}: {s!r}")


def _check(node: Any, value: Any, path: list[Any]) -> None:
    if type(node) is _Scalar:
        _scalar(node, value, path)
    elif type(node) is _Struct:
        _struct(node, value, path)
    elif type(node) is _Tagged:
        _tagged(node, value, path, ())
    elif type(node) is _Item:
        _item(node, value, path)
    elif type(node) is list:
        if type(value) is not list:
            raise Rejected(path, f"invalid type: {_kind(value)}, expected a sequence")
        for i, v in enumerate(value):
            _check(node[0], v, [*path, i])
    else:  # pragma: no cover - the compiler makes only the nodes above
        raise AssertionError(node)


def _scalar(node: _Scalar, value: Any, path: list[Any]) -> None:
    kind = node.kind
    if kind == "any":
        return
    if kind == "string":
        if type(value) is not str:
            raise Rejected(path, f"invalid type: {_kind(value)}, expected a string")
        if node.values is not None and value not in node.values:
            raise Rejected(path, f"unknown variant `{value}` for {node.name}")
    elif kind == "boolean":
        if type(value) is not bool:
            raise Rejected(path, f"invalid type: {_kind(value)}, expected a boolean")
    elif kind == "number":
        if type(value) is bool or not isinstance(value, int | float):
            raise Rejected(path, f"invalid type: {_kind(value)}, expected a number")
    elif isinstance(value, float):
        literal = value.literal if isinstance(value, _FloatLit) else repr(value)
        raise Rejected(path, f"invalid type: floating point `{literal}`, expected an integer")
    elif type(value) is not int:
        raise Rejected(path, f"invalid type: {_kind(value)}, expected an integer")
    elif not node.lo <= value <= node.hi:
        raise Rejected(
            path, f"invalid value: {value}, expected an integer in {node.lo}..={node.hi}"
        )


def _struct(node: _Struct, value: Any, path: list[Any], skip: tuple[str, ...] = ()) -> None:
    if type(value) is not _Pairs:
        raise Rejected(path, f"invalid type: {_kind(value)}, expected a struct")
    seen: set[str] = set()
    fields = node.fields
    for key, v in value:
        f = fields.get(key)
        if f is None or key in skip:
            continue  # no deny_unknown_fields: serde skips it (a repeat too)
        if key in seen:
            raise Rejected([*path, key], f"duplicate field `{key}`")
        seen.add(key)
        if v is None and f.nullable:
            continue  # Option<T>: null is None
        _check(f.node, v, [*path, key])
    for key, f in fields.items():
        if f.required and key not in seen:
            raise Rejected(path, f"missing field `{key}`")


def _tag(value: Any, path: list[Any]) -> str:
    if type(value) is not _Pairs:
        raise Rejected(path, f"invalid type: {_kind(value)}, expected an internally tagged enum")
    tags = [v for k, v in value if k == "type"]
    if not tags:
        raise Rejected(path, "missing field `type`")
    if len(tags) > 1:
        raise Rejected([*path, "type"], "duplicate field `type`")
    tag = tags[0]
    if type(tag) is not str:
        raise Rejected([*path, "type"], f"invalid type: {_kind(tag)}, expected variant identifier")
    return tag


def _tagged(node: _Tagged, value: Any, path: list[Any], skip: tuple[str, ...]) -> None:
    tag = _tag(value, path)
    variant = node.variants.get(tag)
    if variant is None:
        if node.catch_all:
            return  # `#[serde(other)] Unknown`: the payload is ignored
        raise Rejected([*path, "type"], f"unknown variant `{tag}`")
    _struct(variant, value, path, skip)


def _item(node: _Item, value: Any, path: list[Any]) -> None:
    if type(value) is not _Pairs:
        raise Rejected(path, f"invalid type: {_kind(value)}, expected struct ThreadItem")
    ids = [v for k, v in value if k == "id"]
    if len(ids) > 1:
        raise Rejected([*path, "id"], "duplicate field `id`")
    if not ids:
        raise Rejected(path, "missing field `id`")
    _check(node.id_node, ids[0], [*path, "id"])
    _tagged(node.details, value, path, ("id",))  # `#[serde(flatten)] details`


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class UpstreamReader:
    """serde_json::from_str::<ThreadEvent | VersionedThreadEvent> on one line, as a verdict."""

    def __init__(self, shape: LineShape) -> None:
        wrapped = self.wrapped = shape is LineShape.WRAPPED
        name = "versioned-thread-event" if wrapped else "thread-event"
        reader = _schemas.load(name + "-reader")
        compiler = _Compiler(reader, _schemas.load(name))
        event = compiler.named("ThreadEvent", compiler.defs["ThreadEvent"])
        if wrapped:
            envelope = reader["properties"]
            self.root: Any = _Struct(
                {
                    "schema_version": _Field(_Scalar("string", name="schema_version"), True, False),
                    "event": _Field(event, True, False),
                }
            )
            assert {"schema_version", "event"} <= set(envelope)
        else:
            self.root = event

    def check(self, data: bytes | bytearray, parsed: Any = None) -> None:
        """Raise `Rejected` when upstream's reader refuses the line (without its newline).

        `parsed`: the line already read by orjson, if the caller has it (the syntax gate).
        JSON syntax errors are the caller's (orjson refuses what serde_json refuses).
        """
        if parsed is None:
            parsed = orjson.loads(data)
        if data.count(b"[") + data.count(b"{") >= SERDE_DEPTH_LIMIT:
            deep = _too_deep(parsed)
            if deep is not None:
                raise Rejected(deep, "recursion limit exceeded")
        typed = json.loads(
            bytes(data),
            object_pairs_hook=_Pairs,
            parse_int=_serde_int,
            parse_float=_FloatLit,
            parse_constant=_reject_constant,
        )
        _check(self.root, typed, [])

    def accepts(self, data: bytes | bytearray) -> bool:
        try:
            self.check(data)
        except (Rejected, ValueError, RecursionError):
            return False
        return True


@functools.cache
def upstream_for(shape: LineShape) -> UpstreamReader:
    """One compiled reader model per line shape."""
    return UpstreamReader(shape)
