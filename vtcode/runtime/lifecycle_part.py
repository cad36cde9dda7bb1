"""The lifecycle-hooks part: `session_start`, `pre_tool_use`/`post_tool_use`, `stop`,
`session_end` (the `[hooks.lifecycle]` programs), at the points of the loop upstream runs them.

`pre_compact` and the `session_start` of source `compact` belong to a compaction and are run by
the context part, which shares this run's `SessionHooks`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from vtcode.hooks.models import (
    HookDecision,
    NotificationPayload,
    PermissionRequestPayload,
    PostToolUseFailurePayload,
    PostToolUsePayload,
    PreToolUsePayload,
    SessionEndPayload,
    SessionStartPayload,
    StopPayload,
    UserPromptSubmitPayload,
)
from vtcode.loop.outcomes import Outcome
from vtcode.loop.parts import LoopHooks, PromptVerdict, ToolHooks
from vtcode.loop.recorder import Recorder
from vtcode.runtime.session_hooks import SessionHooks

__all__ = ["MAX_STOP_BLOCKS", "LifecycleHooksPart"]

# How many times `stop` hooks may send a finished run back to work before it ends anyway: a
# hook that always blocks must not keep a headless run (and its bill) going forever.
MAX_STOP_BLOCKS = 3


class LifecycleHooksPart(LoopHooks):
    """Runs the session's lifecycle hooks; also the one that emits the warnings held so far."""

    def __init__(self, hooks: SessionHooks, *, resumed: bool) -> None:
        self.hooks = hooks
        self.resumed = resumed
        self._orientations = 0
        self._stop_blocks = 0
        self._stop_ran = False  # the `stop` hooks already ran for this ending (stop_blocked)

    def attach(self, recorder: Recorder) -> None:
        self.hooks.warnings.attach(recorder)

    def orientation(self) -> str | None:
        self._orientations += 1
        self.hooks.warnings.flush()
        source: Literal["startup", "resume", "clear"] = (
            ("resume" if self.resumed else "startup") if self._orientations == 1 else "clear"
        )  # "clear": re-orientation after a context reset
        payload = SessionStartPayload(**self.hooks.common(), source=source)
        self.hooks.run("session_start", payload, source)
        return None

    def prompt_submitted(self, prompt: str) -> PromptVerdict:
        """`user_prompt_submit`: exit 2 or `{"decision":"block"}` blocks the prompt (the reason
        ends the run); otherwise a hook's context (`hookSpecificOutput.additionalContext`, or
        its plain stdout as Claude Code reads it) is added after the prompt."""
        if not self.hooks.has("user_prompt_submit"):
            return PromptVerdict()
        payload = UserPromptSubmitPayload(**self.hooks.common(), prompt=prompt)
        context: list[str] = []
        for r in self.hooks.run("user_prompt_submit", payload):
            out = r.output
            if r.exit_code == 2 and not r.timed_out:
                return PromptVerdict(blocked=r.reason)
            if not r.ok:
                continue
            if out is not None and (out.decision is HookDecision.BLOCK or not out.continue_):
                return PromptVerdict(blocked=out.reason or out.stop_reason or "no reason given")
            extra = (out.hook_specific_output or {}).get("additionalContext") if out else None
            if out is None and r.stdout.strip():
                extra = r.stdout.strip()
            if isinstance(extra, str) and extra.strip():
                context.append(extra.strip())
        return PromptVerdict(context=tuple(context))

    def tool_hooks(self) -> Sequence[ToolHooks]:
        events = ("pre_tool_use", "post_tool_use", "post_tool_use_failure", "permission_request")
        return (self,) if any(self.hooks.has(e) for e in events) else ()

    def pre_tool(self, name: str, arguments: Any) -> str | None:
        payload = PreToolUsePayload(**self.hooks.common(), tool_name=name, tool_input=arguments)
        for r in self.hooks.run("pre_tool_use", payload, name):
            if r.denied:
                return r.reason
        return None

    def post_tool(self, name: str, arguments: Any, response: dict[str, Any]) -> None:
        payload = PostToolUsePayload(
            **self.hooks.common(), tool_name=name, tool_input=arguments, tool_response=response
        )
        self.hooks.run("post_tool_use", payload, name)
        if response.get("status") == "failed" and self.hooks.has("post_tool_use_failure"):
            failure = PostToolUseFailurePayload(
                **self.hooks.common(),
                tool_name=name,
                tool_input=arguments,
                error=str(response.get("output") or "")[:4000],
            )
            self.hooks.run("post_tool_use_failure", failure, name)

    def permission_request(self, name: str, arguments: Any, reason: str) -> bool | None:
        """A `notification` (permission_prompt), then the `permission_request` hooks: a deny
        (exit 2 or `{"decision":"deny"}`) wins over an allow; an allow needs an answer. Only
        an `ask` reaches here: a `deny` rule or the full-auto allow-list is never overridden."""
        if self.hooks.has("notification"):
            note = NotificationPayload(
                **self.hooks.common(),
                message=f"vtcode needs your permission to use {name}",
                notification_type="permission_prompt",
            )
            self.hooks.run("notification", note, "permission_prompt")
        if not self.hooks.has("permission_request"):
            return None
        payload = PermissionRequestPayload(
            **self.hooks.common(), tool_name=name, tool_input=arguments, reason=reason
        )
        answers = self.hooks.run("permission_request", payload, name)
        if any(r.denied for r in answers):
            return False
        allow = (HookDecision.ALLOW, HookDecision.APPROVE)
        if any(r.ok and r.output is not None and r.output.decision in allow for r in answers):
            return True
        return None

    def stop_blocked(self) -> str | None:
        """Run the `stop` hooks before a run ends with an answer; a `{"decision":"block"}` (or
        exit 2, as Claude Code reads it) with a reason continues it, at most MAX_STOP_BLOCKS
        times. `stop_hook_active` tells the hook it is answering its own continuation."""
        if not self.hooks.has("stop"):
            return None
        active = self._stop_blocks > 0
        results = self.hooks.run(
            "stop", StopPayload(**self.hooks.common(), stop_hook_active=active)
        )
        self._stop_ran = True
        if any(r.output is not None and not r.output.continue_ for r in results):
            return None  # `"continue": false`: the run ends here
        for r in results:
            blocks = r.exit_code == 2 and not r.timed_out
            if r.ok and r.output is not None and r.output.decision is HookDecision.BLOCK:
                blocks = True
            if not blocks:
                continue
            if self._stop_blocks >= MAX_STOP_BLOCKS:
                self.hooks.warnings.warn(
                    f"stop hook `{r.spec.label}` blocked the end {MAX_STOP_BLOCKS} times;"
                    " the run ends anyway"
                )
                return None
            self._stop_blocks += 1
            self._stop_ran = False
            return r.reason
        return None

    def on_finish(self, outcome: Outcome, recorder: Recorder) -> None:
        self.hooks.warnings.flush()
        kind = outcome.kind
        if not self._stop_ran:
            active = self._stop_blocks > 0
            self.hooks.run("stop", StopPayload(**self.hooks.common(), stop_hook_active=active))
        payload = SessionEndPayload(
            **self.hooks.common(), reason=kind.code, subtype=kind.subtype.value
        )
        self.hooks.run("session_end", payload, kind.code)
