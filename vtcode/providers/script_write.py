"""Writing replay scripts: what `--record` turns a real provider's responses into.

The reading side (`vtcode.providers.script`) is the format; this module writes the same
dataclasses back as TOML a person can read and edit (inline tables for arguments, literal
strings where safe), and `parse_script(dump_script(s)) == s` for every script.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import tomlkit

from vtcode.jsontypes import encode
from vtcode.outpath import check_output, write_output
from vtcode.providers.script import ReplayScript, ScriptToolCall, compact_json, parse_script

__all__ = ["dump_script", "tool_call_for_arguments", "write_script"]


def _toml_safe(value: Any) -> bool:
    """Whether a JSON value survives TOML (no nulls; TOML has no null)."""
    if value is None:
        return False
    if isinstance(value, dict):
        return all(isinstance(k, str) and _toml_safe(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_toml_safe(v) for v in value)
    return isinstance(value, str | int | float | bool)


def tool_call_for_arguments(name: str, raw: str, call_id: str | None) -> ScriptToolCall:
    """A script tool call that replays `raw` byte for byte: a table when that is exact."""
    import orjson

    try:
        parsed = orjson.loads(raw)
    except orjson.JSONDecodeError:
        parsed = None
    if isinstance(parsed, dict) and _toml_safe(parsed) and compact_json(parsed) == raw:
        return ScriptToolCall(name=name, arguments=parsed, id=call_id)
    return ScriptToolCall(name=name, arguments_json=raw, id=call_id)


def _without_defaults(obj: Any) -> dict[str, Any]:
    """`encode(obj)` minus fields equal to their defaults (recorded scripts stay short)."""
    data: dict[str, Any] = encode(obj)
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            continue
        if value == default:
            data.pop(f.name, None)
    return data


def _inline(value: Any) -> Any:
    """A TOML item that renders on one line (inline tables, arrays), recursively."""

    if isinstance(value, dict):
        tbl = tomlkit.inline_table()
        for k, v in value.items():
            tbl.append(k, _inline(v))
        return tbl
    if isinstance(value, list):
        arr = tomlkit.array()
        for v in value:
            arr.append(_inline(v))
        return arr
    return tomlkit.item(value)


def _table(data: dict[str, Any]) -> Any:

    t = tomlkit.table()
    for k, v in data.items():
        t.add(k, _toml_string(v) if isinstance(v, str) else _inline(v))
    return t


def dump_script(script: ReplayScript, *, header: str | None = None) -> str:
    """TOML text that `parse_script` reads back into an equal `ReplayScript`."""

    doc = tomlkit.document()
    if header:
        for line in header.splitlines():
            doc.add(tomlkit.comment(line))
    provider = _without_defaults(script.provider)
    if provider:
        doc.add("provider", _table(provider))
    for key, entries in (("turn", script.turn), ("summary", script.summary)):
        if not entries:
            continue
        aot = tomlkit.aot()
        for entry in entries:
            data = _without_defaults(entry)
            calls = data.pop("tool_calls", [])
            t = _table(data)
            if calls:
                calls_aot = tomlkit.aot()
                for call in calls:
                    calls_aot.append(_table(call))
                t.add("tool_calls", calls_aot)
            aot.append(t)
        doc.add(key, aot)
    return tomlkit.dumps(doc)


def _toml_string(value: str) -> Any:

    if "\n" in value and "'''" not in value and _literal_ok(value):
        return tomlkit.string(value, multiline=True, literal=True)
    return tomlkit.string(value)


def _literal_ok(value: str) -> bool:
    # Multi-line literal strings cannot hold control characters other than tab and newlines,
    # and tomllib drops a newline right after the opening quotes.
    if value.startswith(("\n", "\r")) or value.endswith("'"):
        return False
    return all(c in "\t\n" or (ord(c) >= 0x20 and ord(c) != 0x7F) for c in value)


def write_script(path: Path, script: ReplayScript, *, header: str | None = None) -> None:
    """Write `script` to `path` by `vtcode.outpath`'s rules (a file atomically; a device or FIFO
    through)."""
    text = dump_script(script, header=header)
    parse_script(text, source=str(path))  # never write a script we could not read back
    write_output(check_output(path), text.encode("utf-8"), sys.stdout.buffer)
