"""The handoff protocol: a `HandoffRequest`, rendered exactly as upstream's `to_handoff_prompt`.

`vtcode handoff` builds one from the current state (modified files from `git status`, the real
output of a test command, boundary status from the latest progress ledger) and writes it to
`.vtcode/tasks/current_handoff.{json,md}`. The next session that orients takes it over: it is
shown in that session's `[Orientation Context]` and moved to `.vtcode/tasks/handoffs/` (kept,
never deleted), so a loop's later steps do not keep reading a stale handoff.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import orjson

from vtcode.clock import compact_stamp
from vtcode.fsutil import atomic_write_bytes, ensure_private_dir, fsync_dir, read_regular
from vtcode.jsontypes import DecodeError, decode, encode
from vtcode.orient import gitutil
from vtcode.orient.models import (
    BoundaryItem,
    BoundaryStatus,
    HandoffRequest,
    MilestoneStatus,
    ProgressLedger,
)
from vtcode.orient.paths import handoff_paths, tasks_dir

__all__ = [
    "TestRun",
    "boundary_from_ledger",
    "build_handoff",
    "load_handoff",
    "run_test_command",
    "take_over_handoff",
    "to_handoff_prompt",
    "write_handoff",
]

TEST_OUTPUT_MAX_CHARS = 8000
_STATUS_LABEL = {
    BoundaryStatus.DONE: "DONE",
    BoundaryStatus.IN_PROGRESS: "IN PROGRESS",
    BoundaryStatus.NOT_STARTED: "NOT STARTED",
    BoundaryStatus.BLOCKED: "BLOCKED",
}
_FROM_MILESTONE = {
    MilestoneStatus.DONE: BoundaryStatus.DONE,
    MilestoneStatus.IN_PROGRESS: BoundaryStatus.IN_PROGRESS,
    MilestoneStatus.PENDING: BoundaryStatus.NOT_STARTED,
    MilestoneStatus.BLOCKED: BoundaryStatus.BLOCKED,
}


def to_handoff_prompt(req: HandoffRequest) -> str:
    """Upstream's markdown, byte for byte (parts joined by a blank line; empty parts kept)."""
    parts = [
        "## HANDOFF FROM PREVIOUS AGENT",
        "",
        "Previous agent completed work and is handing off to you.",
        "",
        f"### Current State\n{req.state_summary}",
    ]
    if req.boundary_status:
        items = [
            f"- [{_STATUS_LABEL[b.status]}] {b.feature} -- {b.notes}"
            if b.notes is not None
            else f"- [{_STATUS_LABEL[b.status]}] {b.feature}"
            for b in req.boundary_status
        ]
        parts.append("### Boundary Status\n" + "\n".join(items))
    if req.modified_files:
        parts.append("### Modified Files\n" + "\n".join(req.modified_files))
    if req.test_results is not None:
        parts.append(f"### Test Results\n{req.test_results}")
    if req.open_decisions:
        parts.append("### Open Decisions\n" + "\n".join(req.open_decisions))
    if req.known_issues:
        parts.append("### Known Issues\n" + "\n".join(f"- {i}" for i in req.known_issues))
    if req.next_actions:
        parts.append(
            "### Recommended Next Actions\n" + "\n".join(f"1. {a}" for a in req.next_actions)
        )
    parts.append(
        f"### Task Context\n{req.task_context}\n\n"
        "Continue from where the previous agent left off. "
        "Read the modified files to understand the current state. "
        "Check boundary status to know what's done vs. what needs work."
    )
    return "\n\n".join(parts)


def boundary_from_ledger(ledger: ProgressLedger | None) -> list[BoundaryItem]:
    if ledger is None:
        return []
    return [
        BoundaryItem(feature=m.description, status=_FROM_MILESTONE[m.status])
        for m in ledger.milestones
    ]


@dataclasses.dataclass(frozen=True, slots=True)
class TestRun:
    """A test command's real result (what `### Test Results` shows)."""

    command: str
    exit_code: int | None  # None: timed out
    output: str
    duration_s: float

    @property
    def passed(self) -> bool:
        return self.exit_code == 0

    def render(self) -> str:
        if self.exit_code is None:
            verdict = f"TIMED OUT after {self.duration_s:.0f}s"
        else:
            verdict = f"{'PASSED' if self.passed else 'FAILED'} (exit {self.exit_code})"
        out = self.output.rstrip("\n")
        if len(out) > TEST_OUTPUT_MAX_CHARS:
            cut = len(out) - TEST_OUTPUT_MAX_CHARS
            out = f"[... first {cut} characters omitted ...]\n" + out[-TEST_OUTPUT_MAX_CHARS:]
        return f"$ {self.command}\n{verdict} in {self.duration_s:.1f}s\n{out}".rstrip("\n")


def run_test_command(command: str, workspace: Path, *, timeout: float = 600.0) -> TestRun:
    """Run `command` with `bash -lc` in the workspace; stdout+stderr merged, bounded wait."""
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            ["bash", "-lc", command],
            cwd=workspace,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as e:
        return TestRun(command, 127, f"cannot start bash: {e}", 0.0)
    try:
        out, _ = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 9)
        out, _ = proc.communicate()
        code = None
    return TestRun(command, code, out.decode("utf-8", "replace"), time.monotonic() - started)


def build_handoff(
    workspace: Path,
    *,
    summary: str | None = None,
    next_actions: Sequence[str] = (),
    known_issues: Sequence[str] = (),
    open_decisions: Sequence[str] = (),
    target_agent: str = "",
    task_context: str | None = None,
    test_run: TestRun | None = None,
    ledger: ProgressLedger | None = None,
) -> HandoffRequest:
    """A handoff from the current state of the workspace (and the latest progress ledger)."""
    from vtcode.orient.progress import latest_progress, summary_line

    if ledger is None:
        ledger = latest_progress(workspace)
    if summary is None:
        summary = summary_line(ledger) if ledger else "No summary was given."
    issues = [
        *known_issues,
        *(i for i in (ledger.known_issues if ledger else []) if i not in known_issues),
    ]
    return HandoffRequest(
        target_agent=target_agent,
        state_summary=summary,
        modified_files=gitutil.modified_files(workspace) or [],
        open_decisions=list(open_decisions),
        task_context=task_context if task_context is not None else (ledger.goal if ledger else ""),
        test_results=test_run.render() if test_run else None,
        boundary_status=boundary_from_ledger(ledger),
        known_issues=issues,
        next_actions=list(next_actions),
    )


def write_handoff(workspace: Path, req: HandoffRequest) -> tuple[Path, Path]:
    """Write `.json` (the data) then `.md` (its rendering), each replaced atomically."""
    md, js = handoff_paths(workspace)
    ensure_private_dir(md.parent)
    atomic_write_bytes(js, orjson.dumps(encode(req), option=orjson.OPT_INDENT_2) + b"\n")
    atomic_write_bytes(md, (to_handoff_prompt(req) + "\n").encode())
    return md, js


def load_handoff(workspace: Path) -> tuple[HandoffRequest | None, str | None]:
    """(request, rendered markdown) of the current handoff; the JSON wins over a hand-made .md."""
    md, js = handoff_paths(workspace)
    with contextlib.suppress(OSError, orjson.JSONDecodeError, DecodeError):
        req = decode(HandoffRequest, orjson.loads(read_regular(js, limit=8 << 20)))
        return req, to_handoff_prompt(req)
    with contextlib.suppress(OSError):
        text = read_regular(md, limit=1 << 20).decode("utf-8", "replace").strip()
        if text:
            return None, text
    return None, None


def take_over_handoff(workspace: Path, session_id: str) -> list[Path]:
    """Move the current handoff files to `tasks/handoffs/<stamp>-<session>.*` (one-shot use)."""
    moved: list[Path] = []
    archive = tasks_dir(workspace) / "handoffs"
    for path in handoff_paths(workspace):
        if not path.is_file() or path.is_symlink():
            continue
        ensure_private_dir(archive)
        dest = archive / f"{compact_stamp()}-{session_id}{path.suffix}"
        with contextlib.suppress(FileNotFoundError):  # another session took it first
            path.rename(dest)
            moved.append(dest)
    if moved:
        fsync_dir(archive)
        fsync_dir(tasks_dir(workspace))
    return moved
