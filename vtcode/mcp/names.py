"""Catalog names of MCP tools: `mcp__<server>__<tool>`.

The prefix keeps MCP tools apart from the built-ins (no built-in starts with `mcp__`) and lets a
permission rule or allow-list entry name a whole server (`mcp__github__*`) or every MCP tool
(`mcp__*`). A server name may not contain `__` nor start or end with `_`, so the first `__` after
the prefix always ends the server name: two (server, tool) pairs can never produce one name.
Names that providers would refuse are rejected, never rewritten (a rewrite could collide).
"""

from __future__ import annotations

import re

__all__ = [
    "MAX_TOOL_NAME",
    "PREFIX",
    "is_mcp_name",
    "server_name_problem",
    "split_name",
    "tool_name",
    "tool_name_problem",
]

PREFIX = "mcp__"
SEP = "__"
# OpenAI function names: ^[a-zA-Z0-9_-]{1,64}$ (Anthropic accepts the same set).
MAX_TOOL_NAME = 64
_SERVER = re.compile(r"^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*\Z")
_TOOL = re.compile(r"^[A-Za-z0-9_-]+\Z")


def tool_name(server: str, tool: str) -> str:
    return f"{PREFIX}{server}{SEP}{tool}"


def is_mcp_name(name: str) -> bool:
    return name.startswith(PREFIX)


def split_name(name: str) -> tuple[str, str] | None:
    """(server, tool) of a catalog name, or None when it is not an MCP name."""
    if not is_mcp_name(name):
        return None
    server, sep, tool = name[len(PREFIX) :].partition(SEP)
    return (server, tool) if sep and server and tool else None


def server_name_problem(server: str) -> str | None:
    """Why `server` cannot name an MCP server (None when it can)."""
    if not _SERVER.match(server):
        return (
            f"invalid MCP server name {server!r}: use letters, digits, '-' and single '_' "
            "(no '__', no leading or trailing '_')"
        )
    if len(tool_name(server, "x")) > MAX_TOOL_NAME:
        return f"MCP server name {server!r} is too long for tool names of {MAX_TOOL_NAME} chars"
    return None


def tool_name_problem(server: str, tool: str) -> str | None:
    """Why the tool cannot be offered under its catalog name (None when it can)."""
    if not _TOOL.match(tool):
        return "its name has characters providers refuse (only letters, digits, '_' and '-')"
    if len(tool_name(server, tool)) > MAX_TOOL_NAME:
        return f"{tool_name(server, tool)!r} is longer than {MAX_TOOL_NAME} characters"
    return None
