"""Running an eval: plan the runs, run the missing ones (J at a time), persist each, report.

One run: a fresh workspace in a private temp folder (outside any repository, so no agent picks
up the caller's AGENTS.md, CLAUDE.md or git root), the task materialised, protected files
fingerprinted, the agent started as a bounded child (`proc.run_bounded`), the protected files
compared, the check run, the agent's own log read (`adapters`), the failure classified; then
the run's folder is moved under `.vtcode/evals/<ID>/runs/<run-key>/` and its record written
last. Peer agents and `--agent-cmd` run inside vtcode's sandbox (Landlock: writable workspace,
temp and their private home; network on, since the model server is on the host's loopback;
a PID namespace, so nothing they start outlives them).
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from vtcode.clock import rfc3339
from vtcode.config.model import SandboxConfig, SandboxMode
from vtcode.errors import UsageError
from vtcode.eval.adapters import Adapter, RunContext, adapter_for
from vtcode.eval.classify import classify
from vtcode.eval.persist import EvalStore, run_key
from vtcode.eval.proc import ProcResult, kill_all, run_bounded, tail_text
from vtcode.eval.results import CheckRecord, EvalPlan, EvalReport, RunRecord
from vtcode.eval.suite import Suite, Task, load_suite
from vtcode.eval.summary import build_report
from vtcode.eval.workspace import (
    CheckResult,
    keep_folder,
    materialize,
    protected_digest,
    run_check,
)
from vtcode.sandbox.launch import Sandbox

__all__ = ["PlannedRun", "Progress", "RunSettings", "planned_runs", "run_eval", "select_tasks"]

Progress = Callable[[RunRecord, int, int], None]  # (record, finished so far, planned)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSettings:
    """What every run of an eval shares besides the plan."""

    provider: str | None = None
    model: str | None = None
    config_file: str | None = None
    endpoints: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedRun:
    task: Task
    adapter: Adapter
    repetition: int

    @property
    def key(self) -> str:
        return run_key(self.adapter.spec.label, self.task.id, self.repetition)


def select_tasks(suite: Suite, task_ids: Sequence[str], tags: Sequence[str]) -> list[Task]:
    """The suite's tasks named by --task (all when none) that carry one of --tag (any when
    none); an unknown id is an error with the nearest one."""
    import difflib

    known = [t.id for t in suite.tasks]
    for tid in task_ids:
        if tid not in known:
            close = difflib.get_close_matches(tid, known, n=1)
            raise UsageError(
                f"--task {tid!r}: no such task in {suite.path}",
                hint=f"did you mean {close[0]!r}?" if close else f"tasks: {', '.join(known)}",
            )
    chosen = [
        t
        for t in suite.tasks
        if (not task_ids or t.id in task_ids) and (not tags or set(tags) & set(t.spec.tags))
    ]
    if not chosen:
        raise UsageError("no task matches --task/--tag", location=str(suite.path))
    return chosen


def planned_runs(plan: EvalPlan, adapters: Sequence[Adapter]) -> list[PlannedRun]:
    """Every run of the plan, repetition-major so a partial eval covers every task evenly."""
    suite = load_suite(Path(plan.suite))
    by_id = {t.id: t for t in suite.tasks}
    missing = [t for t in plan.task_ids if t not in by_id]
    if missing:
        raise UsageError(
            f"the suite no longer has the planned task(s) {', '.join(missing)}",
            location=plan.suite,
        )
    return [
        PlannedRun(task=by_id[tid], adapter=a, repetition=rep)
        for rep in range(plan.k)
        for tid in plan.task_ids
        for a in adapters
    ]


def _pdeathsig() -> list[str]:
    exe = shutil.which("setpriv")
    return [] if exe is None else [exe, "--pdeathsig", "KILL", "--"]


def _temp_root(store: EvalStore) -> Path:
    """Where this eval's runs work: private to the eval's folder (two workspaces may use the
    same eval id), outside any repository."""
    tag = hashlib.sha256(str(store.root.resolve()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"vtcode-eval-{os.getuid()}" / f"{store.eval_id}-{tag}"


def _sandbox_for(plan: EvalPlan, writable: Sequence[Path]) -> Sandbox:
    mode = SandboxMode(plan.sandbox) if plan.sandbox else SandboxMode.WORKSPACE_WRITE
    return Sandbox(
        SandboxConfig(mode=mode, network=True, writable_roots=[str(p) for p in writable])
    )


def _start_agent(
    plan: EvalPlan,
    run: PlannedRun,
    ctx: RunContext,
    attempt: Path,
    cancel: threading.Event | None,
) -> ProcResult:
    """Start the agent bounded by the task's timeout: vtcode as it is (it sandboxes its own
    commands) with the parent-death signal; peers and commands inside vtcode's sandbox."""
    inv = run.adapter.invocation(ctx)
    env = {**os.environ, "NO_COLOR": "1", **inv.env}
    stdin = None
    if inv.stdin_text is not None:
        stdin = attempt / "agent.stdin"
        stdin.write_text(inv.stdin_text, encoding="utf-8")
    bounded = functools.partial(
        run_bounded,
        cwd=ctx.workspace,
        timeout=run.task.spec.timeout,
        stdout=ctx.stdout,
        stderr=attempt / "agent.stderr",
        stdin=stdin,
        cancel=cancel,
    )
    if not inv.sandboxed:
        res = bounded([*_pdeathsig(), *inv.argv], env=env)
    else:
        sandbox = _sandbox_for(plan, inv.writable)
        try:
            launch = sandbox.launch(ctx.workspace)
            env.update(launch.env)
            res = bounded(
                [*launch.prefix, *inv.argv], env=env, preexec=launch.preexec, spawn=launch.spawn
            )
        finally:
            sandbox.close()
    if res.error:
        (attempt / "agent.stderr").write_text(res.error + "\n", encoding="utf-8")
    return res


_NO_WORKSPACE = CheckResult(
    passed=False,
    exit_code=None,
    timed_out=False,
    seconds=0.0,
    output="not checked: the workspace is no longer a folder (the agent removed or replaced it)",
)


def _relocate(path: Path | None, attempt: Path, final: Path) -> str | None:
    if path is None:
        return None
    try:
        return str(final / path.relative_to(attempt))
    except ValueError:
        return str(path)


def run_one(
    plan: EvalPlan,
    run: PlannedRun,
    store: EvalStore,
    settings: RunSettings,
    cancel: threading.Event | None = None,
) -> RunRecord | None:
    """Run, check and record one planned run (the record is written last); None when the eval
    was interrupted meanwhile (nothing is recorded, so a resume runs it again)."""
    temp = _temp_root(store)
    temp.mkdir(parents=True, exist_ok=True, mode=0o700)
    attempt = Path(tempfile.mkdtemp(prefix=f"{run.key}-", dir=temp))
    ws, home = attempt / "workspace", attempt / "home"
    home.mkdir()
    ctx = RunContext(
        task=run.task,
        workspace=ws,
        home=home,
        stdout=attempt / "agent.stdout",
        session_id=f"eval-{run.key}",
        exec_args=plan.exec_args,
        config_file=settings.config_file,
        provider=settings.provider,
        model=settings.model,
        endpoints=settings.endpoints,
    )
    materialize(run.task, ws)
    before = protected_digest(run.task, ws)
    if cancel is not None and cancel.is_set():
        return None  # interrupted before the agent started
    started = rfc3339()
    res = _start_agent(plan, run, ctx, attempt, cancel)
    exit_code, timed_out, seconds = res.exit_code, res.timed_out, res.seconds
    finished = rfc3339()
    if cancel is not None and cancel.is_set():
        return None  # interrupted: the agent was killed by us, not by itself; it runs again
    if ws.is_dir() and not ws.is_symlink():
        after = protected_digest(run.task, ws)
        check = run_check(run.task, ws)
    else:  # removed, or replaced by a link to elsewhere: nothing there is checked or written
        after, check = {}, _NO_WORKSPACE
    changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
    agent, log = run.adapter.read(ctx, exit_code)
    failure = classify(
        agent, passed_check=check.passed, protected_changed=bool(changed), timed_out=timed_out
    )
    final = store.run_dir(run.key)
    if final.exists():
        shutil.rmtree(final)  # an interrupted earlier attempt
    keep_folder(attempt, final)
    record = RunRecord(
        run_key=run.key,
        task_id=run.task.id,
        agent=run.adapter.spec.label,
        repetition=run.repetition,
        passed=failure is None,
        failure=failure,
        exit_code=exit_code,
        timed_out=timed_out,
        outcome_subtype=agent.outcome_subtype,
        outcome_code=agent.outcome_code,
        turns=agent.turns,
        model_requests=agent.model_requests,
        tool_calls=agent.tool_calls,
        prompt_tokens=agent.prompt_tokens,
        completion_tokens=agent.completion_tokens,
        cached_tokens=agent.cached_tokens,
        first_prompt_tokens=agent.first_prompt_tokens,
        cost_usd=agent.cost_usd,
        wall_seconds=round(seconds, 3),
        check=CheckRecord(
            passed=check.passed,
            exit_code=check.exit_code,
            timed_out=check.timed_out,
            seconds=check.seconds,
            output=check.output,
        ),
        protected_changed=changed,
        session_id=agent.session_id,
        workspace=str(final / "workspace"),
        log=_relocate(log, attempt, final),
        started_at=started,
        finished_at=finished,
        error=None if failure is None else (tail_text(final / "agent.stderr", 2000) or None),
    )
    store.write_record(record)
    return record


def _catch_signals(cancel: threading.Event) -> Callable[[], None]:
    """SIGINT and SIGTERM set `cancel` instead of raising wherever the main thread happens to
    be (a KeyboardInterrupt inside a lock of concurrent.futures can leave it held and the eval
    hung); the wait loop raises at a safe point. Returns the function that restores the
    previous handlers. A no-op off the main thread (signals go to the main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def handler(signum: int, frame: object) -> None:
        cancel.set()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}

    def restore() -> None:
        for sig, old in previous.items():
            signal.signal(sig, old)

    return restore


def _records(store: EvalStore, runs: Sequence[PlannedRun]) -> list[RunRecord]:
    return [r for r in (store.read_record(run.key) for run in runs) if r is not None]


def run_eval(
    store: EvalStore,
    plan: EvalPlan,
    settings: RunSettings,
    *,
    jobs: int = 1,
    progress: Progress | None = None,
) -> EvalReport:
    """Run every planned run without a record (J at a time) and return the document.

    Holds the eval's lock throughout; stale temp folders of an interrupted run of this eval are
    removed first. An interrupt kills every running agent and re-raises; a task error (a
    setup that fails) stops the eval and is raised (exit 2)."""
    adapters = [adapter_for(spec) for spec in plan.agents]
    runs = planned_runs(plan, adapters)
    with store.locked():
        shutil.rmtree(_temp_root(store), ignore_errors=True)
        todo = [r for r in runs if store.read_record(r.key) is None]
        done = len(runs) - len(todo)
        pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="vtcode-eval")
        cancel = threading.Event()
        restore = _catch_signals(cancel)
        try:
            pending = {pool.submit(run_one, plan, r, store, settings, cancel) for r in todo}
            while pending:
                finished, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                if cancel.is_set():
                    raise KeyboardInterrupt  # raised here, between calls, never inside a lock
                for fut in finished:
                    record = fut.result()  # a task error is raised here
                    if record is None:
                        continue
                    done += 1
                    if progress is not None:
                        progress(record, done, len(runs))
        except BaseException:
            cancel.set()
            kill_all()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            restore()
        shutil.rmtree(_temp_root(store), ignore_errors=True)
    return build_report(plan, _records(store, runs))
