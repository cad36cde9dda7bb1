"""Typed JSON: one dataclass definition gives encoding, decoding and the JSON Schema.

Every wire shape vtcode publishes (events, manifests, loop state, config, hook payloads) is a frozen
dataclass. This module turns such a class into plain JSON (omitting absent optionals, never writing
`null`), back from JSON with a JSON-pointer in every error, and into a draft 2020-12 schema. Because
all three come from the same class, the published schemas cannot drift from the code.

Supported field types: ``str``, ``int``, ``float``, ``bool``, ``Any`` (any JSON), ``X | None``,
``list[X]``, ``dict[str, X]``, ``Literal["a", ...]``, ``StrEnum`` subclasses (open ones, see
`OpenEnum`, decode unknown strings to their ``UNKNOWN`` member as upstream's catch-alls do),
nested dataclasses, tagged unions of dataclasses (each with a ``TYPE`` ClassVar, flattened next to a
tag key) and ``Annotated[...]`` with `IntRange`, `FloatRange`, `Pattern`, `Format`, `Doc`.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

__all__ = [
    "I32",
    "U8",
    "U32",
    "U64",
    "DecodeError",
    "Doc",
    "EncodeError",
    "FloatRange",
    "Format",
    "IntRange",
    "OpenEnum",
    "Pattern",
    "TaggedUnion",
    "decode",
    "decode_union",
    "encode",
]

T = TypeVar("T")

JSONValue = Any


@dataclasses.dataclass(frozen=True)
class IntRange:
    """Inclusive integer bounds (e.g. u64, i32, a 0..100 percentage).

    `reader_maximum`, when set, is the wider bound upstream's reader type accepts (a u8 field
    vtcode only ever fills with 0..100): the reader schema publishes it instead of `maximum`.
    """

    minimum: int | None = None
    maximum: int | None = None
    reader_maximum: int | None = None


@dataclasses.dataclass(frozen=True)
class FloatRange:
    """Inclusive bounds of a float (a price is >= 0, a fraction is 0..1); a bounded float must
    also be finite. Decoding, the generated schemas (so `config check`) and the CLI options that
    set the same value (`vtcode.config.tomlbounds`) all read the bounds from here."""

    minimum: float | None = None
    maximum: float | None = None


@dataclasses.dataclass(frozen=True)
class Pattern:
    """A regular expression a string must match (JSON Schema `pattern`)."""

    regex: str


@dataclasses.dataclass(frozen=True)
class Format:
    """A JSON Schema `format` such as `date-time` or `uuid`."""

    name: str


@dataclasses.dataclass(frozen=True)
class Doc:
    """A description for the schema."""

    text: str


U8 = typing.Annotated[int, IntRange(0, 255)]
U32 = typing.Annotated[int, IntRange(0, 2**32 - 1)]
U64 = typing.Annotated[int, IntRange(0, 2**64 - 1)]
I32 = typing.Annotated[int, IntRange(-(2**31), 2**31 - 1)]


class OpenEnum(enum.StrEnum):
    """A StrEnum with an upstream `#[serde(other)]` catch-all: unknown strings read as UNKNOWN."""

    @classmethod
    def known_values(cls) -> list[str]:
        return [m.value for m in cls if m.name != "UNKNOWN"]


class TaggedUnion:
    """Describes an internally tagged union: ``{tag: TYPE, ...fields of the variant}``."""

    def __init__(
        self,
        name: str,
        tag: str,
        variants: list[type[Any]],
        unknown: type[Any] | None = None,
        *,
        flattened: bool = False,
    ) -> None:
        self.name = name
        self.flattened = flattened  # variants sit next to the parent's fields (closed there)
        self.tag = tag
        self.variants = variants
        self.by_tag: dict[str, type[Any]] = {v.TYPE: v for v in variants}
        self.unknown = unknown


class EncodeError(ValueError):
    """A value cannot be written as JSON (NaN, infinity, a non-string key, ...)."""


def _finite(v: float) -> float:
    if v != v or v in (float("inf"), float("-inf")):
        raise EncodeError(f"{v!r} is not representable in JSON")
    return v


class DecodeError(ValueError):
    """A JSON value does not have the shape of the target type; `pointer` says where."""

    def __init__(self, pointer: str, message: str) -> None:
        super().__init__(f"{pointer or '/'}: {message}")
        self.pointer = pointer
        self.reason = message


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


# --------------------------------------------------------------------------------------------
# Type introspection


@dataclasses.dataclass(frozen=True)
class FieldInfo:
    name: str
    tp: Any
    meta: tuple[Any, ...]
    optional: bool  # `X | None`: omitted when None (unless nullable)
    nullable: bool  # `X | None` written as `null` (Rust `Option` without skip_serializing_if)
    has_default: bool
    read_default: bool  # serde(default): always written, but may be absent on read
    doc: str | None


def strip_annotated(tp: Any) -> tuple[Any, tuple[Any, ...]]:
    meta: tuple[Any, ...] = ()
    while get_origin(tp) is typing.Annotated:
        args = get_args(tp)
        tp, meta = args[0], meta + tuple(args[1:])
    return tp, meta


def split_optional(tp: Any) -> tuple[Any, bool]:
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) != len(get_args(tp)):
            return (args[0] if len(args) == 1 else Union[tuple(args)]), True  # noqa: UP007
    return tp, False


_FIELDS_CACHE: dict[type[Any], tuple[FieldInfo, ...]] = {}
_ENCODER_CACHE: dict[type[Any], Callable[[Any], dict[str, Any]]] = {}


def fields_of(cls: type[Any]) -> tuple[FieldInfo, ...]:
    cached = _FIELDS_CACHE.get(cls)
    if cached is None:
        cached = _FIELDS_CACHE[cls] = _compute_fields(cls)
    return cached


def _compute_fields(cls: type[Any]) -> tuple[FieldInfo, ...]:
    hints = typing.get_type_hints(cls, include_extras=True)
    out: list[FieldInfo] = []
    for f in dataclasses.fields(cls):
        tp, meta = strip_annotated(hints[f.name])
        tp, optional = split_optional(tp)
        tp, meta2 = strip_annotated(tp)
        meta = meta + meta2
        has_default = (
            f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        )
        doc = next((m.text for m in meta if isinstance(m, Doc)), None) or f.metadata.get("doc")
        nullable = bool(f.metadata.get("nullable", False))
        out.append(
            FieldInfo(
                name=f.metadata.get("json_name", f.name),
                tp=tp,
                meta=meta,
                optional=optional and not nullable,
                nullable=nullable,
                has_default=has_default,
                read_default=bool(f.metadata.get("read_default", False)),
                doc=doc,
            )
        )
    return tuple(out)


def union_in(meta: tuple[Any, ...]) -> TaggedUnion | None:
    return next((m for m in meta if isinstance(m, TaggedUnion)), None)


# --------------------------------------------------------------------------------------------
# Encoding


def encode(value: Any) -> JSONValue:
    """Turn a dataclass (or a structure of them) into plain JSON values, omitting None optionals."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        enc = _ENCODER_CACHE.get(cls)
        if enc is None:
            enc = _ENCODER_CACHE[cls] = _encoder_for(cls)
        return enc(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise EncodeError(f"object key {k!r} is not a string")
            out[k] = encode(v)
        return out
    if isinstance(value, float):
        return _finite(value)
    return value


def _encoder_for(cls: type[Any]) -> Callable[[Any], dict[str, Any]]:
    tag_key: str | None = getattr(cls, "TAG_KEY", None)
    tag_value: str | None = getattr(cls, "TYPE", None)
    plan: list[tuple[str, str, bool, bool]] = []
    for fi, f in zip(fields_of(cls), dataclasses.fields(cls), strict=True):
        simple = fi.tp in (str, int, float, bool) or (
            isinstance(fi.tp, type) and issubclass(fi.tp, enum.StrEnum)
        )
        plan.append((f.name, fi.name, fi.optional, simple))
    flatten = getattr(cls, "__flatten__", None)  # e.g. ThreadItem.details

    def enc(obj: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if tag_key is not None and tag_value is not None:
            out[tag_key] = tag_value
        for attr, key, optional, simple in plan:
            v = getattr(obj, attr)
            if v is None and optional:
                continue
            if attr == flatten:
                out.update(encode(v))
                continue
            if simple:
                if isinstance(v, enum.Enum):
                    v = v.value
                elif type(v) is float:
                    _finite(v)
                out[key] = v
            else:
                out[key] = encode(v)
        return out

    return enc


# --------------------------------------------------------------------------------------------
# Decoding


def decode(cls: type[T], data: Any, pointer: str = "") -> T:
    """Build `cls` from JSON data, raising `DecodeError` with a JSON pointer on any mismatch."""
    return typing.cast(T, _decode_value(cls, (), data, pointer))


def decode_union(union: TaggedUnion, data: Any, pointer: str = "") -> Any:
    """Decode one variant of a tagged union (or its unknown catch-all)."""
    return _decode_union(union, data, pointer)


def _type_name(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def _decode_value(tp: Any, meta: tuple[Any, ...], v: Any, ptr: str) -> Any:
    tp, more = strip_annotated(tp)
    meta = meta + more
    inner, optional = split_optional(tp)
    if optional:
        return None if v is None else _decode_value(inner, meta, v, ptr)
    union = union_in(meta)
    if union is not None:
        return _decode_union(union, v, ptr)
    if tp is Any:
        return v
    if tp is str:
        if not isinstance(v, str):
            raise DecodeError(ptr, f"expected a string, got {_type_name(v)}")
        return v
    if tp is bool:
        if not isinstance(v, bool):
            raise DecodeError(ptr, f"expected a boolean, got {_type_name(v)}")
        return v
    if tp is int:
        if isinstance(v, bool) or not isinstance(v, int):
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            else:
                raise DecodeError(ptr, f"expected an integer, got {_type_name(v)}")
        for m in meta:
            if isinstance(m, IntRange):
                if m.minimum is not None and v < m.minimum:
                    raise DecodeError(ptr, f"{v} is below the minimum {m.minimum}")
                if m.maximum is not None and v > m.maximum:
                    raise DecodeError(ptr, f"{v} is above the maximum {m.maximum}")
        return v
    if tp is float:
        if isinstance(v, bool) or not isinstance(v, int | float):
            raise DecodeError(ptr, f"expected a number, got {_type_name(v)}")
        for m in meta:
            if isinstance(m, FloatRange):
                if v != v or v in (float("inf"), float("-inf")):
                    raise DecodeError(ptr, f"expected a finite number, got {v}")
                if m.minimum is not None and v < m.minimum:
                    raise DecodeError(ptr, f"{v} is below the minimum {m.minimum:g}")
                if m.maximum is not None and v > m.maximum:
                    raise DecodeError(ptr, f"{v} is above the maximum {m.maximum:g}")
        return v
    origin = get_origin(tp)
    if origin is Literal:
        if v not in get_args(tp):
            raise DecodeError(ptr, f"expected one of {list(get_args(tp))!r}, got {v!r}")
        return v
    if origin is list:
        if not isinstance(v, list):
            raise DecodeError(ptr, f"expected an array, got {_type_name(v)}")
        (item_tp,) = get_args(tp)
        return [_decode_value(item_tp, (), x, f"{ptr}/{i}") for i, x in enumerate(v)]
    if origin is dict:
        if not isinstance(v, dict):
            raise DecodeError(ptr, f"expected an object, got {_type_name(v)}")
        _, val_tp = get_args(tp)
        return {k: _decode_value(val_tp, (), x, f"{ptr}/{_escape(k)}") for k, x in v.items()}
    if isinstance(tp, type) and issubclass(tp, enum.StrEnum):
        if not isinstance(v, str):
            raise DecodeError(ptr, f"expected a string, got {_type_name(v)}")
        try:
            return tp(v)
        except ValueError:
            if issubclass(tp, OpenEnum):
                return tp["UNKNOWN"]
            allowed = ", ".join(m.value for m in tp)
            raise DecodeError(ptr, f"unknown value {v!r} (expected one of: {allowed})") from None
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _decode_dataclass(tp, v, ptr)
    raise TypeError(f"jsontypes cannot decode type {tp!r}")  # a programming error


def _decode_union(union: TaggedUnion, v: Any, ptr: str) -> Any:
    if not isinstance(v, dict):
        raise DecodeError(ptr, f"expected an object, got {_type_name(v)}")
    tag = v.get(union.tag)
    if not isinstance(tag, str):
        raise DecodeError(f"{ptr}/{union.tag}", f"missing or non-string {union.tag!r} tag")
    cls = union.by_tag.get(tag)
    if cls is None:
        if union.unknown is not None:
            return union.unknown(type=tag, raw=dict(v))
        known = ", ".join(sorted(union.by_tag))
        raise DecodeError(f"{ptr}/{union.tag}", f"unknown {union.tag} {tag!r} (known: {known})")
    return _decode_dataclass(cls, v, ptr)


def _decode_dataclass(cls: type[Any], v: Any, ptr: str) -> Any:
    if not isinstance(v, dict):
        raise DecodeError(ptr, f"expected an object, got {_type_name(v)}")
    kwargs: dict[str, Any] = {}
    flatten = getattr(cls, "__flatten__", None)
    for fi, f in zip(fields_of(cls), dataclasses.fields(cls), strict=True):
        if f.name == flatten:
            kwargs[f.name] = _decode_value(fi.tp, fi.meta, v, ptr)
            continue
        if fi.name not in v or (v[fi.name] is None and (fi.optional or fi.nullable)):
            if fi.optional or fi.has_default or fi.nullable:
                continue
            raise DecodeError(ptr, f"missing required field {fi.name!r}")
        kwargs[f.name] = _decode_value(fi.tp, fi.meta, v[fi.name], f"{ptr}/{_escape(fi.name)}")
    return cls(**kwargs)
