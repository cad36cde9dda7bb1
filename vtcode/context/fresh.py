"""The plan-to-build "clear context and implement" handoff (contract: Fresh Plan Execution
Context). For the interactive loop, which calls it when the user picks that option.

Kept: the approved plan, the task tracker, the working tree, configuration, permissions and
aggregate usage (none of which live in the transcript). Cleared: the live transcript and the
transient continuation, recovery, cache-lineage, request-segment and tool-budget state (the
caller passes a `reset` callback for each holder of such state, e.g. `ContextPart.fresh_context`).
The new history is one user message: a compact handoff directive carrying the plan. Emits
`context.reset` (trigger `plan_approval`, `plan_preserved` and `tool_budget_reset` true), which the
Open Responses bridge forwards as `vtcode.context_reset`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from vtcode.events.enums import ContextResetTrigger
from vtcode.events.types import ContextResetEvent, ThreadEvent
from vtcode.messages import Message

__all__ = ["FreshContextHandoff", "fresh_plan_execution_context", "handoff_directive"]


@dataclass(frozen=True, slots=True)
class FreshContextHandoff:
    history: list[Message]
    event: ContextResetEvent


def handoff_directive(plan: str, *, plan_path: str | None, tracker_path: str | None) -> str:
    parts = [
        "The context was cleared to implement the approved plan. Implement it now, step by "
        "step; the plan below is authoritative. Re-read files before editing them.",
        "## Approved Plan",
        plan.strip() or "(the plan is empty)",
    ]
    refs = []
    if plan_path:
        refs.append(f"- Plan file: {plan_path}")
    if tracker_path:
        refs.append(f"- Task tracker: {tracker_path}")
    if refs:
        parts += ["## References", "\n".join(refs)]
    return "\n\n".join(parts)


def fresh_plan_execution_context(
    *,
    thread_id: str,
    turn_id: str,
    plan: str,
    context_usage_percent: float,
    plan_path: str | None = None,
    tracker_path: str | None = None,
    emit: Callable[[ThreadEvent], None] | None = None,
    reset: Sequence[Callable[[], None]] = (),
) -> FreshContextHandoff:
    """Clear the transcript for a build turn; returns the new history and the emitted event."""
    for clear in reset:
        clear()
    percent = max(0, min(100, round(context_usage_percent)))
    event = ContextResetEvent(
        thread_id=thread_id,
        turn_id=turn_id,
        trigger=ContextResetTrigger.PLAN_APPROVAL,
        plan_preserved=True,
        previous_context_usage_percent=percent,
        tool_budget_reset=True,
    )
    if emit is not None:
        emit(event)
    directive = handoff_directive(plan, plan_path=plan_path, tracker_path=tracker_path)
    return FreshContextHandoff(history=[Message(role="user", content=directive)], event=event)
