"""The network policy of web_fetch: which host a URL reaches, how `domain:` rules match it, and
whether a run offers the tool at all.

A fetch is off unless `sandbox.network = true` or a `web_fetch(domain:HOST)` allow rule covers
the host (`vtcode.tools.permissions` applies it, after deny and ask rules, for the first URL and,
through `ToolContext.permission`, for every redirect). A private or loopback address is a host
like any other: `web_fetch(domain:127.0.0.1)` allows it, nothing else does while the network
is off. HOST is a glob on the lower-case host name without port (`*.example.com` covers the
subdomains, not `example.com` itself). Kept apart from the tool so the permission check reads
it without loading `http.client` and `ssl`.
"""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from vtcode.config.model import VtcodeConfig

__all__ = ["DOMAIN_PREFIX", "TOOL_NAME", "domain_matches", "fetch_host", "fetch_offered"]

TOOL_NAME = "web_fetch"
DOMAIN_PREFIX = "domain:"


def fetch_host(url: str) -> str | None:
    """The host a web_fetch URL reaches, lower case (what `web_fetch(domain:HOST)` rules match);
    None when it is no http(s) URL with a host."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not host:
        return None
    return host.lower()


def domain_matches(pattern: str, host: str) -> bool:
    """Whether a rule pattern `domain:GLOB` covers `host`."""
    if not pattern.startswith(DOMAIN_PREFIX):
        return False
    glob = pattern[len(DOMAIN_PREFIX) :].strip().lower()
    return bool(glob) and fnmatch.fnmatchcase(host.lower(), glob)


def fetch_offered(config: VtcodeConfig) -> bool:
    """Whether a run offers web_fetch: the network is on, or an allow rule names a domain.

    With neither, every call would be refused, so the model is not offered a tool it cannot use
    (and the catalog of every other run stays as it was)."""
    from vtcode.config.rule_syntax import RuleSyntaxError, parse_rule

    if config.sandbox.network:
        return True
    for text in config.permissions.allow:
        try:
            tool, pattern = parse_rule(text)
        except RuleSyntaxError:
            continue
        if fnmatch.fnmatchcase(TOOL_NAME, tool) and (pattern or "").startswith(DOMAIN_PREFIX):
            return True
    return False
