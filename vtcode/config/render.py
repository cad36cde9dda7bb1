"""TOML text of values and documents (config show/get, the starter file, the man page)."""

from __future__ import annotations

from typing import Any

import tomlkit


def _item(value: Any) -> Any:
    if isinstance(value, dict):
        table = tomlkit.inline_table()
        for k, v in value.items():
            table[k] = _item(v)
        return table
    if isinstance(value, list):
        array = tomlkit.array()
        for v in value:
            array.append(_item(v))
        return array
    return tomlkit.item(value)


def inline(value: Any) -> str:
    """One value as inline TOML (`5.0`, `"x"`, `["a"]`, `{a = 1}`, `{}`)."""
    return str(_item(value).as_string()).strip() or "{}"


def document(data: dict[str, Any]) -> str:
    """A whole document, tables as `[table]` sections."""
    return tomlkit.dumps(data)
