"""Words of a parsed shell line as bash sees them: quote removal, `$'...'` decoding, here-doc
bodies, and bash's line continuation, for `vtcode.tools.shell_parse`.

Line continuation: bash removes a backslash-newline pair before it splits words, everywhere except
inside single quotes, `$'...'`, comments and quoted here-doc bodies (checked against bash 5.2:
`r\\<newline>m x` runs `rm`, `# c\\<newline>rm x` runs `rm` too, since a comment ends at the
newline). tree-sitter-bash instead ends the word at the backslash-newline (`r` and `m`), so
`join_continuations` removes the pairs bash removes, outside the regions the parser found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import tree_sitter

_GLOB_CHARS = re.compile(r"[*?\[]")
_KEEP_CONTINUATIONS = frozenset({"raw_string", "ansi_c_string", "comment", "heredoc_body"})
_PAIR = re.compile(rb"\\(.)", re.DOTALL)


def has_glob(text: str) -> bool:
    """Whether `text` holds a glob character or a brace expansion: a `{` whose text up to the next
    `}` holds `,` or `..` (`{a,b}`, `{1..3}`, `{x{a,}`). The `{`s before one `}` see suffixes of
    the first one's text, so only the first is checked; the regex this replaces,
    `\\{[^}]*(?:,|\\.\\.)[^}]*\\}`, rescanned from every `{` (quadratic on `{{{...`, cubic on
    `{,{,...`, on every command a model runs)."""
    if _GLOB_CHARS.search(text):
        return True
    for piece in text.split("}")[:-1]:  # the text before each `}`
        first = piece.find("{")
        if first >= 0 and (piece.find(",", first) >= 0 or piece.find("..", first) >= 0):
            return True
    return False


@dataclass(frozen=True, slots=True)
class Word:
    value: str | None  # None: depends on an expansion or substitution
    literal: bool  # a known value with no unquoted glob/brace expansion
    text: str

    @property
    def shown(self) -> str:
        return self.value if self.value is not None else self.text


def text_of(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogateescape")


def short(text: str, limit: int = 120) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def join_continuations(source: bytes, root: tree_sitter.Node) -> bytes:
    """`source` with every backslash-newline bash would remove removed (see the module docstring);
    a backslash pair (`\\\\`) is an escaped backslash, not the start of a continuation."""
    kept: list[tuple[int, int]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _KEEP_CONTINUATIONS:
            kept.append((node.start_byte, node.end_byte))
        elif b"\\\n" in (node.text or b""):
            stack.extend(node.children)
    kept.sort()
    out, pos = [], 0
    for start, end in [*kept, (len(source), len(source))]:
        if start < pos:
            continue
        out.append(
            _PAIR.sub(lambda m: b"" if m.group(1) == b"\n" else m.group(0), source[pos:start])
        )
        out.append(source[start:end])
        pos = end
    return b"".join(out)


def word_of(node: tree_sitter.Node) -> Word:
    """The value bash gives a word after quote removal; None where an expansion decides it."""
    text = text_of(node)
    kind = node.type
    if kind == "command_name":
        inner = node.named_children
        return word_of(inner[0]) if len(inner) == 1 else Word(None, False, text)
    if kind in ("word", "number"):
        if "\\" not in text:
            return Word(text, not has_glob(text), text)
        value = re.sub(
            r"\\(.)", lambda m: "" if m.group(1) == "\n" else m.group(1), text, flags=re.DOTALL
        )
        return Word(value, not has_glob(text.replace("\\\\", "")), text)
    if kind == "raw_string":
        return Word(text[1:-1], True, text)
    if kind == "ansi_c_string":
        return Word(_ansi_c(text[2:-1]), True, text)
    if kind in ("string", "translated_string"):
        parts = list(node.named_children)
        if any(c.type != "string_content" for c in parts):
            return Word(None, False, text)
        body = "".join(text_of(c) for c in parts)
        return Word(_unescape_double(body), True, text)
    if kind == "concatenation":
        pieces = [word_of(c) for c in node.named_children]
        if any(p.value is None for p in pieces) or not pieces:
            return Word(None, False, text)
        bare = "".join(text_of(c) for c in node.named_children if c.type == "word")
        glob = has_glob(bare)
        value = "".join(p.value or "" for p in pieces)
        return Word(value, all(p.literal for p in pieces) and not glob, text)
    return Word(None, False, text)


def _unescape_double(body: str) -> str:
    """Inside double quotes (and unquoted here-docs) a backslash escapes only `$`, `` ` ``, `"`,
    `\\` and newline; a backslash-newline disappears."""
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), body)


_ANSI = dict(zip("ntrabfveE\\'\"?", "\n\t\r\a\b\f\v\x1b\x1b\\'\"?", strict=True))


def _ansi_c(body: str) -> str:
    """Decode the inside of `$'...'` (\\xHH, \\NNN octal, \\uHHHH, \\UHHHHHHHH, \\cX, \\n...)."""

    def one(m: re.Match[str]) -> str:
        s = m.group(1)
        if s[0] in "xuU":
            return chr(int(s[1:], 16))
        if s[0] in "01234567":
            return chr(int(s, 8) & 0xFF)
        if s[0] == "c":
            return chr(ord(s[1]) & 0x1F)
        return _ANSI.get(s, "\\" + s)

    pattern = r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)"
    return re.sub(pattern, one, body, flags=re.DOTALL)


def heredoc_text(red: tree_sitter.Node) -> str:
    """A here-doc's body as the command reads it: verbatim under a quoted delimiter (`<<'E'`),
    else with `\\$`, `` \\` ``, `\\\\` unescaped and backslash-newlines removed (expansions inside
    stay as text; the walker reports their commands separately)."""
    start = next((text_of(c) for c in red.children if c.type == "heredoc_start"), "")
    body = next((text_of(c) for c in red.children if c.type == "heredoc_body"), "")
    if any(q in start for q in "'\"\\"):
        return body
    return re.sub(r"\\([$`\\\n])", lambda m: "" if m.group(1) == "\n" else m.group(1), body)


def herestring_text(red: tree_sitter.Node) -> str | None:
    for child in red.named_children:
        return word_of(child).value
    return None


def before_dashes(args: list[Word]) -> list[Word]:
    ends = next((i for i, w in enumerate(args) if w.value == "--"), len(args))
    return args[:ends]


def may_be_option(word: Word) -> bool:
    """An unquoted glob, brace or extglob (`@(...)`, `+(...)`, `!(...)` under `shopt -s
    extglob`) at the start of a word can expand to `-...`."""
    if word.text[:2] in ("@(", "+(", "!("):
        return True
    return not word.literal and word.value is not None and word.text[:1] in ("*", "?", "[", "{")
