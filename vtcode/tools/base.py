"""What a tool is to the loop: a spec for the model, a `run` that returns a bounded result."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from vtcode.events.enums import FileChangeKind
from vtcode.messages import ToolSpec

if TYPE_CHECKING:
    from vtcode.tools.permissions import PermissionVerdict


@dataclass(slots=True, kw_only=True)
class ToolContext:
    """Per-session facilities a tool may use; paths are confined to `workspace`."""

    workspace: Path
    session_id: str
    spool_dir: Path  # <workspace>/.vtcode/context/tool_outputs
    cancel: threading.Event = field(default_factory=threading.Event)
    long_running_ceiling_secs: float = 3600.0
    # The run's permission check (tool name, arguments), for a tool whose call reaches further
    # than its arguments say: web_fetch asks it for every redirect's target before following.
    permission: Callable[[str, Any], PermissionVerdict] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FileChange:
    path: str  # workspace-relative
    kind: FileChangeKind


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """A tool's answer. `output` is what the model sees (bounded); `data` the structured result.

    `wait_seconds` is time spent in an explicit `action: "wait"`, which the per-turn tool
    wall-clock budget excludes (contract: "Long-running command waits").
    """

    output: str
    success: bool = True
    exit_code: int | None = None
    spool_path: str | None = None
    file_changes: tuple[FileChange, ...] = ()
    data: dict[str, Any] | None = None
    wait_seconds: float = 0.0


class ToolError(Exception):
    """A tool failed in a way the model should be told about (bad path, missing file, ...)."""


class TransientToolError(ToolError):
    """A failure the same call may not meet again: a live MCP server gave no answer in time.

    Only this kind is retried by the harness (`agent.harness.max_tool_retries`), and only for a
    tool whose repeat is harmless (see `vtcode.loop.tool_retry`). A tool that answered, even with
    an error or a non-zero exit code, did not fail transiently: the same call would answer the
    same. `category` is upstream's error category name (`timeout`).
    """

    def __init__(self, message: str, *, category: str = "timeout") -> None:
        super().__init__(message)
        self.category = category


@runtime_checkable
class Tool(Protocol):
    """A tool. `read_only` tools may run in the verifier and in plan mode."""

    @property
    def spec(self) -> ToolSpec: ...

    @property
    def read_only(self) -> bool: ...

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run with schema-valid `arguments`; raise `ToolError` for a model-visible failure."""
        ...
