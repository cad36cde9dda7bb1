"""Executes a model's tool call: catalog lookup, permissions, pre/post hooks, the tool itself.

The outcome mapping is upstream's: an unknown tool is `invalid_tool`, a policy refusal
`permission_rejected`, a hook refusal `hook_denied`, schema-invalid arguments and tool failures
`error`, a cancellation `cancelled`. Every refusal still answers the model (a tool message), so
the loop goes on.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from vtcode.events.enums import ToolCallStatus, ToolOutcome
from vtcode.loop import tool_retry
from vtcode.loop.cancel import CancelToken
from vtcode.loop.parts import ToolExecutor, ToolHooks, ToolRunOutcome
from vtcode.mcp.names import is_mcp_name
from vtcode.messages import ToolCall, ToolSpec
from vtcode.tools.base import ToolContext, ToolError
from vtcode.tools.permissions import PERMISSION_REJECTED, Decision, PermissionVerdict
from vtcode.tools.registry import InvalidToolArguments, ToolRegistry, UnknownToolError

PermissionCheck = Callable[[str, Any], PermissionVerdict]


class CatalogView(Protocol):
    """How the catalog is shown to the model (the compact harness, `tools/compact_catalog.py`):
    which tools are offered, each spec as shown, and the defaults a shown spec omits."""

    def offers(self, name: str) -> bool: ...

    def present(self, spec: ToolSpec) -> ToolSpec: ...

    def complete(self, name: str, arguments: Any) -> Any: ...

    def show(self, name: str, output: str, spool: Path | None = None) -> str: ...


# tool name -> why a tool missing from the catalog cannot run (e.g. its MCP server is down)
UnknownToolHint = Callable[[str], str | None]


def _refused(message: str, outcome: ToolOutcome) -> ToolRunOutcome:
    return ToolRunOutcome(
        output=message, status=ToolCallStatus.FAILED, outcome=outcome, rejected=True
    )


class RegistryToolExecutor(ToolExecutor):
    """The production executor over a `ToolRegistry`."""

    def __init__(
        self,
        registry: ToolRegistry,
        ctx: ToolContext,
        *,
        permission: PermissionCheck | None = None,
        tool_hooks: Sequence[ToolHooks] = (),
        allowed: list[str] | None = None,
        notices: Callable[[], list[str]] | None = None,
        unknown_tool_hint: UnknownToolHint | None = None,
        offered: Callable[[str], bool] | None = None,
        view: CatalogView | None = None,
    ) -> None:
        self.registry = registry
        self.offered = offered  # a run's own narrowing of the catalog (--tools, ...)
        self.view = view  # None: every allowed tool, shown with its full spec
        self.ctx = ctx
        self.permission = permission
        if permission is not None:  # the same check for what a call reaches later (redirects)
            ctx.permission = self._verdict
        self.tool_hooks = tuple(tool_hooks)
        self.allowed = allowed
        self.notices = notices  # extra tool warnings to emit (the run's MCP manager)
        self.unknown_tool_hint = unknown_tool_hint
        self._harness_tools: dict[str, bool] = {}  # the harness's own tools: name -> listed
        self.max_tool_retries = 0  # agent.harness.max_tool_retries (set by the run)

    def accept_unlisted(self, name: str, *, listed: bool) -> None:
        """A harness tool (`task_tracker`) runs whatever the allow-list says; `listed` puts it
        in the catalog the model is offered."""
        self._harness_tools[name] = listed

    def _allowed(self, name: str) -> bool:
        """The allow-list holds names or globs (`mcp__*`), as `PermissionPolicy` reads it."""
        if name in self._harness_tools:
            return True
        if self.offered is not None and not self.offered(name):
            return False
        if self.view is not None and not is_mcp_name(name) and not self.view.offers(name):
            return False
        return self.allowed is None or any(fnmatch.fnmatchcase(name, p) for p in self.allowed)

    def catalog(self) -> tuple[ToolSpec, ...]:
        names = [
            n
            for n in self.registry.names()
            if self._allowed(n) and self._harness_tools.get(n, True)
        ]
        specs = self.registry.specs(names)
        if self.view is None:
            return specs
        return tuple(self.view.present(s) for s in specs)

    def is_read_only(self, name: str) -> bool:
        if is_mcp_name(name) or name not in self.registry or not self._allowed(name):
            return False
        return bool(self.registry.get(name).read_only)

    def item_kind(self, name: str) -> str:
        return "mcp_tool_call" if is_mcp_name(name) else "tool_invocation"

    def take_notices(self) -> list[str]:
        return self.notices() if self.notices is not None else []

    def execute(self, call: ToolCall, arguments: Any, cancel: CancelToken) -> ToolRunOutcome:
        if call.name not in self.registry or not self._allowed(call.name):
            hint = self.unknown_tool_hint(call.name) if self.unknown_tool_hint else None
            if hint is not None:
                return ToolRunOutcome(
                    output=hint, status=ToolCallStatus.FAILED, outcome=ToolOutcome.ERROR
                )
            known = ", ".join(s.name for s in self.catalog())
            return _refused(
                f"unknown tool {call.name!r}; available tools: {known}", ToolOutcome.INVALID_TOOL
            )
        if self.permission is not None and call.name not in self._harness_tools:
            # a harness tool only writes the run's own state (the plan), never the workspace
            verdict = self._verdict(call.name, arguments)
            if not verdict.allowed:
                return _refused(
                    f"permission denied for {call.name}: {verdict.reason}",
                    ToolOutcome.PERMISSION_REJECTED,
                )
        for hook in self.tool_hooks:
            denial = hook.pre_tool(call.name, arguments)
            if denial is not None:
                return _refused(f"blocked by pre_tool_use hook: {denial}", ToolOutcome.HOOK_DENIED)
        self.ctx.cancel = cancel.event
        if self.view is not None:
            arguments = self.view.complete(call.name, arguments)
        try:
            args = self.registry.validate(call.name, arguments)
        except (InvalidToolArguments, UnknownToolError) as e:
            return _refused(str(e), ToolOutcome.ERROR)
        tool = self.registry.get(call.name)
        # Not `interruptible`: tools watch `ctx.cancel` and return promptly on their own, so a
        # signal never leaves a started process unrecorded. A transient failure of a call that
        # is safe to repeat is retried here, inside one pre/post hook pair (loop/tool_retry.py).
        result, retries = tool_retry.run(
            lambda: tool.run(args, self.ctx),
            retries=self.max_tool_retries,
            safe=tool_retry.retry_safe(tool),
            cancel=self.ctx.cancel,
        )
        if isinstance(result, ToolError):
            tries = f" (tried {len(retries) + 1} times)" if retries else ""
            out = ToolRunOutcome(
                output=f"{result}{tries}",
                status=ToolCallStatus.FAILED,
                outcome=ToolOutcome.ERROR,
                retries=retries,
            )
        else:
            ok = result.success
            spool = None if result.spool_path is None else self.ctx.workspace / result.spool_path
            view = self.view
            shown = result.output if view is None else view.show(call.name, result.output, spool)
            out = ToolRunOutcome(
                output=shown,
                status=ToolCallStatus.COMPLETED if ok else ToolCallStatus.FAILED,
                outcome=ToolOutcome.SUCCESS if ok else ToolOutcome.ERROR,
                exit_code=result.exit_code,
                spool_path=result.spool_path,
                file_changes=[(c.path, c.kind) for c in result.file_changes],
                wait_seconds=result.wait_seconds,
                retries=retries,
            )
        response = {"output": out.output, "status": out.status.value, "exit_code": out.exit_code}
        for hook in self.tool_hooks:
            hook.post_tool(call.name, args, response)
        return out

    def _verdict(self, name: str, arguments: Any) -> PermissionVerdict:
        """The permission check, then the permission_request hooks for an `ask` nobody can
        answer; tools get it as `ctx.permission` for what a call reaches later (redirects)."""
        assert self.permission is not None
        verdict = self.permission(name, arguments if isinstance(arguments, dict) else {})
        if verdict.outcome == PERMISSION_REJECTED:
            answers = [h.permission_request(name, arguments, verdict.reason)
                       for h in self.tool_hooks]  # fmt: skip
            if True in answers and False not in answers:
                verdict = PermissionVerdict(Decision.ALLOW, verdict.rule, "permission_request")
        return verdict

    def close(self) -> None:
        self.registry.close()
