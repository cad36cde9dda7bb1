"""HTML tag soup split into start tags, end tags and text, in one linear pass that never raises.

The standard library's `html.parser` was web_fetch's reader, and a fetched page is written by
whoever runs the server. On CPython 3.11.7 it is quadratic or worse on some tag soup (a page
of `<a <a <a ...` took 53 s at 40 KB; web_fetch reads up to 2 MiB), and some markup makes it
raise (`<![ x` is an AssertionError from `_markupbase`), which ended the whole run. This
tokenizer only does what html_text needs: every scan is a `find` or an anchored match that
moves forward, so a page is read a bounded number of times, and any input is text at worst.

What it yields matches `html.parser` on ordinary markup (tests/tools/test_html_tokens.py holds
the two side by side): tag and attribute names lower-cased, attribute values and text with
entities decoded, a valueless attribute as None, `<x/>` as a start and an end tag, the content
of `script` and `style` as raw text up to their end tag, comments, doctypes and processing
instructions dropped, and a `<` that starts no tag kept as text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from typing import Literal

__all__ = ["Token", "tokens"]

Attrs = list[tuple[str, str | None]]
Token = tuple[Literal["start", "end", "text"], str, Attrs]

# The elements whose content is raw text, each with the search for its end tag.
_RAW_TEXT_END = {
    name: re.compile(rf"</{name}(?=[\t\n\r\f />])|</{name}$", re.IGNORECASE)
    for name in ("script", "style")
}
_TAG_NAME = re.compile(r"[a-zA-Z][^\t\n\r\f />\x00]*")
# One attribute: a name, then optionally `=` and a quoted or bare value (html.parser's rule).
_ATTR = re.compile(
    r"""[\s/]*((?<=[\s'"/])[^\s/>][^\s/=>]*)(\s*=+\s*('[^']*'|"[^"]*"|(?!['"])[^>\s]*))?"""
)
_TAG_END = re.compile(r"[\s/]*(/?)>")


def tokens(html: str) -> Iterator[Token]:
    """The page's tokens in order; text between two tags comes as one token."""
    n = len(html)
    pos = 0
    while pos < n:
        lt = html.find("<", pos)
        if lt < 0:
            yield ("text", unescape(html[pos:]), [])
            return
        if lt > pos:
            yield ("text", unescape(html[pos:lt]), [])
        if _letter(html, lt + 1):
            name, attrs, self_closing, after = _start_tag(html, lt)
            if after < 0:  # never closed: the rest is text
                yield ("text", unescape(html[lt:]), [])
                return
            yield ("start", name, attrs)
            if self_closing:
                yield ("end", name, [])
            pos = after
            if name in _RAW_TEXT_END and not self_closing:
                raw_end = _RAW_TEXT_END[name].search(html, pos)
                end = len(html) if raw_end is None else raw_end.start()
                if end > pos:
                    yield ("text", html[pos:end], [])
                pos = end
            continue
        after = _other_markup(html, lt)
        if after == lt + 1:  # `<` that starts nothing
            yield ("text", "<", [])
        elif html[lt + 1] == "/" and _letter(html, lt + 2):
            m = _TAG_NAME.match(html, lt + 2)
            assert m is not None
            yield ("end", m.group().lower(), [])
        pos = after


def _letter(html: str, i: int) -> bool:
    c = html[i : i + 1]
    return c.isascii() and c.isalpha()


def _other_markup(html: str, lt: int) -> int:
    """The index after a comment, declaration, processing instruction or end tag starting at
    `lt` (each runs to the page's end when never closed), or `lt + 1` when `<` starts none."""
    if html.startswith("<!--", lt):
        end = html.find("-->", lt + 4)
        return len(html) if end < 0 else end + 3
    nxt = html[lt + 1 : lt + 2]
    if nxt == "/" and html[lt + 2 : lt + 3] == ">":
        return lt + 3  # `</>` is dropped
    if nxt in ("!", "?", "/"):  # `</ x>` is a bogus comment, dropped as well
        end = html.find(">", lt + 2)
        return len(html) if end < 0 else end + 1
    return lt + 1


def _start_tag(html: str, lt: int) -> tuple[str, Attrs, bool, int]:
    """Name, attributes, whether it closes itself, and the index after its `>` (-1 if none)."""
    m = _TAG_NAME.match(html, lt + 1)
    assert m is not None  # `tokens` saw a letter
    name = m.group().lower()
    attrs: Attrs = []
    pos = m.end()
    while True:
        end = _TAG_END.match(html, pos)
        if end is not None:
            return name, attrs, bool(end.group(1)), end.end()
        a = _ATTR.match(html, pos)
        if a is None or a.end() == pos:
            gt = html.find(">", pos)
            if gt < 0:
                return name, attrs, False, -1
            return name, attrs, html[gt - 1] == "/", gt + 1
        value = a.group(3)
        if value is not None and value[:1] in ("'", '"') and value[-1:] == value[:1]:
            value = value[1:-1]
        attrs.append((a.group(1).lower(), unescape(value) if value is not None else None))
        pos = a.end()
