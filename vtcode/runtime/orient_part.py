"""The orient layer's part of the loop: orientation at start, the progress ledger per turn.

`make_part` is called by `vtcode.runtime.hooks` for every exec-style run. The part renders the
`[Orientation Context]` (taking over a pending handoff and consuming a context-reset manifest,
both one-shot), keeps the session's progress ledger (advance/stall after each turn, persisted to
`derived/progress.json` after every turn and at the end) and publishes the live stall count
through `vtcode.orient.progress.progress_monitor(session_id)`.
"""

from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from vtcode.clock import rfc3339
from vtcode.loop.outcomes import Outcome
from vtcode.loop.parts import LoopHooks
from vtcode.loop.recorder import Recorder
from vtcode.messages import ModelRequest
from vtcode.orient import gitutil
from vtcode.orient.context import consume_reset_manifest, gather_orientation
from vtcode.orient.models import MilestoneStatus, ProgressLedger
from vtcode.orient.progress import (
    ProgressMonitor,
    forget_monitor,
    latest_progress,
    load_progress,
    progress_monitor,
    read_task_milestones,
    save_progress,
)

if TYPE_CHECKING:
    from vtcode.runtime.exec_run import ExecContext

__all__ = ["OrientPart", "make_part"]

GOAL_MAX_CHARS = 280


def _goal_from(text: str) -> str:
    one = " ".join(text.split())
    return one if len(one) <= GOAL_MAX_CHARS else one[: GOAL_MAX_CHARS - 3] + "..."


def _done(ledger: ProgressLedger) -> int:
    return sum(1 for m in ledger.milestones if m.status is MilestoneStatus.DONE)


class OrientPart(LoopHooks):
    """Orientation + progress ledger for one session."""

    def __init__(
        self, workspace: Path, session_id: str, *, resumed: bool, sandbox: str | None = None
    ) -> None:
        self.workspace = workspace
        self.session_id = session_id
        self.sandbox = sandbox  # the orientation's `### Sandbox` line (None: the default)
        ledger = load_progress(workspace, session_id) if resumed else None
        if ledger is None:
            previous = latest_progress(workspace, exclude=session_id)
            ledger = ProgressLedger(
                session_id=session_id,
                goal="",
                updated_at=rfc3339(),
                previous_session_id=previous.session_id if previous else None,
                known_issues=list(previous.known_issues) if previous else [],
                git_checkpoint=gitutil.head_commit(workspace),
                milestones=read_task_milestones(workspace) or [],
            )
        mon = progress_monitor(session_id, create=ledger)
        assert mon is not None
        self.monitor: ProgressMonitor = mon
        self._handoff_prompt: str | None = None
        self._handoff_taken = False
        self.saved_path: Path | None = None
        self._last_saved: ProgressLedger | None = None
        self._recorder: Recorder | None = None
        self._warned: set[str] = set()

    # ------------------------------------------------------------------ LoopHooks

    def attach(self, recorder: Recorder) -> None:
        self._recorder = recorder

    def orientation(self) -> str | None:
        from vtcode.orient.handoff import take_over_handoff

        ctx = gather_orientation(self.workspace, self.session_id)
        for message in ctx.skipped:  # a planted FIFO or folder: one warning, the run goes on
            if self._recorder is not None and message not in self._warned:
                self._warned.add(message)
                self._recorder.warning(message)
        if ctx.handoff_prompt is not None and not self._handoff_taken:
            self._handoff_taken = True
            self._handoff_prompt = ctx.handoff_prompt
            if ctx.handoff is not None:
                issues = list(self.monitor.ledger.known_issues)
                issues += [i for i in ctx.handoff.known_issues if i not in issues]
                self.monitor.update(handoff_summary=ctx.handoff.state_summary, known_issues=issues)
            with contextlib.suppress(OSError):
                take_over_handoff(self.workspace, self.session_id)
        # A handoff taken over earlier in this run stays in view after an in-run reset.
        ctx.handoff_prompt = self._handoff_prompt
        ctx.sandbox = self.sandbox
        section = ctx.to_prompt_section()
        if ctx.context_reset_manifest is not None:
            with contextlib.suppress(OSError):
                consume_reset_manifest(self.workspace)
        return section

    def before_request(self, request: ModelRequest) -> None:
        if self.monitor.ledger.goal:
            return
        first_user = next((m for m in request.messages if m.role == "user"), None)
        if first_user is not None and first_user.content.strip():
            self.monitor.update(goal=_goal_from(first_user.content))

    def on_turn_end(self, *, made_progress: bool) -> None:
        before = _done(self.monitor.ledger)
        self._refresh_milestones()
        advanced = made_progress or _done(self.monitor.ledger) > before
        self.monitor.record(made_progress=advanced)
        # A derived view: rewritten only when it changed beyond its timestamp, without fsync
        # (on_finish saves it durably), so a long session does not pay two fsyncs per turn.
        key = dataclasses.replace(self.monitor.ledger, updated_at="")
        if key != self._last_saved:
            self._last_saved = key
            self._save(durable=False)

    def on_finish(self, outcome: Outcome, recorder: Recorder) -> None:
        self._refresh_milestones()
        try:
            self._save(strict=True)
        except OSError as e:
            recorder.warning(f"progress ledger not saved: {e}")
        finally:
            forget_monitor(self.session_id)

    # ------------------------------------------------------------------ internals

    def _refresh_milestones(self) -> None:
        milestones = read_task_milestones(self.workspace)
        if milestones is not None and milestones != self.monitor.ledger.milestones:
            self.monitor.update(milestones=milestones)

    def _save(self, *, strict: bool = False, durable: bool = True) -> None:
        try:
            self.saved_path = save_progress(self.workspace, self.monitor.ledger, durable=durable)
        except OSError:
            if strict:
                raise


def make_part(ctx: ExecContext) -> LoopHooks | None:
    sandbox = ctx.sandbox
    note = None if sandbox is None or sandbox.is_default else sandbox.summary()
    return OrientPart(Path(ctx.workspace), ctx.session_id, resumed=ctx.resumed, sandbox=note)
