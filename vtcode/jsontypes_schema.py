"""JSON Schema (draft 2020-12) generation from the typed dataclasses of `vtcode.jsontypes`.

The same field metadata (IntRange, FloatRange, Pattern, Format, Doc, OpenEnum, TaggedUnion) that
drives encoding and decoding gives the published schemas (`vtcode.schemagen` writes `schemas/`),
in two modes: WRITER (what vtcode emits, closed) and READER (what upstream readers tolerate, open).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import Any, Literal, get_args, get_origin

from vtcode.jsontypes import (
    FloatRange,
    Format,
    IntRange,
    OpenEnum,
    Pattern,
    TaggedUnion,
    fields_of,
    split_optional,
    strip_annotated,
    union_in,
)

__all__ = ["SchemaMode", "schema_for"]


class SchemaMode(enum.Enum):
    """`WRITER`: what vtcode emits (closed); `READER`: what upstream readers tolerate (open)."""

    WRITER = "writer"
    READER = "reader"


@dataclasses.dataclass
class _SchemaBuilder:
    mode: SchemaMode
    defaults_optional: bool
    defs: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def closed(self) -> bool:
        return self.mode is SchemaMode.WRITER

    def type_schema(self, tp: Any, meta: tuple[Any, ...] = ()) -> dict[str, Any]:
        tp, more = strip_annotated(tp)
        meta = meta + more
        inner, optional = split_optional(tp)
        if optional:
            return self.type_schema(inner, meta)
        out: dict[str, Any]
        union = union_in(meta)
        if union is not None:
            out = {"$ref": f"#/$defs/{self.union_def(union)}"}
        elif tp is Any:
            out = {}
        elif tp is str:
            out = {"type": "string"}
        elif tp is bool:
            out = {"type": "boolean"}
        elif tp is float:
            out = {"type": "number"}
            for m in meta:
                if isinstance(m, FloatRange):
                    if m.minimum is not None:
                        out["minimum"] = m.minimum
                    if m.maximum is not None:
                        out["maximum"] = m.maximum
        elif tp is int:
            out = {"type": "integer"}
            for m in meta:
                if isinstance(m, IntRange):
                    if m.minimum is not None:
                        out["minimum"] = m.minimum
                    if m.maximum is not None:
                        out["maximum"] = m.maximum
                    if m.reader_maximum is not None and not self.closed:
                        out["maximum"] = m.reader_maximum
        elif get_origin(tp) is Literal:
            vals = list(get_args(tp))
            out = {"const": vals[0]} if len(vals) == 1 else {"enum": vals}
        elif get_origin(tp) is list:
            out = {"type": "array", "items": self.type_schema(get_args(tp)[0])}
        elif get_origin(tp) is dict:
            out = {"type": "object", "additionalProperties": self.type_schema(get_args(tp)[1])}
        elif isinstance(tp, type) and issubclass(tp, enum.StrEnum):
            out = {"$ref": f"#/$defs/{self.enum_def(tp)}"}
        elif isinstance(tp, type) and dataclasses.is_dataclass(tp):
            out = {"$ref": f"#/$defs/{self.class_def(tp)}"}
        else:
            raise TypeError(f"jsontypes cannot describe type {tp!r}")
        for m in meta:
            if isinstance(m, Pattern):
                out["pattern"] = m.regex
            elif isinstance(m, Format):
                out["format"] = m.name
        return out

    def enum_def(self, tp: type[enum.StrEnum]) -> str:
        name = tp.__name__
        if name not in self.defs:
            doc = (tp.__doc__ or "").strip()
            if issubclass(tp, OpenEnum):
                known = tp.known_values()
                if self.closed:
                    self.defs[name] = {"enum": known}
                else:
                    # Upstream maps any other string to its `unknown` catch-all.
                    self.defs[name] = {"type": "string", "examples": known}
            else:
                self.defs[name] = {"enum": [m.value for m in tp]}
            if doc:
                self.defs[name] = {"description": doc.splitlines()[0], **self.defs[name]}
        return name

    def object_schema(
        self, cls: type[Any], tag: tuple[str, str] | None, *, closed_here: bool = True
    ) -> dict[str, Any]:
        props: dict[str, Any] = {}
        required: list[str] = []
        if tag is not None:
            props[tag[0]] = {"const": tag[1]}
            required.append(tag[0])
        flatten = getattr(cls, "__flatten__", None)
        all_of: list[Any] = []
        for fi, f in zip(fields_of(cls), dataclasses.fields(cls), strict=True):
            if f.name == flatten:
                all_of.append(self.type_schema(fi.tp, fi.meta))
                continue
            s = self.type_schema(fi.tp, fi.meta)
            if fi.doc:
                s = {"description": fi.doc, **s}
            props[fi.name] = s
            optional_here = fi.optional or (
                fi.has_default and (self.defaults_optional or (fi.read_default and not self.closed))
            )
            if fi.nullable:
                props[fi.name] = {"anyOf": [props[fi.name], {"type": "null"}]}
                optional_here = optional_here or not self.closed
            if not optional_here:
                required.append(fi.name)
        out: dict[str, Any] = {"type": "object", "properties": props}
        if required:
            out["required"] = required
        doc = (cls.__doc__ or "").strip()
        if doc and not doc.startswith(cls.__name__ + "("):
            out = {"description": doc.splitlines()[0], **out}
        if all_of:
            out["allOf"] = all_of
            if self.closed:
                # Properties of the flattened part count as evaluated for the closed check.
                out["unevaluatedProperties"] = False
        elif self.closed and closed_here:
            out["additionalProperties"] = False
        return out

    def class_def(self, cls: type[Any], *, closed_here: bool = True) -> str:
        name = cls.__name__
        if name not in self.defs:
            self.defs[name] = {}  # reserve against recursion
            tag = (cls.TAG_KEY, cls.TYPE) if getattr(cls, "TAG_KEY", None) else None
            self.defs[name] = self.object_schema(cls, tag, closed_here=closed_here)
        return name

    def union_def(self, union: TaggedUnion) -> str:
        name = union.name
        if name in self.defs:
            return name
        self.defs[name] = {}
        branches = []
        for v in union.variants:
            vname = self.class_def(v, closed_here=not union.flattened)
            branches.append(
                {
                    "if": {"properties": {union.tag: {"const": v.TYPE}}, "required": [union.tag]},
                    "then": {"$ref": f"#/$defs/{vname}"},
                }
            )
        known = list(union.by_tag)
        tag_schema: dict[str, Any]
        if self.closed or union.unknown is None:
            tag_schema = {"enum": known}
        else:
            tag_schema = {"type": "string"}
        self.defs[name] = {
            "type": "object",
            "required": [union.tag],
            "properties": {union.tag: tag_schema},
            "allOf": branches,
        }
        return name


def schema_for(
    root: type[Any] | TaggedUnion,
    *,
    schema_id: str,
    title: str,
    mode: SchemaMode = SchemaMode.WRITER,
    defaults_optional: bool = False,
    description: str | None = None,
    extra_defs: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Build a self-contained draft 2020-12 schema (all definitions under `$defs`) for `root`."""
    b = _SchemaBuilder(mode=mode, defaults_optional=defaults_optional)
    if isinstance(root, TaggedUnion):
        ref = {"$ref": f"#/$defs/{b.union_def(root)}"}
    else:
        ref = b.type_schema(root)
    out: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": schema_id,
        "title": title,
    }
    if description:
        out["description"] = description
    out.update(ref)
    defs = dict(sorted(b.defs.items()))
    if extra_defs:
        defs.update(extra_defs)
    out["$defs"] = defs
    return out
