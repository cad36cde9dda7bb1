"""The production LoopHooks: composes orientation, context management, steering and hooks.

Each concern lives in its own package and contributes one `LoopHooks` part; this module only
combines the parts for a run, so the runner stays ignorant of all of them.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from vtcode.events.types import Usage
from vtcode.loop.outcomes import Outcome
from vtcode.loop.parts import LoopHooks, ToolHooks
from vtcode.loop.recorder import Recorder
from vtcode.providers.messages import Message, ModelRequest

if TYPE_CHECKING:
    from vtcode.loop.exec_run import ExecContext

# Each part module exposes `make_part(ctx: ExecContext) -> LoopHooks | None`.
PART_MODULES: tuple[str, ...] = ("vtcode.runtime.orient_part", "vtcode.runtime.context_part")


class CompositeHooks(LoopHooks):
    """Calls every part in order; the first part that compacts or resets does so."""

    def __init__(self, parts: Sequence[LoopHooks]) -> None:
        self.parts = list(parts)

    def attach(self, recorder: Recorder) -> None:
        for p in self.parts:
            p.attach(recorder)

    def tool_hooks(self) -> Sequence[ToolHooks]:
        return [h for p in self.parts for h in p.tool_hooks()]

    def orientation(self) -> str | None:
        sections = [s for p in self.parts if (s := p.orientation())]
        return "\n\n".join(sections) if sections else None

    def before_request(self, request: ModelRequest) -> None:
        for p in self.parts:
            p.before_request(request)

    def after_response(self, usage: Usage) -> None:
        for p in self.parts:
            p.after_response(usage)

    def compaction_due(self, *, in_tool_loop: bool) -> bool:
        return any(p.compaction_due(in_tool_loop=in_tool_loop) for p in self.parts)

    def compact(self, history: list[Message], *, trigger: str, recorder: Recorder) -> list[Message]:
        for p in self.parts:
            if type(p).compact is not LoopHooks.compact:
                return p.compact(history, trigger=trigger, recorder=recorder)
        return history

    def reset_due(self) -> bool:
        return any(p.reset_due() for p in self.parts)

    def reset(self, recorder: Recorder) -> None:
        for p in self.parts:
            p.reset(recorder)

    def on_turn_end(self, *, made_progress: bool) -> None:
        for p in self.parts:
            p.on_turn_end(made_progress=made_progress)

    def on_finish(self, outcome: Outcome, recorder: Recorder) -> None:
        for p in self.parts:
            p.on_finish(outcome, recorder)

    def follow_ups(self) -> list[Message]:
        return [m for p in self.parts for m in p.follow_ups()]


def default_hooks_factory(ctx: ExecContext) -> LoopHooks:
    parts: list[LoopHooks] = []
    for name in PART_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name != name:
                raise
            continue
        part = module.make_part(ctx)
        if part is not None:
            parts.append(part)
    return CompositeHooks(parts)
