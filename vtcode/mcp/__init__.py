"""MCP tool discovery: servers from `[mcp.servers.NAME]` (stdio or streamable HTTP), their tools
in the catalog.

Nothing here imports the MCP SDK until a run has servers to start (`plan_servers` checks it is
installed, `McpManager.start` connects). Other layers use `is_mcp_name` to tell an MCP tool's
catalog name (`mcp__<server>__<tool>`) from a built-in.
"""

from vtcode.mcp.names import is_mcp_name, split_name, tool_name

__all__ = ["is_mcp_name", "split_name", "tool_name"]
