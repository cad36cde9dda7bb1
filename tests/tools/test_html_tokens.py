"""web_fetch's HTML reader: what the standard library's parser gave on real markup, for any page.

The reference is the reader as it was, `html.parser` driving the same handlers: on pages built
at random from the markup pages are made of (nested blocks, links with quoted and bare
attributes, entities, comments, doctypes, scripts and styles holding `<` and tags, self-closing
tags, stray `<`), the text must be the same. Then the pages the standard library could not
read: each is text in one subprocess run that a hang would time out.
"""

from __future__ import annotations

import json
import random
from html.parser import HTMLParser

import pytest

from tests.hang_check import run_python
from vtcode.tools import html_text
from vtcode.tools.html_text import html_to_text


class _OldReader(HTMLParser):
    """The reader before this change: html.parser calling the reader's handlers."""

    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.reader = html_text._Reader(base_url)
        self.handle_starttag = self.reader.handle_starttag  # type: ignore[method-assign]
        self.handle_endtag = self.reader.handle_endtag  # type: ignore[method-assign]
        self.handle_data = self.reader.handle_data  # type: ignore[method-assign]


def old_html_to_text(html: str, base_url: str) -> str:
    old = _OldReader(base_url)
    old.feed(html)
    old.close()
    return html_text._rendered(old.reader)


TAGS = ["p", "div", "h1", "h3", "ul", "li", "pre", "td", "span", "b", "title", "nav", "svg"]
TEXT = ["hello", "a &amp; b", "x &lt; y", "caf&eacute;", "1 < 2", "  spaced\n  out ", "é", "&#39;"]


def _page(rng: random.Random, depth: int = 0) -> str:
    parts = []
    for _ in range(rng.randint(1, 5)):
        kind = rng.randrange(10)
        if kind < 3 or depth > 3:
            parts.append(rng.choice(TEXT))
        elif kind == 3:
            href = rng.choice(['"/docs"', "'rel/x?a=1&amp;b=2'", "http://h/p", '"#top"'])
            parts.append(f"<a class=x href={href} data-v>{rng.choice(TEXT)}</a>")
        elif kind == 4:
            parts.append(
                rng.choice(["<br>", "<br/>", '<img alt="pic &amp; co" src=x.png>', "<hr />"])
            )
        elif kind == 5:
            parts.append(rng.choice(["<!-- a <b> comment -->", "<!DOCTYPE html>", "<?xml x?>"]))
        elif kind == 6:
            raw = rng.choice(["if (a < b) { x = '<p>'; }", "p > a { color: red }", ""])
            tag = rng.choice(["script", "style"])
            parts.append(f"<{tag} type=text/x>{raw}</{tag}>")
        else:
            tag = rng.choice(TAGS)
            attrs = rng.choice(["", ' id="i"', " hidden", " title='a > b'"])
            parts.append(
                f"<{tag}{attrs}>{_page(rng, depth + 1)}</{tag.upper() if kind == 7 else tag}>"
            )
    return "".join(parts)


def test_the_text_is_what_the_standard_librarys_parser_gave_on_real_markup() -> None:
    rng = random.Random(611)
    pages = [
        f"<html><head><title>T {n}</title></head><body>{_page(rng)}</body></html>"
        for n in range(1500)
    ]
    differ = [
        p
        for p in pages
        if html_to_text(p, "http://site/a/") != old_html_to_text(p, "http://site/a/")
    ]
    assert differ == []
    assert sum("](http://site/docs)" in html_to_text(p, "http://site/a/") for p in pages) > 100


@pytest.mark.parametrize(
    "page",
    [
        "<a " * 40_000,  # 53 s at this size with html.parser (3.11.7), quadratic beyond
        "<a" * 100_000,
        "<!--" * 100_000,
        "<![ x" * 1_000,  # html.parser: AssertionError from _markupbase
        "<![1]>" + "<p>after</p>",
        '<a href="' + "x" * 200_000,  # an attribute never closed
        "<script>" + "<" * 100_000,  # a script never closed
        "</" + " x" * 50_000,
    ],
    ids=[
        "a-space",
        "a",
        "comments",
        "marked-section",
        "bad-section",
        "open-attr",
        "open-script",
        "bogus-end",
    ],
)
def test_any_page_is_read_in_one_pass_without_an_error(page: str) -> None:
    code = (
        "import json, sys\nfrom vtcode.tools.html_text import html_to_text\n"
        "sys.stdout.write(json.dumps(html_to_text(json.load(sys.stdin), 'http://h/')))"
    )
    assert isinstance(json.loads(run_python(code, stdin=json.dumps(page)).stdout), str)
