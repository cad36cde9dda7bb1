"""An MCP server's tool as a vtcode `Tool`, and its `CallToolResult` as model-visible text.

The registry validates arguments against the server's own `inputSchema` before the call, so a
bad call never reaches the server; the permission rules and the full-auto allow-list see the
catalog name (`mcp__server__tool`). `item_kind` tells the loop to record the call as one
`mcp_tool_call` item instead of `tool_invocation` + `tool_output`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from vtcode.mcp.client import McpCallError, RemoteTool, ServerUnavailable
from vtcode.mcp.names import tool_name
from vtcode.mcp.runtime import CallCancelled, CallTimeout, LoopThread
from vtcode.messages import ToolSpec
from vtcode.tools.base import ToolContext, ToolError, ToolResult, TransientToolError

if TYPE_CHECKING:
    from mcp.types import CallToolResult

    from vtcode.mcp.client import McpServerConnection

__all__ = ["ITEM_KIND", "MAX_RESULT_CHARS", "McpTool", "render_result"]

ITEM_KIND = "mcp_tool_call"
MAX_RESULT_CHARS = 64 * 1024


def _block_text(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind in ("image", "audio"):
        data = getattr(block, "data", "") or ""
        mime = getattr(block, "mimeType", "?")
        return f"[{kind} {mime}, {len(data) * 3 // 4} bytes]"
    if kind == "resource":
        res = getattr(block, "resource", None)
        text = getattr(res, "text", None)
        if isinstance(text, str):
            return text
        return f"[resource {getattr(res, 'uri', '?')} ({getattr(res, 'mimeType', None) or '?'})]"
    if kind == "resource_link":
        return f"[resource link {getattr(block, 'uri', '?')}]"
    return f"[{kind or 'unknown'} content]"


def render_result(result: CallToolResult, limit: int = MAX_RESULT_CHARS) -> str:
    """The text the model sees: text blocks joined, other blocks described, JSON otherwise."""
    parts = [_block_text(b) for b in result.content]
    structured = getattr(result, "structuredContent", None)
    if not any(p.strip() for p in parts) and structured is not None:
        parts = [orjson.dumps(structured, option=orjson.OPT_SORT_KEYS).decode()]
    text = "\n".join(parts)
    if len(text) > limit:
        text = text[:limit] + f"\n[... {len(text) - limit} more characters not shown]"
    return text


class McpTool:
    """`mcp__<server>__<tool>`: calls the remote tool through the run's loop thread."""

    item_kind = ITEM_KIND

    def __init__(
        self, connection: McpServerConnection, remote: RemoteTool, runtime: LoopThread
    ) -> None:
        self.connection = connection
        self.remote = remote
        self.runtime = runtime
        self._spec = ToolSpec(
            name=tool_name(connection.name, remote.name),
            description=remote.description
            or f"Tool {remote.name!r} of the MCP server {connection.name!r}.",
            parameters=remote.input_schema,
        )

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    @property
    def read_only(self) -> bool:
        return False  # a server's hints are not ours to trust

    @property
    def retry_safe(self) -> bool:
        """A call that got no answer in time may be sent again when the server declared the tool
        read-only or idempotent: the worst a wrong hint costs is the repeat it promised was
        harmless (permissions and concurrency never rest on a hint)."""
        return self.remote.idempotent

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        server = self.connection.name
        timeout = self.connection.config.timeout_seconds
        if ctx.cancel.is_set():
            raise ToolError("cancelled before the MCP call was sent; it was not run")
        if not self.runtime.alive:
            raise ToolError(f"MCP server {server!r} is unavailable: the session was closed")
        try:
            result = self.runtime.run(
                self.connection.call(self.remote.name, arguments), timeout, cancel=ctx.cancel
            )
        except ServerUnavailable as e:
            raise ToolError(f"MCP server {server!r} is unavailable: {e}") from e
        except CallTimeout as e:
            raise TransientToolError(
                f"MCP tool {self._spec.name} gave no answer within {timeout:g}s"
            ) from e
        except CallCancelled as e:
            raise ToolError("cancelled while the MCP call was running") from e
        except McpCallError as e:
            raise ToolError(f"MCP server {server!r} answered with an error: {e}") from e
        return ToolResult(output=render_result(result), success=not result.isError)
