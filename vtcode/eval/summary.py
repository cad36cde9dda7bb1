"""The result document from an eval's plan and its run records: per task and agent, per agent.

Pass rates per task use every recorded run of that task by that agent (n runs, c passed);
an agent's figure is the mean over the suite's tasks, counting a task with no run yet as
unknown (the document says `complete: false` until every planned run has a record).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from vtcode.eval.metrics import mean_or_none, median_or_none, pass_at_k, pass_hat_k
from vtcode.eval.results import (
    AgentSummary,
    EvalPlan,
    EvalReport,
    RunRecord,
    TaskSummary,
)

__all__ = ["build_report", "pass_rate"]


def _sum_cost(runs: Sequence[RunRecord]) -> float | None:
    """The total cost; None when any run's cost is unknown (a partial sum would mislead)."""
    costs = [r.cost_usd for r in runs]
    if not costs or any(c is None for c in costs):
        return None
    return round(sum(c for c in costs if c is not None), 6)


def _sum_known(values: Sequence[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _failures(runs: Sequence[RunRecord]) -> dict[str, int]:
    return dict(sorted(Counter(str(r.failure) for r in runs if r.failure is not None).items()))


def _round(x: float | None, digits: int = 4) -> float | None:
    return None if x is None else round(x, digits)


def _task_summary(task_id: str, agent: str, runs: Sequence[RunRecord], k: int) -> TaskSummary:
    n, c = len(runs), sum(r.passed for r in runs)
    return TaskSummary(
        task_id=task_id,
        agent=agent,
        runs=n,
        passed=c,
        pass_at_1=_round(c / n) if n else None,
        pass_at_k=_round(pass_at_k(n, c, k)) if n else None,
        pass_hat_k=_round(pass_hat_k(n, c, k)) if n else None,
        mean_turns=_round(mean_or_none([r.turns for r in runs]), 2),
        mean_prompt_tokens=_round(mean_or_none([r.prompt_tokens for r in runs]), 1),
        mean_completion_tokens=_round(mean_or_none([r.completion_tokens for r in runs]), 1),
        median_wall_seconds=_round(median_or_none([r.wall_seconds for r in runs]), 3),
        cost_usd=_sum_cost(runs),
        failures=_failures(runs),
    )


def _agent_summary(agent: str, tasks: Sequence[TaskSummary], runs: list[RunRecord]) -> AgentSummary:
    return AgentSummary(
        agent=agent,
        runs=len(runs),
        passed=sum(r.passed for r in runs),
        pass_at_1=_round(mean_or_none([t.pass_at_1 for t in tasks])),
        pass_at_k=_round(mean_or_none([t.pass_at_k for t in tasks])),
        pass_hat_k=_round(mean_or_none([t.pass_hat_k for t in tasks])),
        prompt_tokens=_sum_known([r.prompt_tokens for r in runs]),
        completion_tokens=_sum_known([r.completion_tokens for r in runs]),
        cost_usd=_sum_cost(runs),
        wall_seconds=round(sum(r.wall_seconds for r in runs), 3),
        median_wall_seconds_solved=_round(
            median_or_none([r.wall_seconds for r in runs if r.passed]), 3
        ),
        median_first_prompt_tokens=median_or_none([r.first_prompt_tokens for r in runs]),
        failures=_failures(runs),
    )


def build_report(plan: EvalPlan, records: Sequence[RunRecord]) -> EvalReport:
    """The document, runs ordered by task, agent, repetition."""
    runs = sorted(records, key=lambda r: (r.task_id, r.agent, r.repetition))
    tasks: list[TaskSummary] = []
    summary: list[AgentSummary] = []
    for agent in plan.agents:
        mine = [r for r in runs if r.agent == agent.label]
        per_task = [
            _task_summary(t, agent.label, [r for r in mine if r.task_id == t], plan.k)
            for t in plan.task_ids
        ]
        tasks += per_task
        summary.append(_agent_summary(agent.label, per_task, mine))
    tasks.sort(key=lambda t: (t.task_id, t.agent))
    planned = len(plan.agents) * len(plan.task_ids) * plan.k
    return EvalReport(
        eval_id=plan.eval_id,
        suite=plan.suite,
        created_at=plan.created_at,
        k=plan.k,
        complete=len(runs) == planned,
        agents=list(plan.agents),
        task_ids=list(plan.task_ids),
        runs=runs,
        tasks=tasks,
        summary=summary,
    )


def pass_rate(report: EvalReport) -> float:
    """The figure `--min-pass-rate` compares: the first agent's pass@1 (the agent under test;
    the others are the comparison), 0 when unknown."""
    return (report.summary[0].pass_at_1 or 0.0) if report.summary else 0.0
