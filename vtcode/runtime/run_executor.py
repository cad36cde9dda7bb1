"""The run's tool executor: who decides a call (nobody headless, or the person), what the model
is offered (the profile's view, `--tools`), and the limits on calls.

Out of `exec_run.py` so that module keeps to wiring the run; one place builds the executor for
both a headless run and one with a person to ask.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from vtcode.config.model import VtcodeConfig
from vtcode.loop.parts import ToolHooks
from vtcode.loop.tool_exec import CatalogView, RegistryToolExecutor
from vtcode.tools.base import ToolContext
from vtcode.tools.permissions import PermissionPolicy, PermissionVerdict, headless
from vtcode.tools.registry import ToolRegistry
from vtcode.tools.tool_limits import ToolLimits

# What a person answers for a call the rules leave to them: (tool, arguments, rules' verdict).
AskPerson = Callable[[str, Any, PermissionVerdict], PermissionVerdict]


def build_executor(
    cfg: VtcodeConfig,
    workspace: Path,
    registry: ToolRegistry,
    ctx: ToolContext,
    *,
    ask: AskPerson | None,
    tool_limits: ToolLimits | None,
    tool_hooks: Sequence[ToolHooks],
    view: CatalogView | None,
) -> RegistryToolExecutor:
    """Headless (`ask` None): the full-auto allow-list and headless verdicts; otherwise every
    call the rules leave open goes to `ask`."""
    policy = PermissionPolicy.from_config(cfg, full_auto=ask is None, workspace=workspace)
    limits = tool_limits if tool_limits is not None and tool_limits.active else None
    if ask is None:
        check: Callable[[str, Any], PermissionVerdict] = lambda tool, args: headless(  # noqa: E731
            policy.check(tool, args)
        )
    else:
        person = ask
        check = lambda tool, args: person(tool, args, policy.check(tool, args))  # noqa: E731
    executor = RegistryToolExecutor(
        registry,
        ctx,
        permission=ToolLimits.wrap(limits, workspace, check),
        allowed=cfg.automation.full_auto.allowed_tools if ask is None else None,
        tool_hooks=tool_hooks,
        offered=limits.offers if limits is not None else None,
        view=view,
    )
    executor.max_tool_retries = cfg.agent.harness.max_tool_retries  # loop/tool_retry.py
    return executor
