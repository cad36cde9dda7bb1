"""Subagents: child runs from `[agent.subagents.NAME]`, worktree isolation, propose/verify.

`run_subagent` runs one child session with `run_exec` in its own workspace: the workspace itself
(`isolation = "none"`) or a fresh git worktree (`"worktree"`; its edits stay there until
`vtcode worktree merge`). `verify_change` is the verify half of propose/verify: a read-only
verifier child (its tool catalog holds only read-only tools, it gets no orientation and no
conversation of the proposer, it runs in its own session) re-reads the affected files and must
answer `Decision: APPROVED` or `Decision: REJECTED`; any `- ISSUE:` line, a missing decision or
a failed child is a rejection (fail closed). The parent session records the verification as
`harness` items: `verification_started`, then `verification_passed` or `verification_failed`.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vtcode.config.model import SubagentIsolation, SubagentSpec, VtcodeConfig
from vtcode.errors import ExitCode, NotFoundError, UsageError
from vtcode.events.enums import HarnessEventKind, ThreadCompletionSubtype
from vtcode.events.types import ThreadCompletedEvent, ThreadStartedEvent, Usage
from vtcode.ids import check_id, new_session_id
from vtcode.loop.recorder import Recorder
from vtcode.orient.models import VerificationResult
from vtcode.orient.worktree import Worktree, create_worktree
from vtcode.providers.script import resolve_script
from vtcode.runtime.exec_run import ExecRequest, _max_item_index, run_exec
from vtcode.runtime.exporters import make_exporters
from vtcode.runtime.hooks import default_hooks_factory
from vtcode.runtime.subagent_hooks import SubagentHooks
from vtcode.store import DispatchGate, SessionWriter
from vtcode.store.closeout import open_for_append
from vtcode.tools.registry import default_registry

__all__ = [
    "SubagentRun",
    "find_spec",
    "parse_verdict",
    "read_only_config",
    "run_subagent",
    "run_verifier",
    "verifier_prompt",
    "verify_change",
]

DEFAULT_VERIFIER_TURNS = 10
# Verifier output is untrusted text, so these read it in linear time; they find what the
# plain forms `^\s*\**Decision:\**\s*\**(APPROVED|REJECTED)\**\s*$` and
# `^\s*[-*]\s*ISSUE:\s*(.+?)\s*$` (MULTILINE) found, where `^\s*` retried from every blank
# line and `\s*` beside `(.+?)` or between two `\**` backtracked quadratically:
# - a match starts on the line of its first non-blank character (`^[^\S\n]*`);
# - a possessive `*+` gives back nothing: what follows it never starts with what it took;
# - an issue is the rest of its line, trailing blanks dropped (`(.*\S)`), else, when only
#   blanks follow `ISSUE:` to the end of the text, their last character that is no newline.
_DECISION = re.compile(r"^[^\S\n]*\**+Decision:\**+\s*+\**(APPROVED|REJECTED)\**\s*$", re.MULTILINE)
_ISSUE = re.compile(r"^[^\S\n]*[-*]\s*+ISSUE:(?:\s*+(.*\S)|\s*([^\S\n])\n*\Z)", re.MULTILINE)


@dataclasses.dataclass(frozen=True, slots=True)
class SubagentRun:
    """A finished child run."""

    name: str
    session_id: str
    exit_code: ExitCode
    workspace: Path  # where the child worked (and where its session was written)
    worktree: Worktree | None
    final_text: str | None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "session_id": self.session_id,
            "exit_code": int(self.exit_code),
            "workspace": str(self.workspace),
            "final_text": self.final_text,
        }
        if self.worktree is not None:
            out["worktree"] = self.worktree.to_json()
        if self.error:
            out["error"] = self.error
        return out


def find_spec(config: VtcodeConfig, name: str) -> SubagentSpec:
    spec = config.agent.subagents.get(name)
    if spec is None:
        known = ", ".join(sorted(config.agent.subagents)) or "none configured"
        raise NotFoundError(
            f"no subagent {name!r} (known: {known})",
            hint=f'declare it in vtcode.toml: [agent.subagents.{name}] prompt = "..."',
        )
    return spec


def read_only_tools(config: VtcodeConfig) -> list[str]:
    """Names of the built-in tools that declare themselves read-only."""

    registry = default_registry(config)
    try:
        return [tool.spec.name for tool in registry if tool.read_only]
    finally:
        registry.close()


def read_only_config(config: VtcodeConfig) -> VtcodeConfig:
    """`config` whose full-auto allow-list (a hard gate on the catalog) is the read-only tools."""
    full_auto = dataclasses.replace(
        config.automation.full_auto, allowed_tools=read_only_tools(config)
    )
    automation = dataclasses.replace(config.automation, full_auto=full_auto)
    return dataclasses.replace(config, automation=automation)


def _task_prompt(spec: SubagentSpec, task: str) -> str:
    return f"{spec.prompt.strip()}\n\n{task.strip()}" if spec.prompt.strip() else task.strip()


def _resolve_script(spec: SubagentSpec, parent: Path) -> str | None:
    """A relative script path means the parent workspace's file, even in a worktree."""
    if spec.script is None:
        return None

    return str(resolve_script(spec.script, workspace=parent))


def _exec(
    *,
    workspace: Path,
    config: VtcodeConfig,
    spec: SubagentSpec,
    prompt: str,
    parent: Path,
    oriented: bool,
    sinks: Sequence[Any],
    max_turns: int | None = None,
    session_id: str | None = None,
    nested: bool = False,
) -> Any:
    """`nested`: run inside another run, whose signal handlers stay in place."""
    main = threading.current_thread() is threading.main_thread()
    return run_exec(
        ExecRequest(
            workspace=workspace,
            config=config,
            prompt=prompt,
            provider=spec.provider,
            model=spec.model,
            script=_resolve_script(spec, parent),
            max_turns=max_turns or spec.max_turns,
            session_id=session_id or new_session_id(),
            sinks=list(sinks),
            hooks_factory=default_hooks_factory if oriented else None,
            install_signals=main and not nested,
        )
    )


def run_subagent(
    workspace: Path, config: VtcodeConfig, name: str, task: str, *, sinks: Sequence[Any] = ()
) -> SubagentRun:
    """Run subagent `name` on `task` (in a new worktree when its spec says so)."""
    check_id(name, "subagent name")
    spec = find_spec(config, name)
    if not task.strip():
        raise UsageError(f"no task for subagent {name!r}", hint=f'vtcode agent run {name} "..."')
    wt = create_worktree(workspace, name) if spec.isolation is SubagentIsolation.WORKTREE else None
    child_ws = wt.workdir if wt else workspace
    cfg = read_only_config(config) if spec.read_only else config
    session_id = new_session_id()
    hooks = SubagentHooks(workspace, config, name=name, child_ws=child_ws, session_id=session_id)
    hooks.started(task)
    result = _exec(
        workspace=child_ws,
        config=cfg,
        spec=spec,
        prompt=_task_prompt(spec, task),
        parent=workspace,
        oriented=not spec.read_only,
        sinks=sinks,
        session_id=session_id,
    )
    text = result.run.final_text if result.run else None
    hooks.stopped(result.exit_code, text)
    return SubagentRun(name, result.session_id, result.exit_code, child_ws, wt, text, result.error)


# ------------------------------------------------------------------------------ propose/verify


def verifier_prompt(description: str, files: Sequence[str]) -> str:
    """Upstream's verifier instructions (a fresh reviewer that judges the files as they are)."""
    listing = "\n".join(f"- {f}" for f in files)
    return (
        "Review a proposed change before it is merged. You did not write it, so judge it only "
        "from the files as they are now.\n\n"
        f"## Diff Description\n{description}\n\n"
        f"## Affected Files\n{listing}\n\n"
        "Read each affected file and check that the change does what the description says, "
        "handles errors, and follows the surrounding code's conventions. Ignore problems that "
        "predate the change.\n\n"
        "Your reply is parsed by the harness: put each problem on its own line as "
        "`- ISSUE: <path>:<line> <description>`, and end with exactly one line, "
        "`Decision: APPROVED` or `Decision: REJECTED`. Any ISSUE line blocks the merge, so list "
        "only problems that must be fixed."
    )


def parse_verdict(text: str | None) -> tuple[bool, list[str]]:
    """(approved, issues): the last decision line wins; any ISSUE or no decision rejects."""
    body = text or ""
    issues = [m[1] or m[2] for m in _ISSUE.finditer(body)]
    decisions = _DECISION.findall(body)
    approved = bool(decisions) and decisions[-1] == "APPROVED" and not issues
    if not decisions:
        issues = [*issues, "the verifier gave no `Decision:` line"]
    return approved, issues


class _ParentSession:
    """The session that records a verification (new, or appended to with `--parent`)."""

    def __init__(self, workspace: Path, config: VtcodeConfig, session_id: str | None) -> None:

        appending = session_id is not None
        self.session_id = check_id(session_id) if session_id else new_session_id()
        first_item = 0
        if appending:
            self.writer = open_for_append(workspace, self.session_id, config.store)
            first_item = _max_item_index(workspace, self.session_id)
        else:
            self.writer = SessionWriter.create(workspace, self.session_id, config.store)
        self.gate = DispatchGate(
            self.writer, make_exporters(workspace, self.session_id, config, "")
        )
        self.rec = Recorder(self.gate.emit, first_item_index=first_item)
        self.rec.emit(ThreadStartedEvent(thread_id=self.session_id))
        self.rec.turn_started()

    def finish(self, text: str) -> None:

        self.rec.message(text)
        self.rec.turn_completed(Usage())
        self.rec.emit(
            ThreadCompletedEvent(
                thread_id=self.session_id,
                session_id=self.session_id,
                subtype=ThreadCompletionSubtype.SUCCESS,
                outcome_code="success",
                result=text,
                usage=Usage(),
                num_turns=0,
            )
        )
        self.gate.close()

    def abort(self) -> None:
        self.gate.abort()


def run_verifier(
    workspace: Path,
    config: VtcodeConfig,
    name: str,
    spec: SubagentSpec,
    files: Sequence[str],
    description: str,
    *,
    nested: bool = False,
    sinks: Sequence[Any] = (),
) -> tuple[VerificationResult, int]:
    """The verifier child run's parsed verdict and exit code (fail closed: a failed run
    rejects)."""
    result = _exec(
        workspace=workspace,
        config=read_only_config(config),
        spec=spec,
        prompt=verifier_prompt(description, files),
        parent=workspace,
        oriented=False,  # no shared context with the proposer
        sinks=sinks,
        max_turns=spec.max_turns or DEFAULT_VERIFIER_TURNS,
        nested=nested,
    )
    reasoning = (result.run.final_text if result.run else None) or result.error or ""
    if result.exit_code != ExitCode.OK:
        approved = False
        issues = [f"the verifier run failed (exit {int(result.exit_code)}): {reasoning}"]
    else:
        approved, issues = parse_verdict(reasoning)
    verdict = VerificationResult(
        approved=approved,
        issues=issues,
        reasoning=reasoning,
        verifier=name,
        files=list(files),
        verifier_session_id=result.session_id,
    )
    return verdict, int(result.exit_code)


def verify_change(
    workspace: Path,
    config: VtcodeConfig,
    name: str,
    files: Sequence[str],
    description: str,
    *,
    parent_session_id: str | None = None,
    sinks: Sequence[Any] = (),
) -> VerificationResult:
    """Run verifier `name` (read-only, no shared context) over `files`; record the verdict."""
    check_id(name, "subagent name")
    spec = find_spec(config, name)
    if not files:
        raise UsageError("nothing to verify: give the affected files (--files PATH ...)")
    missing = [f for f in files if not (workspace / f).exists()]
    if missing:
        raise UsageError(f"affected file(s) not found in {workspace}: {', '.join(missing)}")
    parent = _ParentSession(workspace, config, parent_session_id)
    try:
        parent.rec.harness(
            HarnessEventKind.VERIFICATION_STARTED,
            message=f"verifier {name} reviews {len(files)} file(s): {', '.join(files)}",
        )
        verdict, code = run_verifier(workspace, config, name, spec, files, description, sinks=sinks)
        verdict = dataclasses.replace(verdict, parent_session_id=parent.session_id)
        approved, issues = verdict.approved, verdict.issues
        kind = (
            HarnessEventKind.VERIFICATION_PASSED
            if approved
            else HarnessEventKind.VERIFICATION_FAILED
        )
        summary = "approved" if approved else f"rejected ({len(issues)} issue(s))"
        parent.rec.harness(
            kind,
            message=f"verifier {name} {summary}; verifier session {verdict.verifier_session_id}",
            exit_code=code,
        )
        lines = [f"Verification by {name}: {'APPROVED' if approved else 'REJECTED'}."]
        lines += [f"- ISSUE: {i}" for i in issues]
        parent.finish("\n".join(lines))
        return verdict
    except BaseException:
        parent.abort()
        raise
