"""The grammar of permission rules (`tool`, `tool(pattern)`) and hook matchers, read by config,
tools and hooks alike.

`vtcode.tools.permissions` matches rules against calls; the config loader must refuse the same
malformed rules (`exec_command(`, `exec_command()`, `mcp__x__(`) when a file is loaded or
checked, so that `config check` never calls valid what `exec` then refuses. This module is that
one definition; it sits in the config layer because tools import config, not the reverse.
"""

from __future__ import annotations

import re

__all__ = ["RULE_HINT", "RULE_LISTS", "RuleSyntaxError", "compile_matcher", "parse_rule"]

RULE_HINT = "use `tool`, `tool(pattern)` or `*`, e.g. `exec_command(git *)`"
RULE_LISTS = (("permissions", "allow"), ("permissions", "ask"), ("permissions", "deny"))
_RULE_RE = re.compile(r"^\s*([^()\s]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)


class RuleSyntaxError(ValueError):
    """A rule that is not `tool` or `tool(pattern)`; the message quotes it."""


def parse_rule(text: object) -> tuple[str, str | None]:
    """`(tool glob, pattern or None)` of a rule; `RuleSyntaxError` when it is malformed."""
    if not isinstance(text, str):
        raise RuleSyntaxError(f"a permission rule must be a string, got {text!r}")
    m = _RULE_RE.match(text)
    if not m or (m.group(2) is not None and not m.group(2).strip()):
        raise RuleSyntaxError(f"invalid permission rule {text!r}")
    pattern = m.group(2).strip() if m.group(2) is not None else None
    if m.group(1) == "web_fetch" and pattern is not None:
        host = pattern.removeprefix("domain:").strip() if pattern.startswith("domain:") else ""
        if not host or "/" in host or re.fullmatch(r"[^:]+:\d*", host):  # no scheme, path, port
            raise RuleSyntaxError(
                f"invalid permission rule {text!r}: a web_fetch rule names a host, "
                "e.g. `web_fetch(domain:docs.python.org)` or `web_fetch(domain:*.example.com)`"
            )
    return m.group(1), pattern


def compile_matcher(text: str | None) -> re.Pattern[str] | None:
    """A hook matcher (`[[hooks.lifecycle.EVENT]] matcher`): None, "" and "*" match every
    subject, anything else is a regex the whole subject must match. `RuleSyntaxError` when it
    does not compile: the hooks planner then skips the hook with a warning, and loading or
    checking the config refuses it with its location (a guard that silently never runs is
    worse than a run that does not start)."""
    if text in (None, "", "*"):
        return None
    try:
        return re.compile(text or "")
    except re.error as e:
        raise RuleSyntaxError(f"invalid regex: {e}") from None
