"""Where each key sits in a TOML text: a small position scanner, plus the dotted-key parser.

`tomllib` is the reader we trust (data-only, rejects duplicates) but it keeps no positions, and
tomlkit keeps none either. Errors must still say `file:line:col`, so this module walks a text that
tomllib has already accepted and records where every key path is first written. It only has to be
right on valid TOML; on anything else it returns what it found so far (positions are best effort,
the parse result never depends on them).
"""

from __future__ import annotations

import bisect
import contextlib
import tomllib

KeyPath = tuple[str | int, ...]
Position = tuple[int, int]  # 1-based line, 1-based column (in characters, like editors count)

__all__ = ["KeyPath", "Position", "format_key", "key_positions", "parse_key", "parse_key_path"]

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_SCALAR_END = frozenset(" \t\r\n,]}#")


class _Stop(Exception):
    """The text is not what valid TOML looks like here: stop scanning, keep what was found."""


class _Scanner:
    def __init__(self, text: str) -> None:
        self.s = text
        self.n = len(text)
        self.i = 0
        self.found: dict[KeyPath, int] = {}  # key path -> offset of its first definition
        self.aot: dict[KeyPath, int] = {}  # array-of-tables path -> number of [[ ]] seen

    # -- lexical helpers ---------------------------------------------------------------------

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < self.n else ""

    def ws(self) -> None:
        while self.i < self.n and self.s[self.i] in " \t":
            self.i += 1

    def ws_nl(self) -> None:
        """Whitespace, newlines and comments (between statements and inside arrays)."""
        while self.i < self.n:
            c = self.s[self.i]
            if c in " \t\r\n":
                self.i += 1
            elif c == "#":
                nl = self.s.find("\n", self.i)
                self.i = self.n if nl < 0 else nl
            else:
                return

    def expect(self, token: str) -> None:
        if not self.s.startswith(token, self.i):
            raise _Stop
        self.i += len(token)

    def skip_string(self) -> str:
        """Skip one string token (any of the four kinds) and return its raw text."""
        start = self.i
        q = self.peek()
        if self.s.startswith(q * 3, self.i):
            self.i += 3
            while self.i < self.n:
                c = self.s[self.i]
                if c == "\\" and q == '"':
                    self.i += 2
                elif c == q:
                    run = 1
                    while self.peek(run) == q:
                        run += 1
                    self.i += run
                    if run >= 3:
                        return self.s[start : self.i]
                else:
                    self.i += 1
            raise _Stop
        self.i += 1
        while self.i < self.n:
            c = self.s[self.i]
            if c == "\\" and q == '"':
                self.i += 2
            elif c == q:
                self.i += 1
                return self.s[start : self.i]
            elif c == "\n":
                raise _Stop
            else:
                self.i += 1
        raise _Stop

    def key(self) -> list[tuple[str, int]]:
        """A dotted key: each part with the offset where it starts."""
        parts: list[tuple[str, int]] = []
        while True:
            self.ws()
            start = self.i
            c = self.peek()
            if c in ('"', "'"):
                raw = self.skip_string()
                if raw.startswith(c * 3):
                    raise _Stop  # multi-line strings are not keys
                part = raw[1:-1] if c == "'" else tomllib.loads("k = " + raw)["k"]
            else:
                while self.i < self.n and self.s[self.i] in _BARE:
                    self.i += 1
                if self.i == start:
                    raise _Stop
                part = self.s[start : self.i]
            parts.append((part, start))
            self.ws()
            if self.peek() != ".":
                return parts
            self.i += 1

    # -- structure ---------------------------------------------------------------------------

    def record(self, path: KeyPath, offset: int) -> None:
        self.found.setdefault(path, offset)

    def resolve(self, parts: list[tuple[str, int]], prefix: KeyPath = ()) -> KeyPath:
        """Record every prefix of a key, entering the last element of arrays of tables."""
        cur = prefix
        for j, (part, offset) in enumerate(parts):
            cur = (*cur, part)
            self.record(cur, offset)
            if j < len(parts) - 1 and cur in self.aot:
                cur = (*cur, self.aot[cur] - 1)
        return cur

    def value(self, path: KeyPath) -> None:
        c = self.peek()
        if c in ('"', "'"):
            self.skip_string()
        elif c == "[":
            self.i += 1
            index = 0
            while True:
                self.ws_nl()
                if self.peek() == "]":
                    self.i += 1
                    return
                item = (*path, index)
                self.record(item, self.i)
                self.value(item)
                index += 1
                self.ws_nl()
                if self.peek() == ",":
                    self.i += 1
                elif self.peek() != "]":
                    raise _Stop
        elif c == "{":
            self.i += 1
            while True:
                self.ws_nl()
                if self.peek() == "}":
                    self.i += 1
                    return
                self.keyval(path)
                self.ws_nl()
                if self.peek() == ",":
                    self.i += 1
                elif self.peek() != "}":
                    raise _Stop
        else:
            start = self.i
            while self.i < self.n and self.s[self.i] not in _SCALAR_END:
                self.i += 1
            if self.i == start:
                raise _Stop
            token = self.s[start : self.i]
            # A local date-time may use a space between date and time: `1979-05-27 07:32:00`.
            if (
                len(token) == 10
                and token[4] == "-"
                and self.peek() == " "
                and self.peek(1).isdigit()
                and self.peek(3) == ":"
            ):
                self.i += 1
                while self.i < self.n and self.s[self.i] not in _SCALAR_END:
                    self.i += 1

    def keyval(self, prefix: KeyPath) -> None:
        path = self.resolve(self.key(), prefix)
        self.expect("=")
        self.ws()
        self.value(path)

    def document(self) -> None:
        prefix: KeyPath = ()
        while True:
            self.ws_nl()
            if self.i >= self.n:
                return
            if self.s.startswith("[[", self.i):
                start = self.i
                self.i += 2
                parts = self.key()
                self.expect("]]")
                parent = self.resolve(parts[:-1]) if len(parts) > 1 else ()
                if len(parts) > 1 and parent in self.aot:
                    parent = (*parent, self.aot[parent] - 1)
                name, offset = parts[-1]
                table = (*parent, name)
                self.record(table, offset)
                index = self.aot.get(table, 0)
                self.aot[table] = index + 1
                prefix = (*table, index)
                self.record(prefix, start)
            elif self.peek() == "[":
                self.i += 1
                parts = self.key()
                self.expect("]")
                prefix = self.resolve(parts)
            else:
                self.keyval(prefix)


def key_positions(text: str) -> dict[KeyPath, Position]:
    """Line and column where each key path (tables, keys, array elements) is first written."""
    sc = _Scanner(text)
    with contextlib.suppress(_Stop, tomllib.TOMLDecodeError, IndexError):
        sc.document()
    starts = [0]
    starts.extend(i + 1 for i, c in enumerate(text) if c == "\n")
    out: dict[KeyPath, Position] = {}
    for path, offset in sc.found.items():
        line = bisect.bisect_right(starts, offset)
        out[path] = (line, offset - starts[line - 1] + 1)
    return out


def parse_key(text: str) -> tuple[str, ...]:
    """Parse a dotted key as TOML spells it (`agent.harness.x`, `mcp.servers."a.b".command`)."""
    sc = _Scanner(text)
    try:
        parts = sc.key()
    except (_Stop, tomllib.TOMLDecodeError, IndexError):
        parts = []
    sc.ws()
    if not parts or sc.i != sc.n:
        raise ValueError(f"{text!r} is not a valid key (expected dotted TOML keys like a.b.c)")
    return tuple(p for p, _ in parts)


def parse_key_path(text: str) -> KeyPath:
    """Like `parse_key`, also accepting array indexes as `format_key` writes them (`a.b[0].c`)."""
    out: list[str | int] = []
    for i, chunk in enumerate(_split_indexes(text)):
        if isinstance(chunk, int):
            out.append(chunk)
        elif i == 0:
            out.extend(parse_key(chunk))
        elif chunk.strip():
            if not chunk.strip().startswith("."):
                raise ValueError(f"{text!r} is not a valid key path")
            out.extend(parse_key(chunk.strip()[1:]))
    if not out or isinstance(out[0], int):
        raise ValueError(f"{text!r} is not a valid key path")
    return tuple(out)


def _split_indexes(text: str) -> list[str | int]:
    """Split `a.b[0].c` into `["a.b", 0, ".c"]`, leaving quoted parts alone."""
    chunks: list[str | int] = []
    cur = ""
    quote = ""
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            cur += c
            if c == "\\" and quote == '"' and i + 1 < len(text):
                cur += text[i + 1]
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
            cur += c
        elif c == "[":
            end = text.find("]", i)
            digits = text[i + 1 : end] if end > 0 else ""
            if not digits.isdigit():
                raise ValueError(f"{text!r} is not a valid key path")
            chunks += [cur, int(digits)]
            cur = ""
            i = end
        else:
            cur += c
        i += 1
    chunks.append(cur)
    return chunks


def _escape_char(c: str) -> str:
    code = ord(c)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _quote(part: str) -> str:
    if part and all(c in _BARE for c in part):
        return part
    escaped = part.replace("\\", "\\\\").replace('"', '\\"')
    escaped = "".join(c if c.isprintable() else _escape_char(c) for c in escaped)
    return f'"{escaped}"'


def format_key(path: KeyPath) -> str:
    """The dotted spelling of a key path; array elements as `[i]` (`hooks.lifecycle.stop[0]`)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + _quote(part)
    return out
