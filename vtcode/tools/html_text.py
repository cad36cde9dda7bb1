"""HTML to readable text with light markdown, read by vtcode's own linear tokenizer.

What web_fetch hands the model is the page's reading matter, not its markup: headings become
`#` lines, links `[text](href)` (made absolute against the page), list items `- `, `pre` blocks
fenced, paragraphs and line breaks kept; script, style, template, svg, head and noscript are
dropped whole; entities are decoded. A fetched page is untrusted: `html_tokens` reads any tag
soup in one linear pass and never raises (the standard library's parser, used before, took
minutes on some pages and raised on others; that module says which).
"""

from __future__ import annotations

import re
from urllib.parse import urljoin

from vtcode.tools.html_tokens import tokens

__all__ = ["html_to_text"]

_SKIP = frozenset({"script", "style", "template", "svg", "head", "noscript", "iframe", "object"})
_BLOCK = frozenset(
    {
        "p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "table",
        "tr", "ul", "ol", "dl", "dt", "dd", "blockquote", "figure", "figcaption", "form", "hr",
        "title", "body", "html",
    }
)  # fmt: skip
_HEADINGS = {"h1": "#", "h2": "##", "h3": "###", "h4": "####", "h5": "#####", "h6": "######"}
_VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "wbr"})


class _Reader:
    """The page's text, built from its tokens (the handler names are html.parser's)."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.out: list[str] = []
        self.skip = 0  # depth inside dropped elements
        self.pre = 0
        self.links: list[str | None] = []  # hrefs of the open <a> elements
        self.title: list[str] = []
        self.in_title = False

    def _newline(self, count: int = 2) -> None:
        self.out.append("\n" * count)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
            return
        if tag in _SKIP:
            if tag not in _VOID:
                self.skip += 1
            return
        if self.skip:
            return
        if tag in _HEADINGS:
            self._newline()
            self.out.append(_HEADINGS[tag] + " ")
        elif tag in _BLOCK:
            self._newline()
        elif tag == "li":
            self._newline(1)
            self.out.append("- ")
        elif tag == "br":
            self._newline(1)
        elif tag == "pre":
            self.pre += 1
            self._newline()
            self.out.append("```\n")
        elif tag in ("td", "th"):
            self.out.append(" | ")
        elif tag == "a":
            href = dict(attrs).get("href")
            self.links.append(href)
            if href and not href.startswith(("javascript:", "#")):
                self.out.append("[")
        elif tag == "img":
            alt = dict(attrs).get("alt")
            if alt:
                self.out.append(f"[image: {alt}]")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
            return
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
            return
        if self.skip:
            return
        if tag in _HEADINGS or tag in _BLOCK:
            self._newline()
        elif tag == "pre" and self.pre:
            self.pre -= 1
            self.out.append("\n```")
            self._newline()
        elif tag == "a" and self.links:
            href = self.links.pop()
            if href and not href.startswith(("javascript:", "#")):
                self.out.append(f"]({urljoin(self.base_url, href)})")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
            return
        if self.skip:
            return
        if self.pre:
            self.out.append(data)
            return
        text = re.sub(r"\s+", " ", data)
        if not self.out or self.out[-1].endswith("\n") or self.out[-1].endswith(" "):
            text = text.lstrip(" ")  # no indentation from the markup's own line breaks
        if text:
            self.out.append(text)


def html_to_text(html: str, base_url: str = "") -> str:
    """The readable text of an HTML page (title first, as a heading)."""
    reader = _Reader(base_url)
    for kind, value, attrs in tokens(html):
        if kind == "start":
            reader.handle_starttag(value, attrs)
        elif kind == "end":
            reader.handle_endtag(value)
        else:
            reader.handle_data(value)
    return _rendered(reader)


def _rendered(reader: _Reader) -> str:
    body = "".join(reader.out)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(line.rstrip() for line in body.split("\n")))
    text = text.strip("\n")
    title = re.sub(r"\s+", " ", "".join(reader.title)).strip()
    return f"# {title}\n\n{text}" if title and not text.startswith(f"# {title}") else text
