"""The `task_tracker` tool: the plan the model keeps, which the harness checks before success.

Under `agent.harness.orchestration_mode = "plan_build_evaluate"` (with a `continuation_policy`
that covers exec) a run that tries to finish is accepted only when every step is `completed` and
every step's `verify` command exits 0 (`vtcode.loop.continuation`). The model writes the whole
list (`steps`) or changes one step (`step` + `status`); each call answers with the list as it
now stands, so the model always sees what the harness will check.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

from vtcode.messages import ToolSpec
from vtcode.tools.base import ToolContext, ToolError, ToolResult

__all__ = ["STATUSES", "TRACKER_TOOL", "Step", "TaskTracker", "TaskTrackerTool"]

TRACKER_TOOL = "task_tracker"
STATUSES = ("pending", "in_progress", "completed", "blocked")
MAX_STEPS = 50

_STEP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "minLength": 1, "maxLength": 500},
        "status": {"type": "string", "enum": list(STATUSES), "default": "pending"},
        "verify": {
            "type": "string",
            "maxLength": 2000,
            "description": "a shell command that exits 0 when this step is really done",
        },
    },
    "required": ["title"],
    "additionalProperties": False,
}

SPEC = ToolSpec(
    name=TRACKER_TOOL,
    description=(
        "Keep the plan of this task as steps with a status (pending, in_progress, completed, "
        "blocked) and an optional `verify` shell command that exits 0 when the step is done. "
        "Pass `steps` to write the whole plan, or `step` (1-based) and `status` to change one. "
        "Before the run can end as a success every step must be completed and every verify "
        "command must pass; the harness runs them."
    ),
    parameters={
        "type": "object",
        "properties": {
            "steps": {"type": "array", "items": _STEP_SCHEMA, "maxItems": MAX_STEPS},
            "step": {"type": "integer", "minimum": 1},
            "status": {"type": "string", "enum": list(STATUSES)},
        },
        "additionalProperties": False,
    },
)


@dataclasses.dataclass(slots=True)
class Step:
    title: str
    status: str = "pending"
    verify: str | None = None


class TaskTracker:
    """One run's plan (the tool writes it, the continuation reads it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._steps: list[Step] = []

    @property
    def steps(self) -> list[Step]:
        with self._lock:
            return [dataclasses.replace(s) for s in self._steps]

    def replace(self, steps: list[Step]) -> None:
        with self._lock:
            self._steps = steps

    def set_status(self, number: int, status: str) -> None:
        with self._lock:
            if not 1 <= number <= len(self._steps):
                raise ToolError(f"no step {number}: the plan has {len(self._steps)} step(s)")
            self._steps[number - 1].status = status

    def render(self) -> str:
        steps = self.steps
        if not steps:
            return "the plan is empty"
        lines = []
        for n, s in enumerate(steps, 1):
            verify = f" (verify: {s.verify})" if s.verify else ""
            lines.append(f"{n}. [{s.status}] {s.title}{verify}")
        return "\n".join(lines)


class TaskTrackerTool:
    """`task_tracker` over one run's `TaskTracker`."""

    spec = SPEC
    read_only = False  # it changes what the harness will accept; never batched with reads

    def __init__(self, tracker: TaskTracker) -> None:
        self.tracker = tracker

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        steps = arguments.get("steps")
        number = arguments.get("step")
        status = arguments.get("status")
        if steps is not None:
            if number is not None or status is not None:
                raise ToolError("pass either `steps` or `step` with `status`, not both")
            self.tracker.replace(
                [
                    Step(
                        title=s["title"],
                        status=s.get("status", "pending"),
                        verify=(s.get("verify") or "").strip() or None,
                    )
                    for s in steps
                ]
            )
        elif number is not None and status is not None:
            self.tracker.set_status(int(number), str(status))
        else:
            raise ToolError("pass `steps` (the whole plan) or `step` and `status`")
        rendered = self.tracker.render()
        return ToolResult(
            output=rendered, data={"steps": [dataclasses.asdict(s) for s in self.tracker.steps]}
        )
