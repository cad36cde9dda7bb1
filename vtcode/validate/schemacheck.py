"""Check one parsed line against the published schemas: fast when valid, precise when not.

Hot path: the line's event type picks a precompiled `jsonschema-rs` validator for exactly that
variant of the writer schema (no 17-way `if/then` per line). A line that passes it is valid under
both schemas, since everything the writer schema accepts the reader schema accepts too. Only a
line that fails it pays for the full reader check and, if needed, the reference `jsonschema`
validator, whose `iter_errors` + `best_match` explain the failure with a JSON pointer.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from vtcode import EVENT_SCHEMA_VERSION
from vtcode import schemas as _schemas
from vtcode.lineshape import LineShape
from vtcode.validate.report import ProblemCode

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

__all__ = [
    "Finding",
    "SchemaChecker",
    "checker_for",
    "detect_shape",
    "json_text",
    "json_type",
    "pointer",
    "version_finding",
]

_MAX_TEXT = 160
_SEMVER = re.compile(r"^([0-9]+)\.([0-9]+)\.([0-9]+)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
_KNOWN = _SEMVER.match(EVENT_SCHEMA_VERSION)
assert _KNOWN is not None
_KNOWN_MAJOR_MINOR = _KNOWN.group(1, 2)


@dataclass(frozen=True, slots=True)
class Finding:
    """A schema-level problem on one line; `reader_ok` = only the strict writer schema objects."""

    code: ProblemCode
    pointer: str
    message: str
    value: Any = None
    reader_ok: bool = False


def pointer(path: Iterable[Any]) -> str:
    """RFC 6901 JSON pointer of a path of keys and indexes."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _clip(text: str, limit: int = _MAX_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _scalar(value: Any) -> Any:
    """The value worth echoing in a report: scalars only, long strings clipped."""
    if isinstance(value, str):
        return _clip(value)
    if value is None or isinstance(value, bool | int | float):
        return value
    return None


def json_text(value: Any) -> str:
    """A value from the log as JSON text for a message (`null`, not Python's `None`), clipped."""
    try:
        text = orjson.dumps(shallow(value)).decode()
    except (TypeError, orjson.JSONEncodeError):
        text = str(value)
    return _clip(text, 80)


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


_SHALLOW_DEPTH = 32  # deeper than any schema looks (the deepest keyword is at depth 6)
_DEEP = "<nested too deep to show>"


def shallow(value: Any, depth: int = _SHALLOW_DEPTH) -> Any:
    """`value` with containers below `depth` replaced by a placeholder string.

    The explaining validators build messages with `repr` and recurse per level; a 1000-level
    value (orjson accepts 1024) would overflow them. No schema constrains anything that deep
    (it is all `Any` there), so every verdict is unchanged.
    """
    if isinstance(value, dict):
        if depth <= 0:
            return _DEEP
        return {k: shallow(v, depth - 1) for k, v in value.items()}
    if isinstance(value, list):
        if depth <= 0:
            return _DEEP
        return [shallow(v, depth - 1) for v in value]
    return value


def _value(e: ValidationError) -> Any:
    """The keyword's value in the schema (typed loosely by the stubs)."""
    value: Any = e.validator_value
    return value


def _props(e: ValidationError) -> Any:
    """The `properties` next to the failing keyword."""
    schema: Any = e.schema
    return schema.get("properties", {}) if isinstance(schema, dict) else {}


def detect_shape(obj: dict[str, Any]) -> LineShape:
    """Auto-detection from the first parsed line: an envelope key means wrapped, else raw."""
    return LineShape.WRAPPED if "schema_version" in obj or "event" in obj else LineShape.RAW


def _branches(defs: dict[str, Any], union: str) -> dict[str, str]:
    """tag value -> definition name, read from a generated tagged union's `if/then` branches."""
    out: dict[str, str] = {}
    for branch in defs[union]["allOf"]:
        tag = branch["if"]["properties"]["type"]["const"]
        out[tag] = branch["then"]["$ref"].rsplit("/", 1)[1]
    return out


def version_finding(version: Any, *, strict: bool) -> Finding | None:
    """Judge an envelope's `schema_version` (None when fine).

    0.11.x is this contract (patch releases do not change it); another well-formed version is a
    warning, since upstream never checks it on read. A malformed one fails the schema itself.
    """
    if not isinstance(version, str) or version == EVENT_SCHEMA_VERSION:
        return None
    m = _SEMVER.match(version)
    if m is None:
        return None
    if m.group(1, 2) == _KNOWN_MAJOR_MINOR and not strict:
        return None
    return Finding(
        ProblemCode.SCHEMA_VERSION,
        "/schema_version",
        f"schema_version {version!r} is not {EVENT_SCHEMA_VERSION}; fields may differ",
        version,
        reader_ok=True,
    )


class SchemaChecker:
    """Schema checks for one line shape (raw ThreadEvent or versioned envelope)."""

    def __init__(self, shape: LineShape) -> None:
        self.shape = shape
        wrapped = shape is LineShape.WRAPPED
        self.writer_name = "versioned-thread-event" if wrapped else "thread-event"
        self.reader_name = self.writer_name + "-reader"
        self._event_path: tuple[str, ...] = ("event",) if wrapped else ()
        writer = _schemas.load(self.writer_name)
        defs = writer["$defs"]
        self._variants = _branches(defs, "ThreadEvent")
        item_base = set(defs["ThreadItem"]["properties"])
        self._item_keys = {
            tag: frozenset(item_base | set(defs[name]["properties"]))
            for tag, name in _branches(defs, "ThreadItemDetails").items()
        }
        self.fast_by_type: dict[str, Callable[[Any], bool]] = {
            tag: self._variant_validator(writer, name) for tag, name in self._variants.items()
        }

    def _variant_validator(self, writer: dict[str, Any], def_name: str) -> Callable[[Any], bool]:
        """`is_valid` of the writer schema narrowed to one event variant."""
        import jsonschema_rs

        ref = {"$ref": f"#/$defs/{def_name}"}
        if self.shape is LineShape.WRAPPED:
            narrowed = {**writer, "properties": {**writer["properties"], "event": ref}}
        else:
            narrowed = {k: v for k, v in writer.items() if k != "$ref"} | ref
        validator = jsonschema_rs.validator_for(narrowed, validate_formats=True)
        is_valid: Callable[[Any], bool] = validator.is_valid
        return is_valid

    # ------------------------------------------------------------------ slow path

    def _item_allowed(self, inst: Any) -> frozenset[str]:
        """Keys a closed item of this type may have (its variant's fields plus `id`)."""
        tag = inst.get("type") if isinstance(inst, dict) else None
        return self._item_keys.get(tag, frozenset()) if isinstance(tag, str) else frozenset()

    def reader_valid(self, obj: Any) -> bool:
        try:
            ok: bool = _schemas.fast_validator(self.reader_name).is_valid(obj)
        except ValueError:  # jsonschema-rs refuses very deep values; the reference does not
            ok = _schemas.reference_validator(self.reader_name).is_valid(obj)
        return ok

    def explain(self, obj: Any, *, strict: bool) -> list[Finding]:
        """Why `obj` failed the fast check: reader-tolerated findings, or the real error.

        A line the reader schema rejects gets one headline finding (best_match); what only the
        writer schema rejects is listed finding by finding (each one is a warning by default).
        """
        obj = shallow(obj)
        if not isinstance(obj, dict):
            return [
                Finding(
                    ProblemCode.WRONG_TYPE,
                    "",
                    f"a line must be a JSON object, not {json_type(obj)}",
                )
            ]
        mismatch = self._shape_mismatch(obj)
        if mismatch is not None:
            return [mismatch]
        if self.reader_valid(obj):
            return self._writer_only(obj)
        name = self.writer_name if strict else self.reader_name
        errors = list(_schemas.reference_validator(name).iter_errors(obj))
        if not errors:  # the two libraries disagree: say so rather than guess
            return [
                Finding(
                    ProblemCode.SCHEMA_VIOLATION,
                    "",
                    f"rejected by jsonschema-rs but not by jsonschema ({name})",
                )
            ]
        noisy = [e for e in errors if e.validator == "unevaluatedProperties"]
        if noisy and len(noisy) < len(errors):
            errors = [e for e in errors if e.validator != "unevaluatedProperties"]
        from jsonschema.exceptions import best_match

        best = best_match(errors)
        assert best is not None
        finding = self._describe(best)
        if len(errors) > 1:
            more = len(errors) - 1
            message = f"{finding.message} (+{more} more schema error{'s' if more > 1 else ''})"
            finding = Finding(finding.code, finding.pointer, message, finding.value)
        return [finding]

    def _shape_mismatch(self, obj: dict[str, Any]) -> Finding | None:
        envelope = "schema_version" in obj or "event" in obj
        if self.shape is LineShape.WRAPPED and not envelope and "type" in obj:
            return Finding(
                ProblemCode.SHAPE_MISMATCH,
                "",
                "a raw ThreadEvent line in a wrapped log (expected {schema_version, event})",
                _scalar(obj.get("type")),
            )
        if self.shape is LineShape.RAW and envelope and "type" not in obj:
            return Finding(
                ProblemCode.SHAPE_MISMATCH,
                "",
                "a wrapped {schema_version, event} line in a raw ThreadEvent log",
            )
        return None

    def _writer_only(self, obj: dict[str, Any]) -> list[Finding]:
        """What the strict writer schema rejects in a line the reader schema accepts."""
        out: list[Finding] = []
        seen: set[tuple[ProblemCode, str]] = set()

        def add(code: ProblemCode, ptr: str, message: str, value: Any = None) -> None:
            if (code, ptr) not in seen:
                seen.add((code, ptr))
                out.append(Finding(code, ptr, message, value, reader_ok=True))

        for e in _schemas.reference_validator(self.writer_name).iter_errors(obj):
            path = list(e.absolute_path)
            ptr = pointer(path)
            if e.validator == "const" and path == ["schema_version"]:
                continue  # judged by version_finding
            if e.validator == "enum" and tuple(path) == (*self._event_path, "type"):
                add(
                    ProblemCode.UNKNOWN_EVENT_TYPE,
                    ptr,
                    f"unknown event type {_clip(str(e.instance))!r} (upstream reads it as Unknown)",
                    _scalar(e.instance),
                )
            elif e.validator == "enum":
                add(
                    ProblemCode.UNKNOWN_ENUM_VALUE,
                    ptr,
                    f"{path[-1]!s} {_clip(str(e.instance))!r} is not a known value "
                    "(upstream reads it as `unknown`)",
                    _scalar(e.instance),
                )
            elif e.validator in ("additionalProperties", "unevaluatedProperties"):
                inst = e.instance if isinstance(e.instance, dict) else {}
                if e.validator == "additionalProperties":
                    allowed: frozenset[str] = frozenset(_props(e))
                else:
                    allowed = self._item_allowed(inst)
                for key in inst:
                    if key not in allowed:
                        add(
                            ProblemCode.EXTRA_FIELD,
                            pointer([*path, key]),
                            f"unknown field {_clip(key)!r} (readers ignore it)",
                            _clip(key),
                        )
            elif e.validator == "required":
                for key in _value(e):
                    if isinstance(e.instance, dict) and key not in e.instance:
                        add(
                            ProblemCode.MISSING_FIELD,
                            pointer([*path, key]),
                            f"field {key!r} is absent (readers default it; vtcode writes it)",
                            key,
                        )
            else:
                d = self._describe(e)
                add(d.code, d.pointer, d.message, d.value)
        return out

    def _describe(self, e: ValidationError) -> Finding:
        """One located, one-line Finding for a reference-validator error."""
        path = list(e.absolute_path)
        ptr = pointer(path)
        field = str(path[-1]) if path else "line"
        kw = e.validator
        inst = e.instance
        if kw == "type" and inst is None:
            return Finding(
                ProblemCode.NULL_VALUE,
                ptr,
                f"{field} is null; an absent optional field is omitted, never null",
            )
        if kw == "type":
            expected = _value(e)
            exp = " or ".join(expected) if isinstance(expected, list) else str(expected)
            return Finding(
                ProblemCode.WRONG_TYPE,
                ptr,
                f"{field} must be {'an' if exp[0] in 'aeiou' else 'a'} {exp}, "
                f"got {json_type(inst)}",
                _scalar(inst),
            )
        if kw == "required":
            missing = [k for k in _value(e) if isinstance(inst, dict) and k not in inst]
            key = missing[0] if missing else "?"
            return Finding(
                ProblemCode.MISSING_FIELD,
                pointer([*path, key]),
                f"missing required field {key!r}",
                key,
            )
        if kw in ("enum", "const") and path and path[-1] == "type" and not isinstance(inst, str):
            return Finding(
                ProblemCode.WRONG_TYPE, ptr, f"type must be a string, got {json_type(inst)}"
            )
        if kw in ("enum", "const"):
            if tuple(path) == (*self._event_path, "type"):
                return Finding(
                    ProblemCode.UNKNOWN_EVENT_TYPE,
                    ptr,
                    f"unknown event type {_clip(str(inst))!r}",
                    _scalar(inst),
                )
            if tuple(path) == (*self._event_path, "item", "type"):
                return Finding(
                    ProblemCode.UNKNOWN_ITEM_TYPE,
                    ptr,
                    f"unknown item type {_clip(str(inst))!r} (upstream has no catch-all for items)",
                    _scalar(inst),
                )
            allowed = _value(e) if kw == "enum" else [_value(e)]
            return Finding(
                ProblemCode.BAD_VALUE,
                ptr,
                _clip(
                    f"{field} {json_text(inst)} is not one of {', '.join(map(str, allowed))}", 240
                ),
                _scalar(inst),
            )
        if kw in ("additionalProperties", "unevaluatedProperties"):
            inst_keys = list(inst) if isinstance(inst, dict) else []
            if kw == "additionalProperties":
                allowed_keys: Iterable[str] = _props(e)
            else:
                allowed_keys = self._item_allowed(inst)
            extra = next((k for k in inst_keys if k not in allowed_keys), "?")
            return Finding(
                ProblemCode.EXTRA_FIELD,
                pointer([*path, extra]),
                f"unknown field {_clip(extra)!r}",
                _clip(extra),
            )
        if kw in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            return Finding(ProblemCode.OUT_OF_RANGE, ptr, _clip(e.message), _scalar(inst))
        if kw == "pattern" and path == ["schema_version"]:
            return Finding(
                ProblemCode.BAD_FORMAT,
                ptr,
                f"schema_version {_clip(str(inst))!r} is not a semantic version such as "
                f"{EVENT_SCHEMA_VERSION}",
                _scalar(inst),
            )
        if kw in ("pattern", "format"):
            return Finding(ProblemCode.BAD_FORMAT, ptr, _clip(e.message), _scalar(inst))
        return Finding(ProblemCode.SCHEMA_VIOLATION, ptr, _clip(e.message), _scalar(inst))


@functools.cache
def checker_for(shape: LineShape) -> SchemaChecker:
    """One cached checker per line shape (building the variant validators costs ~1 ms)."""
    return SchemaChecker(shape)
