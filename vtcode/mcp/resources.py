"""MCP resources as two tools: `mcp__list_resources` and `mcp__read_resource`.

Resources are data a server offers by URI (files, notes, records). They are registered once per
run, only when a started server listed at least one resource. The names carry the `mcp__` prefix
(so `mcp__*` allow-list entries and permission rules cover them, and the loop records their calls
as `mcp_tool_call` items) but no second `__`, so they can never equal a server's tool name
(`mcp__<server>__<tool>` always has one). The listing is the one taken at start (no request);
a read is one `resources/read` under the server's `timeout_seconds`, and fails like a tool call
when the server is gone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vtcode.mcp.client import McpCallError, ServerUnavailable
from vtcode.mcp.names import PREFIX
from vtcode.mcp.runtime import CallCancelled, CallTimeout, LoopThread
from vtcode.mcp.tools import MAX_RESULT_CHARS
from vtcode.messages import ToolSpec
from vtcode.tools.base import ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    from mcp.types import ReadResourceResult

    from vtcode.mcp.client import McpServerConnection

__all__ = ["LIST_NAME", "READ_NAME", "ListResourcesTool", "ReadResourceTool", "render_contents"]

LIST_NAME = f"{PREFIX}list_resources"
READ_NAME = f"{PREFIX}read_resource"
MAX_LISTED = 500


def _clip(text: str) -> str:
    if len(text) <= MAX_RESULT_CHARS:
        return text
    more = len(text) - MAX_RESULT_CHARS
    return text[:MAX_RESULT_CHARS] + f"\n[... {more} more characters not shown]"


def render_contents(result: ReadResourceResult) -> str:
    """Text contents joined; a binary one described by its type and size."""
    parts: list[str] = []
    for item in result.contents:
        text = getattr(item, "text", None)
        if isinstance(text, str):
            parts.append(text)
        else:
            blob = getattr(item, "blob", "") or ""
            mime = getattr(item, "mimeType", None) or "?"
            parts.append(f"[binary {mime}, {len(blob) * 3 // 4} bytes]")
    return _clip("\n".join(parts))


class _ResourceTool:
    def __init__(self, connections: list[McpServerConnection], runtime: LoopThread) -> None:
        self.connections = {c.name: c for c in connections if c.resources}
        self.runtime = runtime

    @property
    def read_only(self) -> bool:
        return False  # a server's reads are not ours to vouch for (they may have effects)

    def _server_param(self) -> dict[str, Any]:
        return {"type": "string", "enum": sorted(self.connections)}


class ListResourcesTool(_ResourceTool):
    """`mcp__list_resources`: the resources the servers listed at start."""

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=LIST_NAME,
            description="List the resources (URI, type, description) MCP servers offer; "
            "read one with mcp__read_resource.",
            parameters={
                "type": "object",
                "properties": {"server": self._server_param()},
                "additionalProperties": False,
            },
        )

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        wanted = arguments.get("server")
        lines: list[str] = []
        for name, conn in sorted(self.connections.items()):
            if wanted is not None and name != wanted:
                continue
            for res in conn.resources[:MAX_LISTED]:
                about = f" - {res.description}" if res.description else ""
                lines.append(f"{name} {res.uri} ({res.mime_type or '?'}) {res.name}{about}")
            if len(conn.resources) > MAX_LISTED:
                lines.append(f"{name}: {len(conn.resources) - MAX_LISTED} more not listed")
        return ToolResult(output=_clip("\n".join(lines) or "no resources"))


class ReadResourceTool(_ResourceTool):
    """`mcp__read_resource`: one `resources/read`."""

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=READ_NAME,
            description="Read a resource of an MCP server by its URI (see mcp__list_resources).",
            parameters={
                "type": "object",
                "properties": {
                    "server": self._server_param(),
                    "uri": {"type": "string", "minLength": 1},
                },
                "required": ["server", "uri"],
                "additionalProperties": False,
            },
        )

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        server = str(arguments["server"])
        uri = str(arguments["uri"])
        conn = self.connections[server]  # the schema's enum admits only these
        timeout = conn.config.timeout_seconds
        if ctx.cancel.is_set():
            raise ToolError("cancelled before the MCP read was sent; it was not run")
        if not self.runtime.alive:
            raise ToolError(f"MCP server {server!r} is unavailable: the session was closed")
        try:
            result = self.runtime.run(conn.read_resource(uri), timeout, cancel=ctx.cancel)
        except ServerUnavailable as e:
            raise ToolError(f"MCP server {server!r} is unavailable: {e}") from e
        except CallTimeout as e:
            raise ToolError(f"MCP server {server!r} gave no answer within {timeout:g}s") from e
        except CallCancelled as e:
            raise ToolError("cancelled while the MCP read was running") from e
        except McpCallError as e:
            raise ToolError(f"MCP server {server!r} answered with an error: {e}") from e
        return ToolResult(output=render_contents(result))
