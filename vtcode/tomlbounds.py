"""Bounds a config text must keep before any TOML parser sees it: depth and entry count.

`tomllib` recurses once per nested array or inline table, and everything after it (the position
scanner, key lookup, merging, the schema check) walks key paths: a 200 KB header of 100,000
dotted parts (`[a.a.a…]`) made those tuples quadratic (21 GB) and a few thousand levels ended in a
RecursionError. So a text is first walked here, once, left to right, without recursion and with
constant memory (a stack that the depth limit itself bounds), and refused at the first place it
goes past a limit, located at `line:col` (`TomlBoundsError`; the config loader makes it a located
`ConfigInvalid`):

- `MAX_DEPTH` levels of nesting, counting every table-header part, dotted-key part, inline table
  and array from the root (`[a.b]` then `c.d = [{e = 1}]` puts `e` at depth 7);
- `MAX_ENTRIES` keys, table headers and array elements in all.

The size is capped before this (`load.MAX_CONFIG_BYTES`). The walk is deliberately permissive: it
only has to count right on valid TOML and to stay linear on anything else; whatever it lets
through, `tomllib` still parses and rejects as before.
"""

from __future__ import annotations

__all__ = ["MAX_DEPTH", "MAX_ENTRIES", "TomlBoundsError", "check_bounds"]

MAX_DEPTH = 32  # the deepest real key (`mcp.servers."x".env.NAME`, hook tables) is under 8
MAX_ENTRIES = 20_000  # a real vtcode.toml has a few hundred keys and list items at most

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_SCALAR_STOP = frozenset(" \t\r\n,[]{}#\"'=")


class TomlBoundsError(ValueError):
    """A text past a bound; `line` and `col` (1-based, in characters) say where."""

    def __init__(self, message: str, line: int, col: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col


class _Walk:
    """One left-to-right pass; `fail` raises at the offending offset."""

    def __init__(self, text: str, max_depth: int, max_entries: int) -> None:
        self.s = text
        self.n = len(text)
        self.max_depth = max_depth
        self.max_entries = max_entries
        self.entries = 0

    def fail(self, offset: int, message: str) -> None:
        line = self.s.count("\n", 0, offset) + 1
        col = offset - (self.s.rfind("\n", 0, offset) + 1) + 1
        raise TomlBoundsError(message, line, col)

    def entry(self, offset: int) -> None:
        self.entries += 1
        if self.entries > self.max_entries:
            self.fail(offset, f"too many keys and values (more than {self.max_entries})")

    def deep(self, offset: int, depth: int) -> None:
        if depth > self.max_depth:
            self.fail(
                offset, f"nested too deeply (more than {self.max_depth} levels of keys/tables)"
            )

    def string_end(self, i: int) -> int:
        """The offset after the string starting at `i` (at a newline if a one-line string is
        not closed: tomllib reports that one)."""
        s, q = self.s, self.s[i]
        if s.startswith(q * 3, i):
            end = i + 3
            while True:
                j = s.find(q * 3, end)
                if j < 0:
                    return self.n
                if q == '"':
                    k = j - 1
                    while k >= end and s[k] == "\\":
                        k -= 1
                    if (j - 1 - k) % 2:  # an escaped quote: keep looking after it
                        end = j + 1
                        continue
                while s.startswith(q, j + 3):  # up to two quotes may end the content
                    j += 1
                return j + 3
        i += 1
        while i < self.n:
            c = s[i]
            if c == "\\" and q == '"':
                i += 2
            elif c == q:
                return i + 1
            elif c == "\n":
                return i
            else:
                i += 1
        return self.n

    def key_parts(self, i: int, base: int) -> tuple[int, int]:
        """Count a dotted key's parts from `i` (failing past the depth limit); (parts, end)."""
        parts = 0
        s = self.s
        while True:
            while i < self.n and s[i] in " \t":
                i += 1
            start = i
            if i < self.n and s[i] in "\"'":
                i = self.string_end(i)
            elif i < self.n and s[i] in _BARE:
                while i < self.n and s[i] in _BARE:
                    i += 1
            else:
                return parts, i
            parts += 1
            self.deep(start, base + parts)
            while i < self.n and s[i] in " \t":
                i += 1
            if i >= self.n or s[i] != ".":
                return parts, i
            i += 1

    def run(self) -> None:
        s, n = self.s, self.n
        stack: list[tuple[str, int]] = []  # open arrays/inline tables: (closer, depth inside)
        table = 0  # depth of the current [table]
        want_key = True  # at a statement start, or after `{` / `,` in an inline table
        value_depth = 0
        i = 0
        while i < n:
            c = s[i]
            if c in " \t\r":
                i += 1
            elif c == "\n":
                i += 1
                if not stack:
                    want_key = True
            elif c == "#":
                j = s.find("\n", i)
                i = n if j < 0 else j
            elif want_key:
                if not stack and c == "[":
                    aot = s.startswith("[[", i)
                    self.entry(i)
                    parts, j = self.key_parts(i + (2 if aot else 1), 0)
                    table = parts + aot
                    self.deep(i, table)
                    i = max(j, i + 1)
                    continue
                base = stack[-1][1] if stack else table
                parts, j = self.key_parts(i, base)
                if parts:
                    self.entry(i)
                if j < n and s[j] == "=":
                    want_key = False
                    value_depth = base + parts
                    j += 1
                i = max(j, i + 1)
            elif c in "[{":
                depth = value_depth + 1
                self.deep(i, depth)
                stack.append(("]" if c == "[" else "}", depth))
                value_depth = depth
                want_key = c == "{"
                i += 1
            elif c in "]}":
                if stack:
                    stack.pop()
                value_depth = stack[-1][1] if stack else table
                i += 1
            elif c == ",":
                if stack:
                    want_key = stack[-1][0] == "}"
                    value_depth = stack[-1][1]
                i += 1
            else:
                if stack and stack[-1][0] == "]":
                    self.entry(i)
                if c in "\"'":
                    i = max(self.string_end(i), i + 1)
                else:
                    j = i
                    while j < n and s[j] not in _SCALAR_STOP:
                        j += 1
                    i = max(j, i + 1)


def check_bounds(text: str, *, max_depth: int = MAX_DEPTH, max_entries: int = MAX_ENTRIES) -> None:
    """Raise `TomlBoundsError` (located) if `text` nests deeper or holds more entries than the
    limits allow; linear in the text, constant memory. The defaults are vtcode.toml's; other
    TOML inputs (replay scripts, eval tasks: `vtcode.tomlcheck`) pass their own."""
    _Walk(text, max_depth, max_entries).run()
