"""A run's MCP servers: start them together, put their tools in the catalog, stop them all.

`McpManager.start` connects every planned server at once (each bounded by its
`startup_timeout_seconds`), registers each listed tool as `mcp__<server>__<tool>` in the run's
`ToolRegistry` (the registry orders specs by name, so the catalog and its hash do not depend on
which server answered first), and keeps a queue of notices for the loop to emit as `error` items:
a server that did not start, tools that could not be offered, a server that died mid-session.
`close()` closes every session and ends every server process, and is safe to call twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import threading
from collections.abc import Sequence
from pathlib import Path

from vtcode.mcp.client import McpServerConnection, ServerUnavailable
from vtcode.mcp.names import split_name, tool_name, tool_name_problem
from vtcode.mcp.plan import McpPlan
from vtcode.mcp.resources import ListResourcesTool, ReadResourceTool
from vtcode.mcp.runtime import CallTimeout, LoopThread
from vtcode.mcp.tools import McpTool
from vtcode.tools.registry import ToolRegistry

__all__ = ["ALLOW_LIST_KEY", "McpManager"]

ALLOW_LIST_KEY = "automation.full_auto.allowed_tools"
_START_MARGIN_SECS = 15.0  # beyond the slowest server's timeout: its teardown is bounded too


def _allowed(name: str, allowed: Sequence[str] | None) -> bool:
    return allowed is None or any(fnmatch.fnmatchcase(name, p) for p in allowed)


class McpManager:
    """The MCP side of one run: a loop thread, one connection per started server."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.connections: list[McpServerConnection] = []
        self._runtime: LoopThread | None = None
        self._notices: list[str] = []
        self._offered: dict[str, int] = {}  # server -> tools registered
        self._down: dict[str, str] = {}  # server that never started -> why
        self._lock = threading.Lock()
        self._closed = False

    # ------------------------------------------------------------------ notices

    def notice(self, message: str) -> None:
        with self._lock:
            self._notices.append(message)

    def take_notices(self) -> list[str]:
        """Notices since the last call (the loop emits each as one `error` item)."""
        with self._lock:
            out, self._notices = self._notices, []
        return out

    def unavailable(self, name: str) -> str | None:
        """For a catalog name of a server that is not running: the failed call's answer."""
        parts = split_name(name)
        if parts is None:
            return None
        server = parts[0]
        if server in self._down:
            return f"MCP server {server!r} is unavailable: {self._down[server]}"
        for conn in self.connections:
            if conn.name == server and conn.reason is not None and not self._closed:
                return f"MCP server {server!r} is unavailable: {conn.reason}"
        return None

    def _on_dead(self, conn: McpServerConnection) -> None:
        count = self._offered.get(conn.name, 0)
        self.notice(
            f"MCP server {conn.name!r} is unavailable: {conn.reason}; its {count} "
            f"tool{'s' if count != 1 else ''} will fail for the rest of the session"
        )

    # ------------------------------------------------------------------ start

    @classmethod
    def start(
        cls,
        plan: McpPlan,
        registry: ToolRegistry,
        workspace: Path,
        *,
        allowed: Sequence[str] | None = None,
    ) -> McpManager:
        """Connect the planned servers and register their tools; never raises for a server."""
        self = cls(workspace)
        for text in plan.notices:
            self.notice(text)
        for name in plan.refused:
            self._down[name] = "not started: the workspace is not trusted"
        if not plan.servers:
            return self
        try:
            self._connect(plan, registry, allowed)
        except BaseException:  # e.g. Ctrl-C while servers start: leave no process behind
            self.close()
            raise
        return self

    def _connect(
        self, plan: McpPlan, registry: ToolRegistry, allowed: Sequence[str] | None
    ) -> None:
        self._runtime = LoopThread()
        self.connections = [
            McpServerConnection(s.name, s.config, self.workspace, on_dead=self._on_dead)
            for s in plan.servers
        ]
        budget = (
            max(c.config.startup_timeout_seconds for c in self.connections) + _START_MARGIN_SECS
        )
        try:
            results = self._runtime.run(self._start_all(), budget)
        except CallTimeout:
            results = [ServerUnavailable("start did not finish in time")] * len(self.connections)
        for conn, res in zip(self.connections, results, strict=True):
            if isinstance(res, BaseException):
                reason = conn.reason or str(res) or type(res).__name__
                self._down[conn.name] = reason
                self.notice(f"MCP server {conn.name!r} failed to start: {reason}")
                continue
            self._register(conn, registry, allowed)
        serving = [c for c in self.connections if c.alive and c.resources]
        if serving:
            registry.register(ListResourcesTool(serving, self._runtime))
            registry.register(ReadResourceTool(serving, self._runtime))

    async def _start_all(self) -> list[object]:
        return list(
            await asyncio.gather(*(c.start() for c in self.connections), return_exceptions=True)
        )

    def _register(
        self, conn: McpServerConnection, registry: ToolRegistry, allowed: Sequence[str] | None
    ) -> None:
        assert self._runtime is not None
        seen: set[str] = set()
        refused: list[str] = []
        hidden: list[str] = []
        for remote in sorted(conn.tools, key=lambda t: t.name):
            problem = tool_name_problem(conn.name, remote.name)
            if problem is None and remote.name in seen:
                problem = "the server lists it twice"
            if problem is None:
                try:
                    registry.register(McpTool(conn, remote, self._runtime))
                except ValueError as e:  # invalid inputSchema, or a name already taken
                    problem = str(e)
            if problem is not None:
                refused.append(f"{remote.name!r} ({problem})")
                continue
            seen.add(remote.name)
            self._offered[conn.name] = len(seen)
            if not _allowed(tool_name(conn.name, remote.name), allowed):
                hidden.append(remote.name)
        if refused:
            self.notice(f"MCP server {conn.name!r}: tools not offered: " + "; ".join(refused))
        if hidden:
            self.notice(
                f"MCP server {conn.name!r}: {len(hidden)} of {len(seen)} tools are not in "
                f"{ALLOW_LIST_KEY} and are not offered ({', '.join(hidden)}); allow them with "
                f'"{tool_name(conn.name, "*")}" or "mcp__*"'
            )

    # ------------------------------------------------------------------ stop

    def close(self) -> None:
        """Close every session and end every server process; bounded, never raises."""
        if self._closed:
            return
        self._closed = True
        runtime = self._runtime
        if runtime is None:
            return
        # On a timeout, the loop's own shutdown below cancels whatever is left.
        with contextlib.suppress(Exception):
            runtime.run(self._close_all(), 20.0)
        runtime.stop()

    async def _close_all(self) -> None:
        await asyncio.gather(*(c.aclose() for c in self.connections), return_exceptions=True)
