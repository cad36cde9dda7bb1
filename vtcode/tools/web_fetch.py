"""web_fetch: one URL's text for the model (HTML as readable text), under the network policy.

Every host the fetch reaches is a decision of the run's permission check: the first by the
executor before the tool runs, and each redirect's target here, before it is connected to
(`ToolContext.permission`, the same check with the same rules; a tool run without one follows no
redirect to another host). So a redirect cannot carry a fetch to a host the policy refuses, and a
private or loopback address is a host like any other: no rule for it, no fetch.

Bounded: http and https only, at most 5 redirects, `MAX_BODY_BYTES` read (the rest is cut, and
the answer says so), `MAX_TEXT_CHARS` of text returned, and one deadline over the whole fetch
(connect, every read, every hop), so a server that drips bytes cannot hold the run. A URL with
credentials (`https://user:pass@host/`) is refused: the tool never sends them, and the
answer only ever shows URLs without them (the event log's redactor masks them in arguments).
"""

from __future__ import annotations

import http.client
import re
import ssl
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from vtcode.messages import ToolSpec
from vtcode.tools.base import ToolContext, ToolError, ToolResult
from vtcode.tools.html_text import html_to_text
from vtcode.tools.net_policy import TOOL_NAME, fetch_host

__all__ = ["MAX_BODY_BYTES", "MAX_TEXT_CHARS", "WebFetchTool"]

MAX_BODY_BYTES = 2 * 1024 * 1024  # read from the server, at most
MAX_TEXT_CHARS = 100_000  # returned to the model, at most
MAX_REDIRECTS = 5
DEADLINE_SECS = 30.0
USER_AGENT = "vtcode-web-fetch/1 (+https://github.com/vinhnx/vtcode)"
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_TEXTUAL = re.compile(r"^(text/|application/(json|xml|xhtml\+xml|javascript|[\w.+-]+\+(json|xml)))")

SPEC = ToolSpec(
    name=TOOL_NAME,
    description=(
        "Fetch an http(s) URL and return its text (HTML converted to readable text with "
        "markdown links). Only hosts the network policy allows can be fetched; redirects are "
        "checked the same way. Output is capped."
    ),
    parameters={
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "the http:// or https:// URL to fetch"},
            "max_chars": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_TEXT_CHARS,
                "description": f"return at most this many characters (default {MAX_TEXT_CHARS})",
            },
        },
        "required": ["url"],
        "additionalProperties": False,
    },
)


def _display(url: str) -> str:
    """The URL as shown: without any userinfo."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "<an unparsable URL>"
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{port}" if port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))


@dataclass(slots=True)
class _Page:
    url: str
    status: int
    content_type: str
    body: bytes
    cut: bool


class WebFetchTool:
    """The web_fetch tool (read-only: it changes nothing in the workspace)."""

    def __init__(self, *, deadline_secs: float = DEADLINE_SECS) -> None:
        self.deadline_secs = deadline_secs

    @property
    def spec(self) -> ToolSpec:
        return SPEC

    @property
    def read_only(self) -> bool:
        return True

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        url = str(arguments["url"]).strip()
        _check_url(url)
        limit = int(arguments.get("max_chars") or MAX_TEXT_CHARS)
        page = self._fetch(url, ctx)
        text = _text(page)
        shown = text[:limit]
        notes = []
        if page.cut:
            notes.append(f"body cut at {MAX_BODY_BYTES} bytes")
        if len(text) > limit:
            notes.append(f"text cut at {limit} of {len(text)} characters")
        head = f"URL: {page.url}\nStatus: {page.status}\nContent-Type: {page.content_type}\n"
        if notes:
            head += f"Truncated: {'; '.join(notes)}\n"
        return ToolResult(
            output=f"{head}\n{shown}",
            data={
                "url": page.url,
                "status": page.status,
                "bytes": len(page.body),
                "truncated": bool(notes),
            },
        )

    def _fetch(self, url: str, ctx: ToolContext) -> _Page:
        deadline = time.monotonic() + self.deadline_secs
        first_host = fetch_host(url)
        for _ in range(MAX_REDIRECTS + 1):
            if ctx.cancel.is_set():
                raise ToolError("web_fetch cancelled")
            status, headers, body, cut = _get(url, deadline, self.deadline_secs, ctx)
            location = headers.get("location")
            if status not in _REDIRECTS or not location:
                ctype = headers.get("content-type", "")
                return _Page(_display(url), status, ctype, body, cut)
            target = urljoin(url, location.strip())
            if fetch_host(target) is None:
                raise ToolError(f"{_display(url)} redirected to a URL that is not http(s): refused")
            _check_url(target)
            _recheck(target, first_host, ctx)
            url = target
        raise ToolError(f"more than {MAX_REDIRECTS} redirects; stopped at {_display(url)}")


def _check_url(url: str) -> None:
    if fetch_host(url) is None:
        raise ToolError(
            f"not an http(s) URL with a host: {_display(url) if '://' in url else url!r}"
        )
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        raise ToolError(
            f"a URL with credentials is refused ({_display(url)}): web_fetch sends none"
        )


def _recheck(target: str, first_host: str | None, ctx: ToolContext) -> None:
    """A redirect's target goes through the run's permission check, like the first URL."""
    host = fetch_host(target)
    if ctx.permission is None:
        if host != first_host:
            raise ToolError(
                f"redirect to {_display(target)} refused: no permission check to ask for {host}"
            )
        return
    verdict = ctx.permission(TOOL_NAME, {"url": target})
    if not verdict.allowed:
        raise ToolError(f"redirect to {_display(target)} refused: {verdict.reason}")


def _get(
    url: str, deadline: float, secs: float, ctx: ToolContext
) -> tuple[int, dict[str, str], bytes, bool]:
    """One GET: (status, lower-case headers, body up to the cap, whether it was cut)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    left = deadline - time.monotonic()
    if left <= 0:
        raise ToolError(f"web_fetch timed out after {secs:g} s")
    conn: http.client.HTTPConnection
    if parts.scheme.lower() == "https":
        conn = http.client.HTTPSConnection(
            host, parts.port, timeout=left, context=ssl.create_default_context()
        )
    else:
        conn = http.client.HTTPConnection(host, parts.port, timeout=left)
    path = urlunsplit(("", "", parts.path or "/", parts.query, ""))
    try:
        conn.request(
            "GET",
            path,
            headers={
                "User-Agent": USER_AGENT,
                "Accept": "text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.5",
                "Accept-Encoding": "identity",
            },
        )
        resp = conn.getresponse()
        headers = {k.lower(): v for k, v in resp.getheaders()}
        chunks: list[bytes] = []
        got = 0
        cut = False
        while True:
            if ctx.cancel.is_set():
                raise ToolError("web_fetch cancelled")
            left = deadline - time.monotonic()
            if left <= 0:
                raise ToolError(f"web_fetch timed out after {secs:g} s reading {_display(url)}")
            if conn.sock is not None:
                conn.sock.settimeout(left)
            chunk = resp.read1(min(64 * 1024, MAX_BODY_BYTES + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
            if got > MAX_BODY_BYTES:
                cut = True
                break
        body = b"".join(chunks)[:MAX_BODY_BYTES]
        return resp.status, headers, body, cut
    except TimeoutError:
        raise ToolError(f"web_fetch timed out after {secs:g} s: {_display(url)}") from None
    except (OSError, http.client.HTTPException) as e:
        raise ToolError(f"web_fetch failed for {_display(url)}: {type(e).__name__}: {e}") from None
    finally:
        conn.close()


def _text(page: _Page) -> str:
    """The body as text: HTML made readable, other text decoded; binary refused."""
    ctype = page.content_type.split(";", 1)[0].strip().lower()
    if ctype and not _TEXTUAL.match(ctype):
        raise ToolError(f"{page.url} is {ctype}, not text: web_fetch returns text only")
    charset = "utf-8"
    m = re.search(r"charset=([\w.:-]+)", page.content_type, re.IGNORECASE)
    if m:
        charset = m.group(1)
    try:
        text = page.body.decode(charset, errors="replace")
    except LookupError:
        text = page.body.decode("utf-8", errors="replace")
    if ctype in ("text/html", "application/xhtml+xml") or (
        not ctype and text.lstrip()[:15].lower().startswith(("<!doctype html", "<html"))
    ):
        return html_to_text(text, page.url)
    return text
