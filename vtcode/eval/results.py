"""The eval result document: one record per run, summaries per task and agent, as typed JSON.

These dataclasses are the one definition of the document: each run's record is persisted as
`.vtcode/evals/<EVAL_ID>/runs/<run-key>.json` (written whole: temp file, fsync, rename), the
document is rebuilt from those files, `vtcode eval --json` prints it and
`schemas/eval-report.schema.json` is generated from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from vtcode.eval.classify import FailureClass
from vtcode.jsontypes import Doc, IntRange

__all__ = [
    "EVAL_REPORT_SCHEMA_VERSION",
    "AgentSpec",
    "AgentSummary",
    "CheckRecord",
    "EvalPlan",
    "EvalReport",
    "RunRecord",
    "TaskSummary",
]

EVAL_REPORT_SCHEMA_VERSION = 1

Count = Annotated[int | None, IntRange(0, 2**63 - 1)]


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentSpec:
    """One agent of an eval, as the plan records it."""

    label: Annotated[str, Doc("column name: vtcode, codex, claude or cmd")]
    kind: Annotated[str, Doc("vtcode | codex | claude | cmd")]
    command: Annotated[str | None, Doc("the --agent-cmd template")] = None
    provider: str | None = None
    model: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalPlan:
    """`.vtcode/evals/<ID>/eval.json`: what an eval runs, so `--resume ID` can finish it."""

    schema_version: int = EVAL_REPORT_SCHEMA_VERSION
    eval_id: str
    suite: Annotated[str, Doc("the suite folder (absolute)")]
    created_at: str
    k: Annotated[int, IntRange(1, 10_000)]
    agents: list[AgentSpec]
    task_ids: list[str]
    exec_args: Annotated[
        list[str], Doc("options passed on to every `vtcode exec` (provider, model, -c, ...)")
    ] = field(default_factory=list)
    sandbox: Annotated[str | None, Doc("--sandbox, also used to confine peer agents")] = None
    provider: Annotated[str | None, Doc("--provider (null: replay with each task's script)")] = None
    model: str | None = None
    config_file: Annotated[str | None, Doc("the global --config file (absolute)")] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckRecord:
    """The checker's verdict on one run."""

    passed: bool
    exit_code: int | None = None
    timed_out: bool
    seconds: float
    output: Annotated[str, Doc("the end of its stdout + stderr")]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRecord:
    """One run of one task by one agent (`runs/<run-key>.json`)."""

    run_key: Annotated[str, Doc("<agent>.<task>.<repetition>")]
    task_id: str
    agent: str
    repetition: Annotated[int, IntRange(0, 10_000)]
    passed: bool
    failure: Annotated[FailureClass | None, Doc("null when passed")] = None
    exit_code: Annotated[int | None, Doc("the agent's; negative: killed by that signal")] = None
    timed_out: bool
    outcome_subtype: Annotated[str | None, Doc("thread.completed subtype (or the peer's)")] = None
    outcome_code: str | None = None
    turns: Count = None
    model_requests: Count = None
    tool_calls: Count = None
    prompt_tokens: Annotated[Count, Doc("total input tokens, cached included")] = None
    completion_tokens: Count = None
    cached_tokens: Count = None
    first_prompt_tokens: Annotated[
        Count,
        Doc(
            "the first turn's prompt: the first model request's, unless a nudge or a check "
            "continued that turn (then the sum of its requests)"
        ),
    ] = None
    cost_usd: Annotated[float | None, Doc("null when pricing is unknown")] = None
    wall_seconds: float
    check: CheckRecord | None = None
    protected_changed: Annotated[list[str], Doc("protected paths that differ")] = field(
        default_factory=list
    )
    session_id: str | None = None
    workspace: Annotated[str, Doc("where the run's workspace is kept")]
    log: Annotated[str | None, Doc("the run's own event log")] = None
    started_at: str
    finished_at: str
    error: Annotated[str | None, Doc("the end of the agent's stderr when it failed")] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskSummary:
    """One task by one agent over its repetitions."""

    task_id: str
    agent: str
    runs: int
    passed: int
    pass_at_1: float | None
    pass_at_k: Annotated[float | None, Doc("unbiased; null while fewer than k runs exist")]
    pass_hat_k: float | None
    mean_turns: float | None
    mean_prompt_tokens: float | None
    mean_completion_tokens: float | None
    median_wall_seconds: float | None
    cost_usd: float | None
    failures: Annotated[dict[str, int], Doc("failure class -> runs")]


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentSummary:
    """One agent over the whole suite: pass rates are means over tasks."""

    agent: str
    runs: int
    passed: int
    pass_at_1: float | None
    pass_at_k: float | None
    pass_hat_k: float | None
    prompt_tokens: Annotated[Count, Doc("null when no run reports tokens")]
    completion_tokens: Count
    cost_usd: float | None
    wall_seconds: float
    median_wall_seconds_solved: Annotated[float | None, Doc("median wall time of passed runs")]
    median_first_prompt_tokens: float | None
    failures: dict[str, int]


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalReport:
    """`vtcode eval --json`: the whole result of an eval."""

    schema_version: int = EVAL_REPORT_SCHEMA_VERSION
    eval_id: str
    suite: str
    created_at: str
    k: int
    complete: Annotated[bool, Doc("every planned run has a result")]
    agents: list[AgentSpec]
    task_ids: list[str]
    runs: list[RunRecord]
    tasks: list[TaskSummary]
    summary: list[AgentSummary]
