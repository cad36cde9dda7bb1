"""Read the near-JSON small models write for tool arguments, conservatively.

Models that write their tool calls as text (issue 28) make a few mistakes a JSON parser refuses
but whose meaning is not in doubt: a trailing comma, 'single-quoted' strings, Python's
`True`/`False`/`None`, a raw newline or tab inside a string. `loads_near_json` fixes exactly
those, in one string-aware pass over the text, and nothing else: a missing brace, a missing
quote or prose around the value still fail, so a guess never becomes a tool call. Libraries
such as `json_repair` turn any text into some value (that is their job); here a refusal is the
safe answer, so the repair stays small and bounded.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MAX_NEAR_JSON_CHARS", "NearJson", "loads_near_json"]

# Tool arguments beyond this are not repaired (a strict parse still reads them).
MAX_NEAR_JSON_CHARS = 256 * 1024

_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}
_JSON_LITERALS = frozenset({"true", "false", "null"})
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


class NearJson:
    """The value read and the repairs it needed (empty when the text was strict JSON)."""

    __slots__ = ("repairs", "value")

    def __init__(self, value: Any, repairs: tuple[str, ...]) -> None:
        self.value = value
        self.repairs = repairs


def loads_near_json(text: str) -> NearJson | None:
    """The JSON value of `text`, repaired if needed; None when it is not (near-)JSON.

    RecursionError: a value nested deeper than the parser goes (about 1,000 levels), which a
    model's reply can be; refused like any other text that is no call, never a failed turn."""
    try:
        return NearJson(json.loads(text, parse_constant=_refuse_constant), ())
    except (ValueError, RecursionError):
        pass
    if len(text) > MAX_NEAR_JSON_CHARS:
        return None
    fixed = _repair(text)
    if fixed is None:
        return None
    out, repairs = fixed
    try:
        return NearJson(json.loads(out, parse_constant=_refuse_constant), repairs)
    except (ValueError, RecursionError):
        return None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # NaN, Infinity: Python's extension, not JSON


def _repair(text: str) -> tuple[str, tuple[str, ...]] | None:
    out: list[str] = []
    repairs: set[str] = set()
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            end = _string(text, i, out)
            if end is None:
                return None
            if c == "'":
                repairs.add("single quotes")
            if end[1]:
                repairs.add("raw control characters in a string")
            i = end[0]
            continue
        if c in "}]":
            j = len(out) - 1
            while j >= 0 and out[j].isspace():
                j -= 1
            if j >= 0 and out[j] == ",":
                del out[j]
                repairs.add("trailing comma")
        elif c.isalpha() or c == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            if word in _PY_LITERALS:
                out.append(_PY_LITERALS[word])
                repairs.add("Python literals")
            elif word in _JSON_LITERALS:
                out.append(word)
            else:
                return None  # a bare word is not something to guess at
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out), tuple(sorted(repairs))


def _string(text: str, start: int, out: list[str]) -> tuple[int, bool] | None:
    """Copy the string opening at `start` as a JSON string; (index after it, had raw controls)."""
    quote = text[start]
    out.append('"')
    i, n = start + 1, len(text)
    raw_controls = False
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if quote == "'" and nxt == "'":
                out.append("'")
            else:
                out.append(c + nxt)
            i += 2
            continue
        if c == quote:
            out.append('"')
            return i + 1, raw_controls
        if c == '"':  # only inside a single-quoted string
            out.append('\\"')
        elif c in _ESCAPES:
            out.append(_ESCAPES[c])
            raw_controls = True
        elif ord(c) < 0x20:
            out.append(f"\\u{ord(c):04x}")
            raw_controls = True
        else:
            out.append(c)
        i += 1
    return None  # an unterminated string
