"""Reader parity: what upstream's serde_json refuses although orjson and the schemas pass it.

Three things orjson accepts, JSON Schema cannot see, and serde_json rejects on read:

* **Duplicate keys.** orjson keeps the last value; serde_json fails a typed struct on a repeated
  field ("duplicate field `text`"), and a reader that keeps the first value sees another event
  (`"type"` twice). Any repeated key, at any depth, is an error here.
* **Integers written as floats.** JSON Schema's `integer` accepts `10.0` and `1e3`; serde_json
  reads any literal with `.` or an exponent as an f64, which a u64/i32/u8 field refuses. And
  `-0`: serde_json's `parse_number` says "Convert into a float if we underflow, or on `-0`"
  (`if neg >= 0 { ParserNumber::F64(-(significand as f64)) }`, serde-rs/json src/de.rs, current
  master; releases up to about 1.0.6x returned the integer 0), so `-0` is the float -0.0 and an
  integer field refuses it too; so is an integer beyond u64/i64 (read as a float).
* **Nesting deeper than serde_json's recursion limit.** `remaining_depth` starts at 128 and is
  decremented on each `[`/`{`, failing when it reaches 0: 127 nested containers read, the 128th
  is "recursion limit exceeded" (orjson allows 1024).

Cost: the common line pays one `orjson.dumps` (a writer's compact output re-encodes to the same
bytes only if it had no repeated key, no `-0`, no exponent) plus a few dict lookups at the
integer fields of its event type, and a bracket count only for the item types with free-form
`arguments`. Only a suspect line is re-read with `json.loads` hooks to locate the problem.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from vtcode import schemas as _schemas
from vtcode.lineshape import LineShape
from vtcode.validate.report import ProblemCode
from vtcode.validate.schemacheck import Finding, pointer

__all__ = ["SERDE_DEPTH_LIMIT", "ReaderParity", "parity_for"]

SERDE_DEPTH_LIMIT = 128
"""serde_json's initial `remaining_depth`: the 128th nested array/object is refused."""

_U64_MAX = 2**64 - 1
_I64_MIN = -(2**63)
_dumps = orjson.dumps


class _FloatLit(float):
    """A number serde_json reads as an f64, with the literal as written (for the message)."""

    literal: str

    def __new__(cls, literal: str) -> _FloatLit:
        obj = super().__new__(cls, float(literal))
        obj.literal = literal
        return obj


def _serde_int(literal: str) -> int | float:
    """An integer literal as serde_json types it: `-0` and out-of-range values are floats."""
    n = int(literal)
    if (n == 0 and literal.startswith("-")) or n > _U64_MAX or n < _I64_MIN:
        return _FloatLit(literal)
    return n


class _DupDict(dict[str, Any]):
    """An object that had repeated keys (the last value kept, as orjson does)."""

    dups: list[str]


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`object_pairs_hook`: a plain dict, or a `_DupDict` naming the keys that repeat."""
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    seen: set[str] = set()
    dups: list[str] = []
    for k, _ in pairs:
        if k in seen and k not in dups:
            dups.append(k)
        seen.add(k)
    marked = _DupDict(out)
    marked.dups = dups
    return marked


@dataclass(slots=True)
class _Node:
    """Where integers (and free-form values) sit inside one object shape of the writer schema."""

    ints: tuple[str, ...] = ()
    objects: tuple[tuple[str, _Node], ...] = ()
    arrays: tuple[tuple[str, _Node], ...] = ()
    tagged: dict[str, _Node] = field(default_factory=dict)  # variant by this object's "type"
    deep: bool = False  # a free-form value here may nest arbitrarily

    @property
    def empty(self) -> bool:
        return not (self.ints or self.objects or self.arrays or self.tagged or self.deep)


class _Compiler:
    """Builds the `_Node` tree from a generated writer schema ($ref, allOf, if/then unions)."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.defs: dict[str, Any] = schema.get("$defs", {})

    def resolve(self, s: Any) -> Any:
        while isinstance(s, dict) and "$ref" in s:
            s = self.defs[s["$ref"].rsplit("/", 1)[1]]
        return s

    def node(self, s: Any) -> _Node:
        s = self.resolve(s)
        out = _Node()
        if not isinstance(s, dict):
            return out
        ints: list[str] = []
        objects: list[tuple[str, _Node]] = []
        arrays: list[tuple[str, _Node]] = []
        for key, prop in s.get("properties", {}).items():
            for option in self._options(prop):
                kind = option.get("type")
                if kind == "integer":
                    ints.append(key)
                elif not option:
                    out.deep = True  # `{}`: any JSON value (tool arguments)
                elif kind == "array":
                    child = self.node(option.get("items", {}))
                    if not option.get("items"):
                        out.deep = True
                    elif not child.empty:
                        arrays.append((key, child))
                elif "properties" in option or "allOf" in option:
                    child = self.node(option)
                    if not child.empty:
                        objects.append((key, child))
                elif kind == "object" and "additionalProperties" in option:
                    out.deep = out.deep or option["additionalProperties"] in ({}, True)
        for sub in s.get("allOf", []):
            if "if" in sub and "then" in sub:
                tag = sub["if"]["properties"]["type"]["const"]
                child = self.node(sub["then"])
                if not child.empty:
                    out.tagged[tag] = child
            else:
                merged = self.node(sub)
                ints += merged.ints
                objects += merged.objects
                arrays += merged.arrays
                out.tagged.update(merged.tagged)
                out.deep = out.deep or merged.deep
        out.ints, out.objects, out.arrays = tuple(ints), tuple(objects), tuple(arrays)
        return out

    def _options(self, prop: Any) -> Iterator[dict[str, Any]]:
        prop = self.resolve(prop)
        if not isinstance(prop, dict):
            return
        alts = prop.get("anyOf") or prop.get("oneOf")
        if alts:
            for alt in alts:
                yield from self._options(alt)
        else:
            yield prop


@dataclass(frozen=True, slots=True)
class _Flat:
    """One event variant's checks without recursion (what the hot loop runs on every line)."""

    ints: tuple[tuple[str, ...], ...]  # paths through plain objects to integer fields
    deep: bool
    union_key: str | None  # the key holding a tagged object (`item`)
    union: dict[str, _Flat]  # that object's variants by its `type`


_Paths = tuple[tuple[str, ...], ...]
_Plan = tuple[_Paths, bool, str | None, dict[str, tuple[_Paths, bool]]]


def _flatten(node: _Node) -> _Flat | None:
    """`node` as a `_Flat`, or None when it has arrays or nested unions (then recurse)."""
    if node.arrays or node.tagged:
        return None
    ints: list[tuple[str, ...]] = [(k,) for k in node.ints]
    deep = node.deep
    union_key: str | None = None
    union: dict[str, _Flat] = {}
    for key, child in node.objects:
        if child.tagged:
            if union_key is not None or child.ints or child.objects or child.arrays:
                return None
            variants = {tag: _flatten(sub) for tag, sub in child.tagged.items()}
            if any(v is None or v.union_key is not None for v in variants.values()):
                return None
            union_key, union = key, {t: v for t, v in variants.items() if v is not None}
            continue
        flat = _flatten(child)
        if flat is None or flat.union_key is not None:
            return None
        ints += [(key, *path) for path in flat.ints]
        deep = deep or flat.deep
    return _Flat(tuple(ints), deep, union_key, union)


def _float_at(value: dict[str, Any], paths: tuple[tuple[str, ...], ...]) -> bool:
    for path in paths:
        v: Any = value
        for k in path:
            v = v.get(k) if type(v) is dict else None
        if type(v) is float:
            return True
    return False


def _suspect(value: dict[str, Any], node: _Node, data: bytes | bytearray) -> bool:
    """The cheap look at a parsed (orjson) object: a float where an integer belongs, or depth."""
    for k in node.ints:
        if type(value.get(k)) is float:
            return True
    if node.deep and data.count(b"[") + data.count(b"{") >= SERDE_DEPTH_LIMIT:
        return True
    for k, child in node.objects:
        v = value.get(k)
        if type(v) is dict and _suspect(v, child, data):
            return True
    for k, child in node.arrays:
        v = value.get(k)
        if type(v) is list:
            for e in v:
                if type(e) is dict and _suspect(e, child, data):
                    return True
    if node.tagged:
        tag = value.get("type")
        sub = node.tagged.get(tag) if type(tag) is str else None
        if sub is not None and _suspect(value, sub, data):
            return True
    return False


def _floats(value: dict[str, Any], node: _Node, path: list[Any], out: list[Finding]) -> None:
    """Every integer field of `value` (serde-typed numbers) that serde_json reads as a float."""
    for k in node.ints:
        v = value.get(k)
        if isinstance(v, float) and v.is_integer():  # 0.5 is the schema's wrong-type already
            literal = v.literal if isinstance(v, _FloatLit) else repr(v)
            out.append(
                Finding(
                    ProblemCode.FLOAT_FOR_INTEGER,
                    pointer([*path, k]),
                    f"{k} is written {literal}; upstream's reader (serde_json) reads that as a "
                    "float and refuses it for an integer field",
                    literal,
                )
            )
    for k, child in node.objects:
        v = value.get(k)
        if isinstance(v, dict):
            _floats(v, child, [*path, k], out)
    for k, child in node.arrays:
        v = value.get(k)
        if isinstance(v, list):
            for i, e in enumerate(v):
                if isinstance(e, dict):
                    _floats(e, child, [*path, k, i], out)
    tag = value.get("type")
    sub = node.tagged.get(tag) if isinstance(tag, str) else None
    if sub is not None:
        _floats(value, sub, path, out)


def _too_deep(obj: Any) -> list[Any] | None:
    """The path to the first container (document order) at serde_json's limit, if any."""
    stack: list[tuple[Any, int, list[Any]]] = [(obj, 1, [])]
    while stack:
        value, depth, path = stack.pop()
        if depth >= SERDE_DEPTH_LIMIT:
            return path
        if isinstance(value, dict):
            items: list[tuple[Any, Any]] = list(value.items())
        else:
            items = list(enumerate(value))
        for k, v in reversed(items):
            if isinstance(v, dict | list):
                stack.append((v, depth + 1, [*path, k]))
    return None


def _duplicates(obj: Any) -> Iterator[list[Any]]:
    """Paths of repeated keys (each object marked by `_pairs`), in document order."""
    stack: list[tuple[Any, list[Any]]] = [(obj, [])]
    while stack:
        value, path = stack.pop()
        if isinstance(value, _DupDict):
            for k in value.dups:
                yield [*path, k]
        if isinstance(value, dict):
            children: list[tuple[Any, Any]] = list(value.items())
        elif isinstance(value, list):
            children = list(enumerate(value))
        else:
            continue
        for k, v in reversed(children):
            if isinstance(v, dict | list):
                stack.append((v, [*path, k]))


class ReaderParity:
    """The serde_json reading rules for one line shape, compiled from its writer schema."""

    def __init__(self, shape: LineShape) -> None:
        wrapped = shape is LineShape.WRAPPED
        schema = _schemas.load("versioned-thread-event" if wrapped else "thread-event")
        compiler = _Compiler(schema)
        self._root = compiler.node(schema)
        self._seq = wrapped and "seq" in self._root.ints
        events = compiler.node(compiler.defs["ThreadEvent"])
        self._events = events.tagged
        # the hot loop's plan per event type, as plain tuples (unpacked in one step):
        # (integer paths, may be deep, key of a tagged object, {its type: (paths, deep)})
        self._plans: dict[str, _Plan] = {}
        self._walk: set[str] = set()  # shapes without a flat plan: walk the tree
        for tag, node in self._events.items():
            flat = _flatten(node)
            if flat is None:
                self._walk.add(tag)
            elif flat.ints or flat.deep or flat.union:
                union = {t: (v.ints, v.deep) for t, v in flat.union.items() if v.ints or v.deep}
                self._plans[tag] = (flat.ints, flat.deep, flat.union_key, union)

    def suspect(
        self,
        data: bytes | bytearray,
        obj: dict[str, Any],
        ev: dict[str, Any] | None,
        etype: str | None,
    ) -> bool:
        """True when the line may break a serde_json rule (then `findings` says which).

        `data` is the line without its newline. A compact line with a repeated key, a `-0` or
        an exponent never re-encodes to its own bytes.
        """
        try:
            if _dumps(obj) != data:
                return True
        except orjson.JSONEncodeError:  # nested past orjson's 254 levels on output: deep
            return True
        if self._seq and type(obj.get("seq")) is float:
            return True
        plan = self._plans.get(etype)  # type: ignore[arg-type]
        if plan is None or ev is None:
            walk = ev is not None and etype in self._walk
            return walk and _suspect(ev, self._events[etype], data)  # type: ignore[arg-type,index]
        ints, deep, union_key, union = plan
        if ints and _float_at(ev, ints):
            return True
        if union_key is not None:
            inner = ev.get(union_key)
            if type(inner) is dict:
                tag = inner.get("type")
                sub = union.get(tag) if type(tag) is str else None
                if sub is not None:
                    if sub[0] and _float_at(inner, sub[0]):
                        return True
                    deep = deep or sub[1]
        # 128 nested containers take 256 bytes at least
        return (
            deep
            and len(data) >= 2 * SERDE_DEPTH_LIMIT
            and data.count(b"[") + data.count(b"{") >= SERDE_DEPTH_LIMIT
        )

    def findings(self, data: bytes | bytearray, obj: Any) -> list[Finding]:
        """Exactly which keys break a serde_json rule (the slow path: the line is re-read)."""
        out: list[Finding] = []
        brackets = data.count(b"[") + data.count(b"{")
        deep = _too_deep(obj) if brackets >= SERDE_DEPTH_LIMIT else None
        if deep is not None:
            out.append(
                Finding(
                    ProblemCode.TOO_DEEP,
                    pointer(deep),
                    f"nested {SERDE_DEPTH_LIMIT} arrays/objects deep; upstream's reader "
                    f"(serde_json) stops at {SERDE_DEPTH_LIMIT - 1}",
                )
            )
        try:
            typed = json.loads(
                bytes(data), object_pairs_hook=_pairs, parse_int=_serde_int, parse_float=_FloatLit
            )
        except (ValueError, RecursionError):  # orjson read it; only a stack limit differs
            return out
        for path in _duplicates(typed):
            key = path[-1]
            out.append(
                Finding(
                    ProblemCode.DUPLICATE_KEY,
                    pointer(path),
                    f"key {key!r} appears more than once in one object; upstream's reader "
                    "(serde_json) refuses a repeated field, and readers differ on which value wins",
                    key,
                )
            )
        if isinstance(typed, dict):
            _floats(typed, self._root, [], out)
        return out


@functools.cache
def parity_for(shape: LineShape) -> ReaderParity:
    """One cached rule set per line shape."""
    return ReaderParity(shape)
