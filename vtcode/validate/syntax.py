"""Explain why a line is not JSON, in the words a user needs (runs only after orjson failed).

orjson is strict the way upstream's serde_json is: no NaN/Infinity, no lone surrogates, no
invalid UTF-8, no BOM, bounded nesting. Each of those gets its own code and a 1-based column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import orjson

from vtcode.validate.report import ProblemCode

__all__ = ["SyntaxFinding", "explain_syntax"]

_NON_FINITE = re.compile(r"-?(?:NaN|Infinity)")


@dataclass(frozen=True, slots=True)
class SyntaxFinding:
    code: ProblemCode
    column: int | None
    message: str


def explain_syntax(data: bytes | bytearray, err: orjson.JSONDecodeError) -> SyntaxFinding:
    """Classify an orjson failure on one line (`data` may end with a newline)."""
    if not data.strip():
        return SyntaxFinding(ProblemCode.BLANK_LINE, None, "blank line (no event)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as u:
        bad = data[u.start]
        return SyntaxFinding(
            ProblemCode.INVALID_UTF8,
            u.start + 1,
            f"not UTF-8 text: byte 0x{bad:02x} at byte {u.start + 1} (binary data?)",
        )
    msg = err.msg
    pos = err.pos
    column = min(pos, len(text.rstrip("\r\n"))) + 1  # `pos` counts characters of the line
    if "surrogate" in msg:
        return SyntaxFinding(
            ProblemCode.LONE_SURROGATE,
            column,
            f"lone UTF-16 surrogate escape in a string ({msg})",
        )
    if "depth limit" in msg:
        return SyntaxFinding(ProblemCode.TOO_DEEP, column, "nested deeper than 1024 arrays/objects")
    if (
        "infinity" in msg
        or _NON_FINITE.match(text, max(0, pos - 1))
        or _NON_FINITE.match(text, pos)
    ):
        return SyntaxFinding(
            ProblemCode.NON_FINITE_NUMBER,
            column,
            "NaN/Infinity is not JSON (a number must be finite)",
        )
    return SyntaxFinding(ProblemCode.MALFORMED_JSON, column, f"malformed JSON: {msg}")
