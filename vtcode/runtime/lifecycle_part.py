"""The lifecycle-hooks part: `session_start`, `pre_tool_use`/`post_tool_use`, `stop`,
`session_end` (the `[hooks.lifecycle]` programs), at the points of the loop upstream runs them.

`pre_compact` and the `session_start` of source `compact` belong to a compaction and are run by
the context part, which shares this run's `SessionHooks`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from vtcode.hooks.models import (
    PostToolUsePayload,
    PreToolUsePayload,
    SessionEndPayload,
    SessionStartPayload,
    StopPayload,
)
from vtcode.loop.outcomes import Outcome
from vtcode.loop.parts import LoopHooks, ToolHooks
from vtcode.loop.recorder import Recorder
from vtcode.runtime.session_hooks import SessionHooks

__all__ = ["LifecycleHooksPart"]


class LifecycleHooksPart(LoopHooks):
    """Runs the session's lifecycle hooks; also the one that emits the warnings held so far."""

    def __init__(self, hooks: SessionHooks, *, resumed: bool) -> None:
        self.hooks = hooks
        self.resumed = resumed
        self._orientations = 0

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

    def tool_hooks(self) -> Sequence[ToolHooks]:
        if self.hooks.has("pre_tool_use") or self.hooks.has("post_tool_use"):
            return (self,)
        return ()

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

    def on_finish(self, outcome: Outcome, recorder: Recorder) -> None:
        self.hooks.warnings.flush()
        kind = outcome.kind
        self.hooks.run("stop", StopPayload(**self.hooks.common()))
        payload = SessionEndPayload(
            **self.hooks.common(), reason=kind.code, subtype=kind.subtype.value
        )
        self.hooks.run("session_end", payload, kind.code)
