"""Strict, located reading of a TOML file into typed dataclasses.

tomllib reports no positions for values, so this module finds where each key path is written in
the text, refuses unknown keys with a did-you-mean (a typo must never silently become a
default), decodes with `vtcode.jsontypes`, and raises errors that name `file:line:col` and the
key path. The replay script format and the eval task format both read their files through it,
so both answer a mistake the same way.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import tomllib
import typing
from collections.abc import Callable
from typing import Annotated, Any, TypeVar, get_args, get_origin

from vtcode.errors import UsageError
from vtcode.jsontypes import DecodeError, decode
from vtcode.tomlbounds import TomlBoundsError, check_bounds

__all__ = ["ErrorFactory", "Locator", "PathKey", "check_unknown_keys", "decode_toml", "path_text"]

T = TypeVar("T")
MAX_DEPTH = 200  # tomllib recurses once per level and fails near 400 inline tables
MAX_ENTRIES = 2_000_000  # keys and array items: a long recorded script, not an attack
PathKey = tuple[str | int, ...]
# (message, location, hint) -> the error to raise: each format keeps its own error class.
ErrorFactory = Callable[[str, str, "str | None"], UsageError]

# The name runs from its first to its last character that is no blank (a lazy name beside
# `\s*` was quadratic in the blanks of a line such as `["b      c"],` inside an array).
_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]\s](?:[^\]]*[^\]\s])?)\s*(\]\]?)\s*(?:#.*)?$")
_KEY = re.compile(
    r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*="""
)
_INLINE_KEY = re.compile(r"""[{,]\s*([A-Za-z0-9_-]+|"[^"]*")\s*=""")


def _split_dotted(text: str) -> list[str]:
    parts = re.findall(r"""[A-Za-z0-9_-]+|"[^"]*"|'[^']*'""", text)
    return [p[1:-1] if p[:1] in "\"'" else p for p in parts]


def _locate_keys(text: str) -> dict[PathKey, tuple[int, int]]:
    """Map key paths (array-of-table entries as indices) to 1-based (line, column)."""
    where: dict[PathKey, tuple[int, int]] = {}
    aot_counts: dict[PathKey, int] = {}
    table: PathKey = ()
    in_multiline: str | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if in_multiline is not None:
            if line.count(in_multiline) % 2 == 1:
                in_multiline = None
            continue
        header = _HEADER.match(line)
        if header and not _KEY.match(line):
            resolved: list[str | int] = []
            names = _split_dotted(header.group(2))
            for i, name in enumerate(names):
                resolved.append(name)
                last = i == len(names) - 1
                if last and header.group(1) == "[[":
                    key = tuple(resolved)
                    aot_counts[key] = aot_counts.get(key, -1) + 1
                    resolved.append(aot_counts[key])
                elif tuple(resolved) in aot_counts:
                    resolved.append(aot_counts[tuple(resolved)])
            table = tuple(resolved)
            where.setdefault(table, (lineno, line.index("[") + 1))
            continue
        m = _KEY.match(line)
        if not m:
            continue
        path = table + tuple(_split_dotted(m.group(1)))
        where.setdefault(path, (lineno, m.start(1) + 1))
        rest = line[m.end() :]
        for im in _INLINE_KEY.finditer(rest):
            name = im.group(1).strip("\"'")
            where.setdefault((*path, name), (lineno, m.end() + im.start(1) + 1))
        for quote in ('"""', "'''"):
            if rest.count(quote) % 2 == 1:
                in_multiline = quote
                break
    return where


def pointer_to_path(pointer: str) -> PathKey:
    """A JSON pointer (from a `DecodeError`) as a key path."""
    out: list[str | int] = []
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        out.append(int(token) if token.isdigit() else token)
    return tuple(out)


def path_text(path: PathKey) -> str:
    """`turn[0].tool_calls[1].name`; `(document)` for the root."""
    text = ""
    for p in path:
        text += f"[{p}]" if isinstance(p, int) else (f".{p}" if text else p)
    return text or "(document)"


class Locator:
    """Where each key path of one TOML text is written; builds located errors."""

    def __init__(self, source: str, text: str, make_error: ErrorFactory) -> None:
        self.source = source
        self._where = _locate_keys(text)
        self._make_error = make_error

    def location(self, path: PathKey) -> str:
        for n in range(len(path), -1, -1):
            pos = self._where.get(path[:n])
            if pos is not None:
                return f"{self.source}:{pos[0]}:{pos[1]}"
        return f"{self.source}:1:1"

    def error(self, path: PathKey, message: str, hint: str | None = None) -> UsageError:
        return self._make_error(f"{path_text(path)}: {message}", self.location(path), hint)


def _dataclass_of(tp: Any) -> type[Any] | None:
    """The dataclass inside `X`, `X | None`, `Annotated[X, ...]` (None for other types)."""
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    args = [a for a in get_args(tp) if a is not type(None)] if get_origin(tp) else []
    if len(args) == 1 and get_origin(tp) is not list:
        return _dataclass_of(args[0])
    return tp if isinstance(tp, type) and dataclasses.is_dataclass(tp) else None


def _list_item_dataclass(tp: Any) -> type[Any] | None:
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    if get_origin(tp) is list:
        return _dataclass_of(get_args(tp)[0])
    return None


def check_unknown_keys(cls: type[Any], data: Any, path: PathKey, loc: Locator) -> None:
    """Refuse a key no field of `cls` (recursively) declares, with the nearest known key."""
    if not isinstance(data, dict):
        return  # the decoder reports the wrong type
    hints = typing.get_type_hints(cls, include_extras=True)
    known = {f.name: hints[f.name] for f in dataclasses.fields(cls)}
    for key, value in data.items():
        if key not in known:
            close = difflib.get_close_matches(key, list(known), n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(known)}"
            raise loc.error((*path, key), "unknown key", hint=hint)
        tp = known[key]
        sub = _dataclass_of(tp)
        if sub is not None:
            check_unknown_keys(sub, value, (*path, key), loc)
        item = _list_item_dataclass(tp)
        if item is not None and isinstance(value, list):
            for i, entry in enumerate(value):
                check_unknown_keys(item, entry, (*path, key, i), loc)


def decode_toml(
    cls: type[T], text: str, *, source: str, make_error: ErrorFactory
) -> tuple[T, dict[str, Any], Locator]:
    """Parse `text`, refuse unknown keys, decode into `cls`; every error located in `source`.

    Returns the value, the raw table (for checks the types cannot state) and the locator (for
    the caller's own located errors)."""
    try:
        # Bounded before tomllib recurses (a 100k-deep array was a RecursionError): deep enough
        # for any tool argument (a log line nests at most 127 levels), linear, constant memory.
        check_bounds(text, max_depth=MAX_DEPTH, max_entries=MAX_ENTRIES)
    except TomlBoundsError as exc:
        raise make_error(exc.message, f"{source}:{exc.line}:{exc.col}", None) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        where = f"{source}:{m.group(1)}:{m.group(2)}" if m else f"{source}:1:1"
        # `(?<!\s)`: from the first blank of a run only (the message echoes keys, and a
        # search from every blank of a long run was quadratic).
        reason = re.sub(r"(?<!\s)\s*\(at (line \d+, column \d+|end of document)\)", "", msg)
        raise make_error(f"invalid TOML: {reason}", where, None) from None
    loc = Locator(source, text, make_error)
    check_unknown_keys(cls, data, (), loc)
    try:
        value = decode(cls, data)
    except DecodeError as exc:
        raise loc.error(pointer_to_path(exc.pointer), exc.reason) from None
    return value, data, loc
