"""One headless run (`vtcode exec`, `exec resume`, a `loop run` step): wire everything, run, close.

Order of business: check ids, apply retention (never the current session), build the provider,
take the session lock (busy: exit 75; an existing session's interrupted last run is closed
first, see store/closeout.py), build tools and exporters, run the machine, then shut down in the
contract's order: `thread.completed` is emitted by the runner, exporters finish, the canonical
drain closes and fsyncs, and only then is success reported. A new session that fails before
its first event (exit 2 while wiring) is removed again, so its `--session-id` stays free.

An interactive session (`vtcode chat`) is the same run with an `Interaction`: it supplies the
user turns (the runner waits in `idle` for them) and answers `ask` permission verdicts; the
full-auto allow-list does not apply (a person is there to approve).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from vtcode.config.model import VtcodeConfig
from vtcode.context.compaction import ENVELOPE_NAME, SUMMARY_NAME
from vtcode.context.fork import fork_history
from vtcode.errors import (
    EnvironmentIOError,
    ExitCode,
    NotFoundError,
    PersistenceError,
    UsageError,
    environment_error,
)
from vtcode.events.types import ItemCompletedEvent, ItemStartedEvent, ItemUpdatedEvent, ThreadEvent
from vtcode.ids import check_id, new_session_id
from vtcode.loop.cancel import Cancelled, CancelToken
from vtcode.loop.continuation import Continuation
from vtcode.loop.limits import Limits, check_run_caps, require_budget_cap, require_budget_price
from vtcode.loop.outcomes import Outcome
from vtcode.loop.parts import LoopHooks, UserTurns
from vtcode.loop.prompts import system_prompt
from vtcode.loop.runner import Runner, RunResult
from vtcode.loop.tool_exec import RegistryToolExecutor
from vtcode.mcp.remote import secret_values as mcp_secret_values
from vtcode.messages import Image, Message, OutputSchema
from vtcode.orient.loop_state import loop_step_sessions
from vtcode.providers.base import Provider
from vtcode.providers.recording import RecordingProvider
from vtcode.providers.registry import chosen_provider, make_provider
from vtcode.providers.vision import refuse_images
from vtcode.redact import remember_secrets
from vtcode.runtime.exporters import make_exporters
from vtcode.runtime.harness_profile import (
    apply_to_provider,
    base_prompt,
    choose_profile,
    lead_in,
)
from vtcode.runtime.plan_mode import DRY_RUN_INSTRUCTIONS, continuation_tracker, dry_run_config
from vtcode.runtime.prompt_texts import prompt_texts
from vtcode.runtime.resume_check import refuse_invalid_log
from vtcode.runtime.run_executor import build_executor
from vtcode.runtime.run_prompt import RunPrompt
from vtcode.runtime.run_settings import configured_schema, reasoning_effort, sandbox_state
from vtcode.sandbox import SandboxState
from vtcode.store import DispatchGate, SessionWriter, read_session_events
from vtcode.store.artifacts import record_run
from vtcode.store.closed_index import record_closed
from vtcode.store.closeout import open_for_append
from vtcode.store.gate import Exporter
from vtcode.store.layout import ensure_root, session_dir, session_exists
from vtcode.store.retention import apply_retention_indexed, retention_notice
from vtcode.store.tombstone import discard_unstarted
from vtcode.store.transcript import TRANSCRIPT_NAME, TranscriptWriter, load_transcript
from vtcode.tools.base import ToolContext
from vtcode.tools.permissions import PermissionVerdict
from vtcode.tools.registry import ToolRegistry, default_registry
from vtcode.tools.task_tracker import TRACKER_TOOL, TaskTracker, TaskTrackerTool
from vtcode.tools.tool_limits import ToolLimits

__all__ = ["ExecRequest", "ExecResult", "Interaction", "RunParts", "run_exec"]

_ITEM_NUM = re.compile(r"item_(\d+)")


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RunParts:
    """The wired pieces of a run, handed to an `Interaction` before the run starts."""

    workspace: Path
    session_id: str
    config: VtcodeConfig
    runner: Runner
    provider: Provider
    executor: RegistryToolExecutor
    hooks: LoopHooks
    emit: Callable[[ThreadEvent], None]
    # Blocks until every emitted event is written and rendered by the exporters (write-ahead
    # dispatch runs them a batch behind): interactive front ends call it before a prompt.
    settle: Callable[[], None] = lambda: None


class Interaction(UserTurns):
    """An interactive front end: user turns (`UserTurns`), permission prompts, run wiring."""

    def attach(self, parts: RunParts) -> None:
        """Called once the run is wired, right before it starts."""

    def resolve_permission(
        self, tool: str, arguments: Any, verdict: PermissionVerdict
    ) -> PermissionVerdict:
        """Answer a `PermissionVerdict` (ask the user when it is `ask`); returns the verdict."""
        return verdict


@dataclasses.dataclass(kw_only=True)
class ExecRequest:
    """Everything `vtcode exec` (and `loop run`) can ask for."""

    workspace: Path
    config: VtcodeConfig
    prompt: str | None = None
    provider: str | None = None
    model: str | None = None
    script: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    session_id: str | None = None
    resume: str | None = None  # session id to continue (append to the same session)
    fork: bool = False  # with `resume`: start a new session seeded from the old one
    events_path: str | None = None  # `--events`; None = config, "" = off
    sinks: Sequence[Exporter] = ()  # extra exporters (stdout JSON, human progress)
    reasoning_effort: str | None = None
    record: Path | None = None  # record the provider's responses into a replay script
    hooks_factory: Callable[[ExecContext], LoopHooks] | None = None
    install_signals: bool = True
    interaction: Interaction | None = None  # interactive session (`vtcode chat`)
    system_prompt: str | None = None  # instructions (default: the exec prompt)
    tool_limits: ToolLimits | None = None  # --tools / --allowed-tools / --disallowed-tools
    # the final answer's JSON Schema (`--output-schema`; None: `agent.output_schema`, if set)
    output_schema: OutputSchema | None = None
    # What the user must hear even with -q (each session retention removes, once, on stderr).
    notify: Callable[[str], None] | None = None
    # `task_tracker` in the catalog (plan_build_evaluate set in a config layer); the tool and the
    # plan check run whenever the mode and continuation_policy cover exec (loop/continuation.py)
    offer_task_tracker: bool = False
    dry_run: bool = False  # `exec --dry-run`: read-only tools, a plan, no continuation
    images: tuple[Image, ...] = ()  # `exec -i`: sent with the prompt's message


@dataclasses.dataclass(kw_only=True)
class ExecContext:
    """What hook factories (context, orientation, steering) get to build their hooks from."""

    workspace: Path
    session_id: str
    config: VtcodeConfig
    provider: Provider
    registry: ToolRegistry
    resumed: bool
    forked_from: str | None
    sandbox: SandboxState | None = None  # the effective sandbox of exec_command


@dataclasses.dataclass(frozen=True, slots=True)
class ExecResult:
    session_id: str
    exit_code: ExitCode
    run: RunResult | None
    error: str | None = None
    plan: str | None = None  # `--dry-run`: the plan the model wrote (task_tracker)

    @property
    def outcome(self) -> Outcome | None:
        return self.run.outcome if self.run else None


def _max_item_index(workspace: Path, session_id: str) -> int:
    """The next free `item_<n>` so a resumed run never reuses an item id of the same session."""

    top = -1
    for env in read_session_events(workspace, session_id):
        ev = env.event
        if isinstance(ev, ItemStartedEvent | ItemUpdatedEvent | ItemCompletedEvent):
            m = _ITEM_NUM.match(ev.item.id)
            if m:
                top = max(top, int(m.group(1)))
    return top + 1


def _resolve_resume(req: ExecRequest) -> tuple[str, list[Message], int, str | None]:
    """(session id to write, seeded history, first item index, forked-from id)."""

    assert req.resume is not None
    source = check_id(req.resume)
    if not session_exists(req.workspace, source):
        raise NotFoundError(
            f"no session {source!r} in {req.workspace / '.vtcode' / 'sessions'}",
            hint="`vtcode sessions list` shows the sessions of this workspace",
        )
    refuse_invalid_log(req.workspace, source)

    transcript = load_transcript(session_dir(req.workspace, source) / TRANSCRIPT_NAME)

    # The exec system prompt is rebuilt each run; a compaction's summary and memory envelope
    # (system messages tagged by name) are part of the conversation and must survive a resume.
    history = [
        m
        for m in transcript.messages
        if m.role != "system" or m.name in (SUMMARY_NAME, ENVELOPE_NAME)
    ]
    if req.fork:
        return (
            check_id(req.session_id) if req.session_id else new_session_id(),
            fork_history(history, req.config),
            0,
            source,
        )
    # The first item index is read once the session is open (after closing an interrupted run).
    return source, history, 0, None


def _open_writer(
    workspace: Path, session_id: str, cfg: VtcodeConfig, appending: bool
) -> SessionWriter:
    """The session's writer; an environment that refuses (read-only workspace, `.vtcode` being
    a file, a session folder that is not writable, a full disk) is a located exit-2 error: no
    event was written, so nothing of the run is lost."""

    try:
        ensure_root(workspace)
    except OSError as e:
        raise environment_error(e, "create the sessions folder") from None
    try:
        if appending:
            return open_for_append(workspace, session_id, cfg.store)
        return SessionWriter.create(workspace, session_id, cfg.store)
    except PersistenceError as e:
        raise EnvironmentIOError(e.message, location=e.location, hint=e.hint) from None


def run_exec(req: ExecRequest) -> ExecResult:
    """Run one exec session to its end; never raises for a run that started (see ExecResult).

    The signal handlers go in first: a SIGTERM while the run is being wired (a slow start on a
    loaded machine, an MCP server starting) sets the token, and the run then closes its session
    `cancelled` at once, instead of the process dying with a created, empty log. They stay in
    while the run closes, so a SIGTERM then still reaches the token's watchdog (loop/cancel.py)."""
    cancel = CancelToken()
    with cancel.installed() if req.install_signals else contextlib.nullcontext():
        return _run_exec(req, cancel)


def _run_exec(req: ExecRequest, cancel: CancelToken) -> ExecResult:
    cfg = dry_run_config(req.config) if req.dry_run else req.config
    remember_secrets(
        [cfg.shell_environment_policy.set, *(s.env for s in cfg.mcp.servers.values())],
        mcp_secret_values(cfg.mcp.servers.values(), os.environ),
    )
    history: list[Message] = []
    first_item = 0
    forked_from: str | None = None
    resumed = req.resume is not None
    if resumed:
        session_id, history, first_item, forked_from = _resolve_resume(req)
    else:
        session_id = check_id(req.session_id) if req.session_id else new_session_id()
    interaction = req.interaction
    if not resumed and interaction is None and not (req.prompt and req.prompt.strip()):
        raise UsageError("no prompt given", hint="pass PROMPT, or `-` to read it from stdin")

    mcp_plan = None
    if cfg.mcp.servers:
        # Imported here, as below: MCP is an optional extra, loaded only for a run with servers.
        from vtcode.mcp.plan import plan_servers

        mcp_plan = plan_servers(cfg, req.workspace)  # a bad [mcp.servers]: exit 2, nothing written

    sandbox = sandbox_state(cfg)  # sandbox.require without a sandbox: exit 2, nothing written
    check_run_caps(req.max_budget_usd)  # a library caller's cap: the flag's range, exit 2
    require_budget_cap(cfg, req.max_budget_usd)  # require_budget with no cap: exit 2, likewise
    texts = prompt_texts(cfg.agent, req.workspace)  # an unreadable prompt file: exit 2
    output_schema = req.output_schema or configured_schema(cfg, req.workspace)  # bad: exit 2

    _retain(req, cfg, session_id)

    # The provider is built before the session exists: a bad script, a missing key or an
    # unknown provider (exit 2) must not leave an empty session behind or use up its id.
    provider: Provider = make_provider(
        chosen_provider(req.provider or cfg.agent.provider, script=req.script),
        config=cfg,
        model=req.model,
        script=req.script,
        workspace=req.workspace,
    )
    profile = choose_profile(cfg.agent.harness.profile, provider.model)
    apply_to_provider(profile, provider)
    appending = resumed and forked_from is None
    try:
        require_budget_price(cfg, provider.pricing, provider.model)  # exit 2 before any request
        refuse_images(provider, len(req.images) + sum(len(m.images) for m in history))
        writer = _open_writer(req.workspace, session_id, cfg, appending)
    except BaseException:
        provider.close()
        raise
    if hasattr(writer, "record_sandbox"):
        writer.record_sandbox(sandbox.to_json())  # the manifest records the effective sandbox

    # Read once: frozen into every segment of this run (a changed file counts from the next run).
    extra = RunPrompt.gather(cfg, req.workspace, texts, provider.context_window)

    record_run(
        req.workspace,
        session_id,
        first_seq=writer.last_seq + 1,
        prompt=req.prompt,
        provider=provider.name,
        model=provider.model,
        script=req.script if provider.name == "replay" else None,  # `exec resume` replays it
        instructions=extra.records(),
        instructions_digest=extra.digest(),
    )
    executor = None
    mcp = None
    transcript: TranscriptWriter | None = None
    gate = None
    try:
        if appending:
            first_item = _max_item_index(req.workspace, session_id)
        if req.record is not None:
            provider = RecordingProvider(provider, req.record)
        exporters = [*make_exporters(req.workspace, session_id, cfg, req.events_path), *req.sinks]
        gate = DispatchGate(writer, exporters)
        spool_dir = req.workspace / ".vtcode" / "context" / "tool_outputs"
        registry = default_registry(cfg)
        tracker = TaskTracker() if req.dry_run else continuation_tracker(cfg, interactive=False)
        if tracker is not None:
            registry.register(TaskTrackerTool(tracker), built_in=True)
        if registry.exec_sessions is not None:  # what a SIGKILLed earlier run left running
            registry.exec_sessions.reap_leftovers(spool_dir)
        ctx = ToolContext(
            workspace=req.workspace,
            session_id=session_id,
            spool_dir=spool_dir,
            long_running_ceiling_secs=float(cfg.agent.harness.long_running_command_ceiling_secs),
        )
        transcript = TranscriptWriter(writer.path / TRANSCRIPT_NAME)
        if forked_from is not None:
            for m in history:
                transcript.append(m)
        exec_ctx = ExecContext(
            workspace=req.workspace,
            session_id=session_id,
            config=cfg,
            provider=provider,
            registry=registry,
            resumed=resumed,
            forked_from=forked_from,
            sandbox=sandbox,
        )
        # The parts are built before the executor: their tool hooks are given to it at construction.
        hooks = req.hooks_factory(exec_ctx) if req.hooks_factory else LoopHooks()

        person = None if interaction is None or interaction.headless else interaction
        executor = build_executor(
            cfg,
            req.workspace,
            registry,
            ctx,
            ask=None if person is None else person.resolve_permission,
            tool_limits=req.tool_limits,
            tool_hooks=hooks.tool_hooks(),
            view=profile.view,
        )
        if tracker is not None:
            executor.accept_unlisted(TRACKER_TOOL, listed=req.offer_task_tracker or req.dry_run)
        if registry.exec_sessions is not None:  # "sandbox unavailable", once, at the first command
            executor.notices = registry.exec_sessions.take_notices
        if extra.warnings:  # a cut instruction file, a skipped skill: once, after thread.started
            executor.notices = _joined(executor.notices, extra.notices())
        if mcp_plan is not None:
            from vtcode.mcp.manager import McpManager

            # Started once the catalog's allow-list is known; their tools join the registry.
            # A signal while they start stops them (none is left); the run then closes at once.
            with contextlib.suppress(Cancelled), cancel.interruptible():
                mcp = McpManager.start(mcp_plan, registry, req.workspace, allowed=executor.allowed)
        if mcp is not None:
            executor.notices = _joined(executor.notices, mcp.take_notices)
            executor.unknown_tool_hint = mcp.unavailable
        run_executor = executor
        limits = Limits.from_config(cfg, max_turns=req.max_turns, max_budget_usd=req.max_budget_usd)
        runner = Runner(
            session_id=session_id,
            provider=provider,
            tools=executor,
            limits=limits,
            emit=gate.emit,
            system_prompt=lambda orientation: system_prompt(
                (
                    extra.base(req.system_prompt or "")
                    or base_prompt(profile, req.workspace, run_executor)
                )
                + (DRY_RUN_INSTRUCTIONS if req.dry_run else ""),
                orientation,
                sections=extra.sections(),
            ),
            history=history,
            prompt=req.prompt,
            cancel=cancel,
            hooks=hooks,
            first_item_index=first_item,
            reasoning_effort=req.reasoning_effort or reasoning_effort(cfg),
            on_message=transcript.append,
            workspace=req.workspace,
            user_turns=interaction,
            output_schema=output_schema,
            lead_in=lead_in(
                profile, req.workspace, run_executor, max_draws=cfg.agent.harness.first_reply_draws
            ),
        )
        runner.prompt_images = req.images
        if tracker is not None and not req.dry_run and interaction is None:
            runner.continuation = Continuation(
                tracker, max_revision_rounds=cfg.agent.harness.max_revision_rounds
            )
        if interaction is not None:
            interaction.attach(
                RunParts(
                    workspace=req.workspace,
                    session_id=session_id,
                    config=cfg,
                    runner=runner,
                    provider=provider,
                    executor=executor,
                    hooks=hooks,
                    emit=gate.emit,
                    settle=gate.settle,
                )
            )
        result = runner.run()
        executor.close()
        executor = None
        if mcp is not None:
            mcp.close()  # sessions closed, server processes ended, before the log is closed
            mcp = None
        transcript.close()
        transcript = None
        gate.close()
        gate = None
        with contextlib.suppress(OSError):  # the index is a cache: `sessions gc` rebuilds it
            record_closed(req.workspace, session_id)
        plan = tracker.render() if req.dry_run and tracker is not None else None
        return ExecResult(session_id, result.outcome.exit_code, result, plan=plan)
    except PersistenceError as e:
        return ExecResult(session_id=session_id, exit_code=ExitCode.FAILURE, run=None, error=str(e))
    finally:
        if executor is not None:
            executor.close()
        if mcp is not None:
            mcp.close()
        if transcript is not None:
            transcript.close()
        if gate is not None:
            gate.abort() if hasattr(gate, "abort") else writer.abort()
        elif not writer.closed:
            writer.abort()
        if provider is not None:
            provider.close()
        if not appending and writer.last_seq == 0:
            # Failed while wiring, before the first event: the new session never existed.
            discard_unstarted(req.workspace, session_id)


def _retain(req: ExecRequest, cfg: VtcodeConfig, session_id: str) -> None:
    """The automatic retention pass: best effort (upstream logs and goes on), never silent.

    Each removed session is said once through `req.notify`; the current session and the sessions
    of every loop's last `keep_loop_steps` steps are preserved."""
    policy = cfg.store.retention
    preserve = {session_id, *loop_step_sessions(req.workspace, policy.keep_loop_steps)}
    try:
        report = apply_retention_indexed(req.workspace, policy, preserve=preserve)
    except OSError:
        return
    if req.notify is None:
        return
    for removed in report.deleted:
        req.notify(retention_notice(removed, policy))


def _joined(*sources: Callable[[], list[str]] | None) -> Callable[[], list[str]]:
    """One notices callable over several (the exec sessions' and the MCP manager's)."""
    return lambda: [text for source in sources if source is not None for text in source()]
