"""What a run reads from its config before it starts: the sandbox it requires, the final
answer's schema, the reasoning effort (each a located exit 2 when wrong, before any event)."""

from __future__ import annotations

from pathlib import Path

from vtcode.config.model import VtcodeConfig
from vtcode.errors import UsageError
from vtcode.loop.structured import load_output_schema
from vtcode.messages import OutputSchema
from vtcode.sandbox import Sandbox, SandboxState

__all__ = ["configured_schema", "reasoning_effort", "sandbox_state"]


def sandbox_state(cfg: VtcodeConfig) -> SandboxState:
    """The run's effective sandbox (probed once per process); exit 2 when required but absent."""

    state = Sandbox(cfg.sandbox).state
    if state.status == "unavailable" and cfg.sandbox.require:
        raise UsageError(
            f"sandbox.require is set, but no sandbox is available here: {state.reason}",
            hint="run where Landlock and namespaces work, or set sandbox.require = false",
        )
    return state


def configured_schema(cfg: VtcodeConfig, workspace: Path) -> OutputSchema | None:
    """`agent.output_schema`, loaded and checked (relative paths from the workspace)."""
    path = cfg.agent.output_schema
    if not path:
        return None
    return load_output_schema(workspace / Path(path).expanduser(), option="agent.output_schema")


def reasoning_effort(cfg: VtcodeConfig) -> str | None:
    """`agent.reasoning_effort` as the providers take it (None: the model's default)."""
    effort = cfg.agent.reasoning_effort
    return None if effort is None else effort.value
