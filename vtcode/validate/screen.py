"""The validator's fast path: one typed decode that accepts a line only when it is beyond doubt.

`vtcode validate` used to read every line with orjson, check it with jsonschema-rs and re-encode it
for the reader-parity rules (about 4 us per line, under half the speed of a bare `json.loads`). A
log written by a careful writer is valid on almost every line, so the common case only has to
*prove* a line valid, cheaply; any line it cannot prove goes down the exact path, which finds and
words every problem as before. The proof:

1. **Typed decode** with msgspec into Structs compiled at start-up from the published *writer*
   schema (`schemas/*thread-event.schema.json`, itself generated from the one definition in
   `vtcode.events`): tagged unions by `type`, unknown keys refused, integers strict (msgspec
   refuses `1.0` and `1e3` for an `int`), bounds, enums and consts as Literals; the RFC 3339
   `ts` is matched after the decode (msgspec's `pattern` costs twice a bare `re.match`).
   Each keyword of the schema is translated or the build fails, so a new schema keyword cannot
   silently loosen the screen. Where msgspec cannot express a bound exactly it is made stricter
   (a u64 is screened as an i64); the rare value in between takes the exact path.
2. **Re-encoded length equals the line's length.** msgspec writes the shortest form of every
   token (strings escape only what JSON requires, verified for every code point in the tests;
   integers in decimal; literals as is), so its output is never longer than the input, and is
   exactly as long only when the input had no repeated key (the decoder keeps the last value; the
   dropped pair makes the input longer), no whitespace, no `-0` and no longer escape. The two
   things that could make the output longer are excluded: a float inside a free-form value
   (`1e5` re-encodes as `100000.0`) makes the decoder's float hook refuse the line, and the one
   typed float field (`total_cost_usd`) is kept as raw bytes, re-encoded verbatim.
3. **Depth**: a line with 128 or more brackets is not screened (serde_json stops at 127 levels).

2b. **Or: as many keys as the decoded line.** A line the length proof cannot take (JSON
   whitespace, `\\u` escapes, a float inside a free-form value, as Python's `json.dumps`, Node or
   jq write by default) is proven by counting: no repeated key when its `:` count equals the
   re-encoding's, and no bare `-0` (see `_keys_proof`). Floats in free-form values are decoded
   (and counted) by the float hook; a non-finite one is refused, as serde_json refuses it.

So an accepted line is writer-schema valid and passes every reader-parity rule; it gets no finding
in any mode. Everything else (a refused decode, a length mismatch, a bracket-heavy line) goes to
the exact checker: the screen never decides that a line is wrong.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, cast

import msgspec

from vtcode import schemas as _schemas
from vtcode.lineshape import LineShape

__all__ = ["EVENT_TYPES", "LineScreen", "ScreenBuildError", "screen_for"]

SCREEN_DEPTH_BRACKETS = 128
"""A line with this many `[`/`{` may nest past serde_json's limit: the exact path decides."""

_I64_MAX = 2**63 - 1
_I64_MIN = -(2**63)
_U64_MAX = 2**64 - 1
# RFC 3339 date-time, stricter than the `date-time` format (no leap second, no lowercase, no
# Feb 29, days within their month): every string it accepts, jsonschema-rs accepts too.
_RFC3339 = (  # [0-9], not \d (any Unicode digit); \Z, not $ (which allows a final newline)
    r"^[0-9]{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|"
    r"(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)"
    r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,9})?"
    r"(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])\Z"
)
_Timestamp = object()  # `value`'s answer for a date-time string: `struct` records the field
_NUMBER = re.compile(rb"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_IGNORED = frozenset({"description", "title", "examples", "$schema", "$id", "$comment"})


EVENT_TYPES: tuple[str, ...] = tuple(
    _schemas.load("thread-event")["$defs"]["ThreadEvent"]["properties"]["type"]["enum"]
)
"""The known event types, read from the published schema (not from the event dataclasses, whose
import would cost the validator's start-up; tests/validate check the two agree)."""


class ScreenBuildError(RuntimeError):
    """The writer schema uses a keyword the screen cannot translate (a programming error)."""


_BARE_MINUS_ZERO = re.compile(rb"[:,\[][ \t\r\n]*-0(?![0-9.eE])")
"""`-0` as a whole number token: serde_json reads it as a float (parity.py)."""
_ESCAPED_PUNCT_OR_DIGIT = re.compile(rb"\\u00[23]").search
_MINUS_ZERO = re.compile(rb"-0").search
_LONG_DIGITS = re.compile(rb"[0-9]{19}")
"""19 digits in a row: maybe an integer past 64 bits in a free-form value (see `_int_doubtful`)."""


@dataclass(frozen=True, slots=True)
class _Variant:
    """What the hot loop needs of one decoded event class, looked up by `type(event)`."""

    tag: str
    has_thread_id: bool
    has_item: bool
    raw_numbers: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _ItemKind:
    """What the hot loop needs of one decoded item class, looked up by `type(item)`."""

    tag: str
    free_form: tuple[str, ...]  # fields holding any JSON (tool arguments)


class _Compiler:
    """Translates the writer schema's `$defs` into msgspec types, keyword by keyword."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.defs: dict[str, Any] = schema["$defs"]
        self.types: dict[str, Any] = {}
        self.raw_numbers: dict[type[Any], tuple[str, ...]] = {}
        self.free_form: dict[type[Any], tuple[str, ...]] = {}
        self.timestamps: dict[type[Any], tuple[str, ...]] = {}

    def _check_keys(self, where: str, s: dict[str, Any], allowed: set[str]) -> None:
        extra = set(s) - allowed - _IGNORED
        if extra:
            raise ScreenBuildError(f"{where}: cannot screen schema keyword(s) {sorted(extra)}")

    def ref(self, s: dict[str, Any]) -> str | None:
        r = s.get("$ref")
        return None if r is None else str(r).rsplit("/", 1)[1]

    def value(self, where: str, s: dict[str, Any]) -> Any:
        """The msgspec type of one property schema (not a closed object: see `struct`)."""
        name = self.ref(s)
        if name is not None:
            self._check_keys(where, s, {"$ref"})
            return self.named(name)
        if not s:
            return Any  # free-form JSON (tool arguments)
        if "const" in s:
            self._check_keys(where, s, {"const"})
            return Literal[s["const"]]
        if "enum" in s:
            self._check_keys(where, s, {"enum"})
            return Literal[tuple(s["enum"])]
        kind = s.get("type")
        if kind == "string":
            self._check_keys(where, s, {"type", "format"})
            fmt = s.get("format")
            if fmt is None:
                return str
            if fmt == "date-time":
                # a plain str matched after the decode: msgspec's `Meta(pattern=)` costs 1.7 us a
                # line on this VM, `re.match` 0.9 us (issue 27)
                return _Timestamp
            raise ScreenBuildError(f"{where}: cannot screen string format {fmt!r}")
        if kind == "integer":
            self._check_keys(where, s, {"type", "minimum", "maximum"})
            lo = max(int(s.get("minimum", _I64_MIN)), _I64_MIN)
            hi = min(int(s.get("maximum", _I64_MAX)), _I64_MAX)
            return Annotated[int, msgspec.Meta(ge=lo, le=hi)]
        if kind == "boolean":
            self._check_keys(where, s, {"type"})
            return bool
        if kind == "number":
            self._check_keys(where, s, {"type"})
            return msgspec.Raw  # re-encoded verbatim; `_numbers_ok` checks it is a number
        if kind == "array":
            self._check_keys(where, s, {"type", "items"})
            items = s.get("items")
            inner = self.value(where + "/items", items) if items else Any
            if inner is _Timestamp:
                raise ScreenBuildError(f"{where}: cannot screen a list of date-times")
            return list[inner]  # type: ignore[valid-type]
        raise ScreenBuildError(f"{where}: cannot screen {s!r}")

    def named(self, name: str) -> Any:
        if name in self.types:
            return self.types[name]
        s = self.defs[name]
        if "enum" in s or "const" in s:
            tp = self.value(name, s)
        elif name == "ThreadItem":
            tp = self._item_union(s)
        elif "allOf" in s:
            raise ScreenBuildError(f"{name}: a union outside ThreadEvent/ThreadItem")
        else:
            tp = self.struct(name, s, extra_fields=(), tagged=False)
        self.types[name] = tp
        return tp

    def struct(
        self,
        name: str,
        s: dict[str, Any],
        *,
        extra_fields: tuple[tuple[str, Any, Any], ...],
        tagged: bool,
    ) -> type[msgspec.Struct]:
        """A closed object (or one variant of a tagged union) as a Struct."""
        allowed = {"type", "properties", "required"}
        if not tagged or "additionalProperties" in s:
            allowed.add("additionalProperties")
            if s.get("additionalProperties") is not False:
                raise ScreenBuildError(f"{name}: only closed objects can be screened")
        self._check_keys(name, s, allowed)
        required = set(s.get("required", ()))
        tag: str | None = None
        fields: list[tuple[str, Any, Any]] = list(extra_fields)
        raw: list[str] = []
        free: list[str] = []
        stamps: list[str] = []
        for key, prop in s.get("properties", {}).items():
            if tagged and key == "type":
                if set(prop) - _IGNORED != {"const"}:
                    raise ScreenBuildError(f"{name}: a variant's type must be a const")
                tag = prop["const"]
                continue
            tp = self.value(f"{name}/{key}", prop)
            if tp is _Timestamp:
                stamps.append(key)
                tp = str
            elif tp is msgspec.Raw:
                raw.append(key)
            elif tp is Any or tp == list[Any]:
                free.append(key)
            if key in required:
                fields.append((key, tp, msgspec.NODEFAULT))
            else:
                fields.append((key, tp | msgspec.UnsetType, msgspec.UNSET))
        fields.sort(key=lambda f: f[2] is not msgspec.NODEFAULT)  # required ones first
        cls = msgspec.defstruct(
            name,
            [(k, t) if d is msgspec.NODEFAULT else (k, t, d) for k, t, d in fields],
            forbid_unknown_fields=True,
            tag_field="type" if tagged else None,
            tag=tag if tagged else None,
            omit_defaults=True,
            frozen=True,
            gc=False,  # no cycles possible; untracked structs halve the decode time
        )
        if raw:
            self.raw_numbers[cls] = tuple(raw)
        if stamps:
            self.timestamps[cls] = tuple(stamps)
        if free:
            self.free_form[cls] = tuple(free)
        return cls

    def variants(self, union: str) -> list[tuple[str, dict[str, Any]]]:
        """The `(def name, schema)` of each branch of an if/then tagged union."""
        s = self.defs[union]
        self._check_keys(union, s, {"type", "required", "properties", "allOf"})
        out: list[tuple[str, dict[str, Any]]] = []
        for branch in s["allOf"]:
            name = self.ref(branch.get("then", {}))
            if set(branch) != {"if", "then"} or name is None:
                raise ScreenBuildError(f"{union}: a branch that is not if/then $ref")
            out.append((name, self.defs[name]))
        return out

    def _item_union(self, s: dict[str, Any]) -> Any:
        """ThreadItem: `{id, type, <details>}` closed by unevaluatedProperties."""
        self._check_keys(
            "ThreadItem", s, {"type", "properties", "required", "allOf", "unevaluatedProperties"}
        )
        if s.get("unevaluatedProperties") is not False or set(s["properties"]) != {"id"}:
            raise ScreenBuildError("ThreadItem: unexpected shape")
        id_field = (("id", self.value("ThreadItem/id", s["properties"]["id"]), msgspec.NODEFAULT),)
        members = [
            self.struct(name, v, extra_fields=id_field, tagged=True)
            for name, v in self.variants("ThreadItemDetails")
        ]
        return _union(members)

    def events(self) -> list[type[msgspec.Struct]]:
        return [
            self.struct(name, s, extra_fields=(), tagged=True)
            for name, s in self.variants("ThreadEvent")
        ]


def _union(members: list[Any]) -> Any:
    out = members[0]
    for m in members[1:]:
        out = out | m
    return out


def _tag_of(cls: type[msgspec.Struct]) -> str:
    return cast(str, cls.__struct_config__.tag)


class LineScreen:
    """Decode one line and say whether it is proven valid (see the module docstring)."""

    def __init__(self, shape: LineShape) -> None:
        wrapped = shape is LineShape.WRAPPED
        schema = _schemas.load("versioned-thread-event" if wrapped else "thread-event")
        compiler = _Compiler(schema)
        members = compiler.events()
        event_type = _union(members)
        target: Any = event_type
        if wrapped:  # the envelope, with `event` as the tagged union built above
            envelope = {k: v for k, v in schema.items() if k != "$defs"}
            envelope["properties"] = {k: v for k, v in schema["properties"].items() if k != "event"}
            envelope["required"] = [r for r in schema["required"] if r != "event"]
            target = compiler.struct(
                "VersionedThreadEvent",
                envelope,
                extra_fields=(("event", event_type, msgspec.NODEFAULT),),
                tagged=False,
            )
        self.wrapped = wrapped
        outer: type[Any] | None = target if wrapped else None
        if set(compiler.timestamps) - {outer}:
            raise ScreenBuildError("a date-time field inside an event: extend the screen")
        self._stamp_fields = compiler.timestamps.get(outer, ()) if outer is not None else ()
        self._stamp_ok = re.compile(_RFC3339).match
        self._floats = 0  # floats decoded in free-form values (counted by the hook)

        def float_hook(literal: str) -> float:
            self._floats += 1
            value = float(literal)
            if value - value != 0:  # inf: serde_json refuses a number out of range
                raise ValueError(literal)
            return value

        self._decode: Callable[[bytes | bytearray], Any] = msgspec.json.Decoder(
            target, float_hook=float_hook
        ).decode
        self._encode = msgspec.json.Encoder().encode
        self.variants: dict[type[Any], _Variant] = {
            cls: _Variant(
                tag=_tag_of(cls),
                has_thread_id="thread_id" in cls.__struct_fields__,
                has_item="item" in cls.__struct_fields__,
                raw_numbers=compiler.raw_numbers.get(cls, ()),
            )
            for cls in members
        }
        item_union = compiler.types["ThreadItem"]
        self.items: dict[type[Any], _ItemKind] = {
            cls: _ItemKind(tag=_tag_of(cls), free_form=compiler.free_form.get(cls, ()))
            for cls in getattr(item_union, "__args__", (item_union,))
        }
        if set(compiler.free_form) - set(self.items):
            raise ScreenBuildError("a free-form field outside items: extend the depth screen")

    def __call__(self, data: bytes | bytearray) -> Any:
        """The decoded line (without its newline) if it is proven valid, else None."""
        floats = self._floats
        try:
            obj = self._decode(data)
        except (msgspec.DecodeError, ValueError, RecursionError):  # incl. bad UTF-8
            return None
        encoded = self._encode(obj)
        size = len(encoded)
        float_seen = self._floats != floats
        # (a CRLF line: the `\r` is whitespace to every reader)
        same_length = size == len(data) or (size == len(data) - 1 and data.endswith(b"\r"))
        if (float_seen or not same_length) and not _keys_proof(data, encoded, float_seen):
            return None
        for name in self._stamp_fields:
            stamp = getattr(obj, name)
            if stamp is not msgspec.UNSET and self._stamp_ok(stamp) is None:
                return None
        ev = obj.event if self.wrapped else obj
        variant = self.variants[type(ev)]
        if variant.raw_numbers and not _numbers_ok(ev, variant.raw_numbers):
            return None
        if variant.has_item:
            item = ev.item
            free = self.items[type(item)].free_form
            if free and _free_form_doubtful(item, free, data):
                return None
        return obj


def _keys_proof(data: bytes | bytearray, encoded: bytes, floats: bool) -> bool:
    """The proof for a line the length proof cannot take (spacing, `\\u` escapes, floats in
    free-form values): no key repeats and no integer is a bare `-0`.

    Keys: every key the line holds is in `encoded` (the Structs refuse unknown keys, free-form
    values keep each distinct key once). A `:` in JSON text is either the one after a key or a
    character of a string, and a string's `:` is written literally unless escaped `\\u003a`.
    With no such escape in the line, the line's `:` count minus the decoded strings' colons is
    the number of keys it holds; `encoded` (which never escapes `:`) has the same strings, so the
    two counts are equal exactly when no key was dropped, i.e. none repeats.

    `-0`: it decodes as the integer 0 (serde_json reads a float). Without floats and without
    `\\u002d`/`\\u0030` escapes, a bare `-0` is the one `-0` the encoding lacks; with floats (whose
    re-encoding may add or drop one, `1e-5` -> `1e-05`) a token scan decides.
    """
    if data.count(b":") != encoded.count(b":"):
        return False
    # (a regex with a literal prefix scans ~2x faster than `in`/`count` here, measured)
    if _ESCAPED_PUNCT_OR_DIGIT(data) is not None:
        return False  # an escaped `:`, `-` or digit (no common writer): the exact path decides
    if _MINUS_ZERO(data) is None:
        return True
    if floats:
        return _BARE_MINUS_ZERO.search(data) is None
    return data.count(b"-0") == encoded.count(b"-0")


def _int_doubtful(value: int) -> bool:
    """orjson and serde_json read an integer past i64/u64 as a float (and refuse one past the
    double range); msgspec keeps it exact. Such a rare number takes the exact path."""
    return not _I64_MIN <= value <= _U64_MAX


def _free_form_doubtful(item: Any, free: tuple[str, ...], data: bytes | bytearray) -> bool:
    """True when a free-form value needs the exact path: an integer past 64 bits, or nesting
    that may pass serde_json's depth limit. Flat arguments (the usual case) cost one loop."""
    for name in free:
        value = getattr(item, name)
        kind = type(value)
        if kind is int:
            if _int_doubtful(value):
                return True
            continue
        if kind is dict:
            values: Any = value.values()
        elif kind is list:
            values = value
        else:
            continue
        for inner in values:
            kind = type(inner)
            if kind is int:
                if _int_doubtful(inner):
                    return True
            elif kind is dict or kind is list:
                # nested: bound the depth and look for long integers in the text, not the tree
                return (
                    data.count(b"[") + data.count(b"{") >= SCREEN_DEPTH_BRACKETS
                    or _LONG_DIGITS.search(data) is not None
                )
    return False


def _numbers_ok(ev: Any, names: tuple[str, ...]) -> bool:
    for name in names:
        value = getattr(ev, name)
        if value is msgspec.UNSET:
            continue
        text = bytes(value)
        if _NUMBER.fullmatch(text) is None or float(text) in (float("inf"), float("-inf")):
            return False
    return True


@functools.cache
def screen_for(shape: LineShape) -> LineScreen:
    """One compiled screen per line shape (built on first use: about 10 ms)."""
    return LineScreen(shape)
