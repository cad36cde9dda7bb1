"""The production LoopHooks: composes orientation, steering, context management and the
lifecycle hooks, one part per concern.

Each part does one job and plugs into the loop through `LoopHooks`; this module builds and
combines the parts for a run, so the runner stays ignorant of all of them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from vtcode.config.model import VtcodeConfig
from vtcode.context.tokens import TokenEstimator
from vtcode.events.enums import FileChangeKind
from vtcode.events.types import Usage
from vtcode.loop.outcomes import Outcome
from vtcode.loop.parts import LoopHooks, PromptVerdict, ToolHooks
from vtcode.loop.recorder import Recorder
from vtcode.messages import Message, ModelRequest
from vtcode.providers.base import Provider
from vtcode.runtime.context_part import ContextPart
from vtcode.runtime.ledger_part import make_part as make_ledger_part
from vtcode.runtime.lifecycle_part import LifecycleHooksPart
from vtcode.runtime.orient_part import make_part as make_orient_part
from vtcode.runtime.session_hooks import PartWarnings, SessionHooks
from vtcode.runtime.steering_part import SteeringPart
from vtcode.runtime.verify_part import make_part as make_verify_part
from vtcode.steering.queue import SteeringQueue
from vtcode.store.layout import session_dir
from vtcode.store.transcript import TRANSCRIPT_NAME, load_transcript

if TYPE_CHECKING:
    from vtcode.runtime.exec_run import ExecContext


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

    def prompt_submitted(self, prompt: str) -> PromptVerdict:
        verdicts = [p.prompt_submitted(prompt) for p in self.parts]
        blocked = next((v.blocked for v in verdicts if v.blocked is not None), None)
        return PromptVerdict(blocked, tuple(c for v in verdicts for c in v.context))

    def finish_request(self, request: ModelRequest) -> ModelRequest:
        for p in self.parts:
            request = p.finish_request(request)
        return request

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
            if p.compacts():
                compacted = p.compact(history, trigger=trigger, recorder=recorder)
                if compacted is not history:  # not skipped (a /compact that would not shrink)
                    for q in self.parts:
                        q.compacted()
                return compacted
        return history

    def edit_history(self, history: list[Message], recorder: Recorder) -> list[Message]:
        for p in self.parts:
            history = p.edit_history(history, recorder)
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

    def stop_blocked(self) -> str | None:
        return next((r for p in self.parts if (r := p.stop_blocked()) is not None), None)

    def verify_changes(
        self, changed: Mapping[str, FileChangeKind], answer: str, recorder: Recorder
    ) -> str | None:
        return next(
            (r for p in self.parts if (r := p.verify_changes(changed, answer, recorder))), None
        )

    def compacts(self) -> bool:
        return any(p.compacts() for p in self.parts)

    def fresh_context(self) -> None:
        for p in self.parts:
            p.fresh_context()

    def set_segment_mode(self, mode: str) -> None:
        for p in self.parts:
            p.set_segment_mode(mode)

    def current_segment(self) -> str | None:
        return next((s for p in self.parts if (s := p.current_segment()) is not None), None)


@dataclasses.dataclass(frozen=True, slots=True)
class ContextParts:
    """The parts that manage one session's context, sharing its warnings and hook runner."""

    steering: SteeringPart
    context: ContextPart
    lifecycle: LifecycleHooksPart

    def all(self) -> list[LoopHooks]:
        # Order matters where parts act at the same point: follow-ups are committed before the
        # context part measures a request; the blocked handoff and the context state are
        # written before the `stop`/`session_end` hooks run.
        return [self.steering, self.context, self.lifecycle]


def context_parts(
    *,
    workspace: Path,
    session_id: str,
    config: VtcodeConfig,
    provider: Provider,
    resumed: bool = False,
    forked_from: str | None = None,
    estimator: TokenEstimator | None = None,
    env: Mapping[str, str] | None = None,
    thread_id: str | None = None,
) -> ContextParts:
    """Build the lifecycle-hooks, steering and context parts of one run of one session.

    `resumed` without `forked_from` continues the session: its transcript tells the steering
    part which follow-ups were already applied and the context part the pressure to start from.
    """
    root = Path(workspace).absolute()
    transcript_path = session_dir(root, session_id) / TRANSCRIPT_NAME
    warnings = PartWarnings()
    hooks = SessionHooks(
        workspace=root,
        session_id=session_id,
        config=config,
        transcript_path=str(transcript_path),
        warnings=warnings,
        env=env,
    )
    history = load_transcript(transcript_path).messages if resumed and forked_from is None else None
    queue = SteeringQueue(root, session_id, lock_timeout=config.store.lock_timeout_secs)
    steering = SteeringPart(queue, warnings, resumed_transcript=history)
    context = ContextPart(
        hooks=hooks,
        config=config,
        provider=provider,
        steering=steering,
        resumed_transcript=history,
        estimator=estimator,
        thread_id=thread_id,
    )
    return ContextParts(steering, context, LifecycleHooksPart(hooks, resumed=resumed))


def default_hooks_factory(ctx: ExecContext) -> LoopHooks:
    """Every part of an exec-style run: orientation first, then context management."""
    parts: list[LoopHooks] = []
    orient = make_orient_part(ctx)
    if orient is not None:
        parts.append(orient)
    built = context_parts(
        workspace=ctx.workspace,
        session_id=ctx.session_id,
        config=ctx.config,
        provider=ctx.provider,
        resumed=ctx.resumed,
        forked_from=ctx.forked_from,
    )
    parts.extend(built.all())
    ledger = make_ledger_part(ctx.config, ctx.provider.model)
    if ledger is not None:
        parts.append(ledger)
    verifier = make_verify_part(ctx)
    if verifier is not None:
        parts.append(verifier)
    return CompositeHooks(parts)
