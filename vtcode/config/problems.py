"""How config problems read: TOML syntax errors located at file:line:col, schema errors in words.

tomllib and jsonschema speak in their own terms (`Cannot declare ('a',) twice`, `'x' is not of
type 'integer'`); a user editing vtcode.toml should read "a is declared twice" and "expected an
integer, got string "x"" instead.
"""

from __future__ import annotations

import ast
import json
import re
import tomllib
from typing import Any

from vtcode.config.layers import ConfigProblem
from vtcode.config.tomlscan import format_key

__all__ = ["describe", "syntax_problem"]


_AT = re.compile(
    r"^(?P<msg>.*) \(at (?:line (?P<line>\d+), column (?P<col>\d+)|end of document)\)$"
)
_TWICE = re.compile(r"^Cannot declare (?P<key>\(.*\)) twice$")


def _line_start_col(text: str, line: int) -> int:
    lines = text.split("\n")
    current = lines[line - 1] if 0 < line <= len(lines) else ""
    return len(current) - len(current.lstrip(" \t")) + 1


def syntax_problem(err: tomllib.TOMLDecodeError, text: str, display: str) -> ConfigProblem:
    raw = str(getattr(err, "msg", None) or err)
    m = _AT.match(str(err))
    if m:
        raw = m.group("msg")
    line = getattr(err, "lineno", None)
    col = getattr(err, "colno", None)
    if m and m.group("line"):
        line, col = int(m.group("line")), int(m.group("col"))
    if line is None or col is None:  # "at end of document"
        line = text.count("\n") + 1
        col = len(text) - (text.rfind("\n") + 1) + 1
    twice = _TWICE.match(raw)
    if twice:
        try:
            dotted = format_key(tuple(ast.literal_eval(twice.group("key"))))
        except (ValueError, SyntaxError):
            dotted = twice.group("key")
        message = f"{dotted} is declared twice (duplicate table or key)"
        col = _line_start_col(text, line)  # tomllib points past the header, not at it
    elif raw == "Cannot overwrite a value":
        message = "duplicate key: this key already has a value"
        col = _line_start_col(text, line)
    else:
        message = raw[:1].lower() + raw[1:]
    return ConfigProblem(f"TOML syntax error: {message}", location=f"{display}:{line}:{col}")


def _toml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "table"
    return "date/time"


_JSON_TO_TOML = {
    "number": "a float",
    "integer": "an integer",
    "string": "a string",
    "boolean": "a boolean",
    "array": "an array",
    "object": "a table",
}


def _show(value: Any) -> str:
    kind = _toml_type(value)
    if kind in ("table", "array", "date/time"):
        return f"a {kind}" if kind != "array" else "an array"
    if kind == "string":
        return f"string {_toml_string(value)}"
    return f"{kind} {_toml_scalar(value)}"


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # JSON string escapes are valid TOML


def _toml_scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def describe(err: Any) -> str:
    kind = err.validator
    value = err.instance
    if kind == "type":
        wanted = (
            err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        )
        names = " or ".join(_JSON_TO_TOML.get(str(w), str(w)) for w in wanted)
        return f"expected {names}, got {_show(value)}"
    if kind == "enum":
        allowed = ", ".join(str(v) for v in err.validator_value)
        if isinstance(value, str):
            return f"unknown value {_toml_string(value)} (expected one of: {allowed})"
        return f"expected one of: {allowed}; got {_show(value)}"
    if kind == "minimum":
        return f"{_toml_scalar(value)} is below the minimum {err.validator_value}"
    if kind == "maximum":
        return f"{_toml_scalar(value)} is above the maximum {err.validator_value}"
    if kind == "required":
        missing = [k for k in err.validator_value if k not in value]
        return "missing required key " + ", ".join(repr(k) for k in missing)
    return str(err.message)
