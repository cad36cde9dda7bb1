"""Which plan machinery a headless run gets: the plan-build-evaluate tracker, or a dry run.

- `continuation_tracker`: a `TaskTracker` when plan_build_evaluate applies (the mode, with a
  `continuation_policy` that covers a headless run); the runner then checks the plan before it
  accepts a finish (`vtcode.loop.continuation`).
- `exec --dry-run` (upstream: "read-only/planning enforcement; single-pass (no continuation)"):
  the catalog is the read-only tools plus `task_tracker`, the instructions ask for a plan and
  no change, and the plan the model wrote is printed; nothing is verified or continued.
"""

from __future__ import annotations

from vtcode.config.model import ContinuationPolicy, OrchestrationMode, VtcodeConfig
from vtcode.tools.task_tracker import TaskTracker

__all__ = ["DRY_RUN_INSTRUCTIONS", "continuation_tracker", "dry_run_config"]

DRY_RUN_INSTRUCTIONS = """

This is a dry run: a read-only planning pass. Do not change anything (you have only read-only \
tools). Read what you need, write the plan with the task_tracker tool (steps, each with a verify \
command where one can check it), then reply with a one-paragraph summary of the plan."""


def continuation_tracker(cfg: VtcodeConfig, *, interactive: bool) -> TaskTracker | None:
    """A plan for this run when plan_build_evaluate applies: `continuation_policy` `all`, or
    `exec_only` for a headless run; never in a chat (its user decides when a turn is done)."""
    h = cfg.agent.harness
    if interactive or h.orchestration_mode is not OrchestrationMode.PLAN_BUILD_EVALUATE:
        return None
    if h.continuation_policy is ContinuationPolicy.OFF:
        return None
    return TaskTracker()


def dry_run_config(cfg: VtcodeConfig) -> VtcodeConfig:
    """`cfg` whose full-auto allow-list is the read-only tools (no write, no command)."""
    from vtcode.runtime.subagents import read_only_config  # it runs exec: imported late

    return read_only_config(cfg)
