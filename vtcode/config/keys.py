"""The tree of known vtcode.toml keys, read from the generated `vtcode-toml` JSON Schema.

The schema is generated from `vtcode/config/model.py`, so walking it (rather than the dataclasses
a second time) keeps one definition of "which keys exist, of which type". Everything that needs to
know the shape of a key uses this: unknown-key detection and did-you-mean, `-c`/`config set` value
typing, `config get`, the starter file and the vtcode.toml(5) man page.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import tomllib
from collections.abc import Iterator, Mapping
from typing import Any, Literal

from vtcode import schemas
from vtcode.config.tomlscan import KeyPath, format_key

Kind = Literal["table", "map", "array", "scalar"]

SCHEMA_NAME = "vtcode-toml"

# Upstream spellings that still mean a known key (reference §7): read as the new key, warned.
ALIASES: dict[KeyPath, str] = {
    ("hooks", "lifecycle", "task_completed"): "stop",
    ("hooks", "lifecycle", "task_completion"): "stop",
}


@dataclasses.dataclass(frozen=True, slots=True)
class KeySpec:
    """What one key accepts: a table of named keys, a map (any names), an array or a scalar."""

    kind: Kind
    json_type: str | None = None  # scalars: "string" | "integer" | "number" | "boolean"
    enum: tuple[str, ...] | None = None
    minimum: float | None = None  # an int for an integer key
    maximum: float | None = None
    description: str | None = None  # the key's own description (`Doc(...)` in the model)
    type_doc: str | None = None  # the docstring of its table or enum type
    type_name: str | None = None  # the $defs name of its type (e.g. "HookMatcher")
    children: Mapping[str, KeySpec] = dataclasses.field(default_factory=dict)
    item: KeySpec | None = None  # the value of a map entry or an array element
    required: frozenset[str] = frozenset()

    @property
    def is_string(self) -> bool:
        return self.kind == "scalar" and (self.json_type == "string" or self.enum is not None)

    def type_text(self) -> str:
        """A short human description of the accepted type (man page, errors)."""
        if self.kind == "table":
            return "table"
        if self.kind == "map":
            assert self.item is not None
            inner = self.item.type_text()
            if self.item.kind == "table":
                inner = f"table ({self.item.type_name})"
            return f"table of NAME = {inner}"
        if self.kind == "array":
            assert self.item is not None
            if self.item.kind == "table":
                return f"array of tables ({self.item.type_name})"
            return f"array of {self.item.type_text()}s"
        if self.enum is not None:
            return "string: " + " | ".join(self.enum)
        text = self.json_type or "any value"
        if self.json_type == "number":
            text = "float"
        if self.minimum is not None or self.maximum is not None:
            lo = "" if self.minimum is None else str(self.minimum)
            hi = "" if self.maximum is None else _short_int(self.maximum)
            text += f" ({lo}..{hi})"
        return text


def _short_int(n: float) -> str:
    for bits in (31, 32, 40, 63, 64):
        if n == 2**bits - 1:
            return f"2^{bits}-1"
        if n == 2**bits:
            return f"2^{bits}"
    return str(n)


def _build(node: Mapping[str, Any], defs: Mapping[str, Any]) -> KeySpec:
    own = node.get("description")  # the field's `Doc(...)`
    type_name: str | None = None
    type_doc: str | None = None
    if "$ref" in node:
        type_name = str(node["$ref"]).rsplit("/", 1)[-1]
        target = defs[type_name]
        type_doc = target.get("description")  # the class or enum docstring
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    docs: dict[str, Any] = {"description": own, "type_doc": type_doc, "type_name": type_name}
    if "enum" in node:
        return KeySpec("scalar", json_type="string", enum=tuple(node["enum"]), **docs)
    jtype = node.get("type")
    if jtype == "object" and "properties" in node:
        children = {name: _build(sub, defs) for name, sub in dict(node["properties"]).items()}
        return KeySpec(
            "table", children=children, required=frozenset(node.get("required", ())), **docs
        )
    if jtype == "object":
        return KeySpec("map", item=_build(node.get("additionalProperties", {}), defs), **docs)
    if jtype == "array":
        return KeySpec("array", item=_build(node["items"], defs), **docs)
    return KeySpec(
        "scalar", json_type=jtype, minimum=node.get("minimum"), maximum=node.get("maximum"), **docs
    )


@functools.cache
def root() -> KeySpec:
    """The spec of the whole document (cached; built from the shipped schema)."""
    schema = schemas.load(SCHEMA_NAME)
    return _build(schema, schema["$defs"])


def find(path: KeyPath) -> KeySpec | None:
    """The spec at `path` (map names and array indexes are followed), or None if unknown."""
    spec = root()
    for part in path:
        if spec.kind == "table" and isinstance(part, str):
            child = spec.children.get(part)
            if child is None:
                return None
            spec = child
        elif (spec.kind == "map" and isinstance(part, str)) or (
            spec.kind == "array" and isinstance(part, int)
        ):
            assert spec.item is not None
            spec = spec.item
        else:
            return None
    return spec


def is_dynamic(path: KeyPath) -> bool:
    """True when `path` goes through a map name or an array element (so it has no default)."""
    spec = root()
    for part in path:
        if spec.kind in ("map", "array"):
            return True
        nxt = spec.children.get(part) if isinstance(part, str) else None
        if nxt is None:
            return False
        spec = nxt
    return False


def iter_specs(
    spec: KeySpec | None = None, path: KeyPath = ()
) -> Iterator[tuple[KeyPath, KeySpec]]:
    """Every named key (depth first, schema order); maps and arrays are not entered."""
    spec = spec or root()
    for name, child in spec.children.items():
        sub = (*path, name)
        yield sub, child
        if child.kind == "table":
            yield from iter_specs(child, sub)


def _all_named() -> list[str]:
    return [format_key(p) for p, _ in iter_specs()]


def suggest(path: KeyPath) -> str | None:
    """The closest known key to an unknown one: a sibling first, then the same name elsewhere."""
    alias = ALIASES.get(path)
    if alias is not None:
        return format_key((*path[:-1], alias))
    if not path or not isinstance(path[-1], str):
        return None
    name = path[-1]
    parent = find(path[:-1])
    if parent is not None and parent.kind == "table":
        close = difflib.get_close_matches(name, list(parent.children), n=1, cutoff=0.6)
        if close:
            return format_key((*path[:-1], close[0]))
    wanted = format_key(path)
    best: tuple[float, str] | None = None
    for p, _ in iter_specs():
        last = p[-1]
        if not isinstance(last, str):
            continue
        tail = difflib.SequenceMatcher(None, name, last).ratio()
        if tail < 0.8:
            continue
        score = tail + 0.1 * difflib.SequenceMatcher(None, wanted, format_key(p)).ratio()
        if best is None or score > best[0]:
            best = (score, format_key(p))
    return best[1] if best else None


def unknown_keys(
    data: Mapping[str, Any], spec: KeySpec | None = None, path: KeyPath = ()
) -> list[KeyPath]:
    """Key paths in `data` that the schema does not know (wrong-typed values are left to it)."""
    spec = spec or root()
    out: list[KeyPath] = []
    for name, value in data.items():
        sub = (*path, name)
        if spec.kind == "table":
            child = spec.children.get(name)
        else:
            child = spec.item
        if child is None:
            out.append(sub)
            continue
        out.extend(_unknown_in_value(value, child, sub))
    return out


def _unknown_in_value(value: Any, spec: KeySpec, path: KeyPath) -> list[KeyPath]:
    if isinstance(value, dict) and spec.kind in ("table", "map"):
        return unknown_keys(value, spec, path)
    if isinstance(value, list) and spec.kind == "array" and spec.item is not None:
        out: list[KeyPath] = []
        for i, v in enumerate(value):
            out.extend(_unknown_in_value(v, spec.item, (*path, i)))
        return out
    return []


def coerce(value: Any, spec: KeySpec | None) -> Any:
    """Integers where a float is expected become floats (`max_budget_usd = 5` is 5.0)."""
    if spec is None:
        return value
    if spec.kind == "scalar":
        if spec.json_type == "number" and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        return value
    if isinstance(value, dict) and spec.kind == "table":
        return {k: coerce(v, spec.children.get(k)) for k, v in value.items()}
    if isinstance(value, dict) and spec.kind == "map":
        return {k: coerce(v, spec.item) for k, v in value.items()}
    if isinstance(value, list) and spec.kind == "array":
        return [coerce(v, spec.item) for v in value]
    return value


def parse_value(text: str, spec: KeySpec | None) -> Any:
    """A command-line VALUE: TOML when it parses as one value, else the text as a string.

    Typed by the target key: a string key keeps the text as typed (`-c agent.model=1.5` is
    "1.5"), a float key turns an integer into a float.
    """
    value: Any
    try:
        parsed = tomllib.loads(f"v = {text}")
    except tomllib.TOMLDecodeError:
        value = text
    else:
        value = parsed["v"] if list(parsed) == ["v"] else text
    if spec is not None and spec.is_string and not isinstance(value, str):
        value = text
    return coerce(value, spec)


def non_finite(value: Any, path: KeyPath = ()) -> Iterator[KeyPath]:
    """Paths of `inf`/`nan` floats (TOML allows them; JSON, and so the config, does not)."""
    if isinstance(value, float) and not math.isfinite(value):
        yield path
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from non_finite(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from non_finite(v, (*path, i))
