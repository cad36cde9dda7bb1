"""Shapes of the loop-engineering artifacts: loop state, progress ledger, handoff."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated

from vtcode.jsontypes import U32, U64, Doc


class LoopStatus(StrEnum):
    """Status of a cron-driven loop; `running` and `paused` are resumable."""

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    PAUSED = "paused"


class BudgetStatus(StrEnum):
    """Result of checking a loop's cost budget before a step."""

    OK = "ok"
    TOKEN_LIMIT_REACHED = "token_limit_reached"
    COST_LIMIT_REACHED = "cost_limit_reached"
    STEP_LIMIT_REACHED = "step_limit_reached"


@dataclass(frozen=True, slots=True, kw_only=True)
class CumulativeTokens:
    """Tokens and cost spent by all steps of a loop so far."""

    input_tokens: U64 = 0
    output_tokens: U64 = 0
    total_cost_usd: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class CostBudget:
    """Limits checked before each step (upstream's original `CostBudget` defaults)."""

    max_total_tokens: U64 = 1_000_000
    max_cost_usd: float = 10.0
    max_steps: U32 = 50


class LoopStepStatus(StrEnum):
    """Where one step of a loop stands (the crash-safe protocol's record)."""

    STARTED = "started"  # recorded before the step's session runs
    DONE = "done"  # the session completed successfully
    FAILED = "failed"  # the session completed with a non-success outcome
    INTERRUPTED = "interrupted"  # found `started` by a later invocation: the process died
    ERROR = "error"  # the step could not start (bad script, config); it is retried


@dataclass(frozen=True, slots=True, kw_only=True)
class LoopStep:
    """One step attempt: a new exec-style session with orientation."""

    index: Annotated[U32, Doc("1-based step number")]
    session_id: str
    status: LoopStepStatus
    started_at: str
    finished_at: str | None = None
    exit_code: int | None = None
    outcome: Annotated[str | None, Doc("thread.completed subtype of the step's session")] = None
    input_tokens: U64 = 0
    output_tokens: U64 = 0
    cost_usd: float | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class LoopRunState:
    """`.vtcode/state/loop-<id>.json`, replaced atomically under the loop's lock."""

    loop_id: str
    step_index: U32
    last_artifact_path: str | None = field(default=None, metadata={"nullable": True})
    status: LoopStatus
    started_at: str
    updated_at: str
    cumulative_tokens: CumulativeTokens = field(default_factory=CumulativeTokens)
    budget: CostBudget = field(default_factory=CostBudget)
    version: U64 = field(default=0, metadata={"doc": "bumped on every write"})
    prompt: str | None = None
    last_session_id: str | None = None
    last_outcome: str | None = None
    steps: Annotated[list[LoopStep], Doc("recent step attempts, oldest first (bounded window)")] = (
        field(default_factory=list)
    )
    last_error: str | None = None


class MilestoneStatus(StrEnum):
    """Status of one milestone in the progress ledger."""

    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    DONE = "done"
    BLOCKED = "blocked"


@dataclass(frozen=True, slots=True, kw_only=True)
class Milestone:
    """One deliverable tracked by the progress ledger."""

    id: str
    description: str
    status: MilestoneStatus = MilestoneStatus.PENDING


@dataclass(frozen=True, slots=True, kw_only=True)
class ProgressLedger:
    """`.vtcode/sessions/<id>/derived/progress.json`."""

    session_id: str
    goal: str
    milestones: list[Milestone] = field(default_factory=list)
    confidence: float = 1.0
    stalled_since: str | None = field(default=None, metadata={"nullable": True})
    updated_at: str
    previous_session_id: str | None = field(default=None, metadata={"nullable": True})
    handoff_summary: str | None = field(default=None, metadata={"nullable": True})
    known_issues: list[str] = field(default_factory=list)
    git_checkpoint: str | None = field(default=None, metadata={"nullable": True})
    consecutive_stalls: Annotated[
        U32, Doc("vtcode: stalled turns in a row (the on_stall context-reset signal)")
    ] = 0


class BoundaryStatus(StrEnum):
    """Where one feature stands at a handoff."""

    DONE = "done"
    IN_PROGRESS = "in_progress"
    NOT_STARTED = "not_started"
    BLOCKED = "blocked"


@dataclass(frozen=True, slots=True, kw_only=True)
class BoundaryItem:
    """One feature or deliverable and its status."""

    feature: str
    status: BoundaryStatus
    notes: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HandoffRequest:
    """What one agent hands to the next (rendered as the HANDOFF markdown)."""

    target_agent: str = ""
    state_summary: str
    modified_files: list[str] = field(default_factory=list)
    open_decisions: list[str] = field(default_factory=list)
    task_context: str = ""
    context_files: list[str] = field(default_factory=list)
    test_results: str | None = None
    boundary_status: list[BoundaryItem] = field(default_factory=list)
    known_issues: list[str] = field(default_factory=list)
    next_actions: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class VerificationResult:
    """What a read-only verifier decided about a proposed change (`vtcode agent verify`)."""

    approved: bool
    issues: list[str] = field(default_factory=list)
    reasoning: str = ""
    verifier: str = ""
    files: list[str] = field(default_factory=list)
    verifier_session_id: str | None = None
    parent_session_id: str | None = None
