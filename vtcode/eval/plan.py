"""Making (or reopening) an eval's plan from what the command line asked for.

A new eval id gets a new plan; an existing id resumes when the plan asked for is the same
(else exit 2: a changed plan would mix results of different evals); `--resume ID` takes the
stored plan as it is. Every agent's program is checked before anything is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from vtcode.clock import rfc3339
from vtcode.config.model import VtcodeConfig
from vtcode.errors import UsageError
from vtcode.eval.adapters import adapter_for, peer_endpoints
from vtcode.eval.persist import EvalStore, new_eval_id
from vtcode.eval.results import AgentSpec, EvalPlan
from vtcode.eval.runner import RunSettings, select_tasks
from vtcode.eval.suite import load_suite
from vtcode.eval.task import Task

__all__ = ["PlanRequest", "open_eval"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanRequest:
    """The eval the command line asks for."""

    workspace: Path
    suite: Path | None
    resume: str | None = None
    eval_id: str | None = None
    k: int = 1
    task_ids: Sequence[str] = ()
    tags: Sequence[str] = ()
    agents: Sequence[str] = ()
    agent_cmd: str | None = None
    provider: str | None = None
    model: str | None = None
    exec_args: Sequence[str] = ()
    sandbox: str | None = None
    config_file: Path | None = None


def _agents(req: PlanRequest) -> list[AgentSpec]:
    kinds = list(dict.fromkeys(req.agents)) or ([] if req.agent_cmd else ["vtcode"])
    specs = [AgentSpec(label=k, kind=k, provider=req.provider, model=req.model) for k in kinds]
    if req.agent_cmd is not None:
        specs.append(AgentSpec(label="cmd", kind="cmd", command=req.agent_cmd, model=req.model))
    return specs


def _new_plan(req: PlanRequest) -> EvalPlan:
    assert req.suite is not None
    suite = load_suite(req.suite)
    tasks = select_tasks(suite, req.task_ids, req.tags)
    return EvalPlan(
        eval_id=req.eval_id or new_eval_id(),
        suite=str(suite.path),
        created_at=rfc3339(),
        k=req.k,
        agents=_agents(req),
        task_ids=[t.id for t in tasks],
        exec_args=list(req.exec_args),
        sandbox=req.sandbox,
        provider=req.provider,
        model=req.model,
        config_file=None if req.config_file is None else str(req.config_file.absolute()),
    )


def _require_provider(req: PlanRequest, config: VtcodeConfig, tasks: Sequence[Task]) -> None:
    """vtcode runs need a provider, as `vtcode exec` does (no default: issue 26). A task with a
    replay script runs on it without one; any other task would end every run "crashed" with exit
    2, so the eval is refused before anything is written, naming those tasks."""
    kinds = list(dict.fromkeys(req.agents)) or ([] if req.agent_cmd else ["vtcode"])
    if "vtcode" not in kinds or req.provider or config.agent.provider:
        return
    if "--script" in req.exec_args:
        return
    unscripted = [t.id for t in tasks if t.script_path is None]
    if unscripted:
        shown = ", ".join(unscripted[:5]) + (", ..." if len(unscripted) > 5 else "")
        raise UsageError(
            f"no provider chosen for vtcode, and {len(unscripted)} task(s) have no replay"
            f" script: {shown}",
            hint="choose one with --provider NAME, VTCODE_PROVIDER or agent.provider, or"
            " select scripted tasks with --task/--tag",
        )


def _differences(old: EvalPlan, new: EvalPlan) -> list[str]:
    same = replace(new, created_at=old.created_at)
    fields = ("suite", "k", "agents", "task_ids", "exec_args", "sandbox", "provider", "model",
              "config_file")  # fmt: skip
    return [f for f in fields if getattr(old, f) != getattr(same, f)]


def open_eval(req: PlanRequest, config: VtcodeConfig) -> tuple[EvalStore, EvalPlan, RunSettings]:
    """The eval's store, its plan (written when new) and the settings its runs share."""
    if req.resume is not None:
        store = EvalStore(req.workspace, req.resume)
        plan = store.read_plan()
    else:
        plan = _new_plan(req)
        assert req.suite is not None
        _require_provider(req, config, select_tasks(load_suite(req.suite), req.task_ids, req.tags))
        store = EvalStore(req.workspace, plan.eval_id)
        if store.exists():
            old = store.read_plan()
            changed = _differences(old, plan)
            if changed:
                raise UsageError(
                    f"eval {plan.eval_id} exists with another plan ({', '.join(changed)} differ)",
                    location=str(store.plan_path),
                    hint=f"`vtcode eval --resume {plan.eval_id}` finishes it as planned",
                )
            plan = old
    settings = RunSettings(
        provider=plan.provider,
        model=plan.model,
        config_file=plan.config_file,
        endpoints=peer_endpoints(config, plan.provider),
    )
    for spec in plan.agents:  # a missing peer, model or endpoint: exit 2, nothing written
        adapter_for(spec).preflight(settings.model, settings.endpoints)
    if not store.exists():
        store.write_plan(plan)
    return store, plan, settings
