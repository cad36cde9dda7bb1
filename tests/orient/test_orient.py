"""Orientation: gathering artifacts, upstream's section order, summaries only, `vtcode orient`."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
from pathlib import Path

import orjson
import pytest
from syrupy.assertion import SnapshotAssertion

from tests.conftest import RunVtcode
from vtcode.orient.context import OrientationContext, gather_orientation, read_artifact_summary
from vtcode.orient.handoff import write_handoff
from vtcode.orient.memory import MemoryKind, append_entry
from vtcode.orient.models import HandoffRequest, Milestone, MilestoneStatus, ProgressLedger
from vtcode.orient.progress import save_progress

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
NOW = dt.datetime(2026, 3, 1, 12, 0, 0, tzinfo=dt.UTC)


def _git(ws: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    }
    subprocess.run(["git", *args], cwd=ws, check=True, capture_output=True, env=env)


def _populate(ws: Path) -> None:
    tasks = ws / ".vtcode/tasks"
    tasks.mkdir(parents=True)
    (tasks / "current_spec.md").write_text(
        "# Spec\n\nBuild a stronger exec harness.\n\nKeep it resumable.\n"
    )
    (tasks / "current_contract.md").write_text("# Contract\n\n- Deliver.\n- Verify.\n")
    (tasks / "current_sprint_contract.md").write_text("# Sprint\nScope: login.\n")
    (tasks / "current_evaluation.md").write_text("# Evaluation\n\nVerdict: fail\n")
    (tasks / "current_outcome_verification.md").write_text("# OV\n\nResult: 12 passed\n")
    (tasks / "current_feature_list.md").write_text("# Features\n\n- [ ] Auth\n- [x] API\n")
    (ws / ".vtcode/sessions/s1").mkdir(parents=True)
    save_progress(
        ws,
        ProgressLedger(
            session_id="s1",
            goal="ship auth",
            updated_at="2026-01-01T00:00:00+00:00",
            milestones=[
                Milestone(id="1", description="login", status=MilestoneStatus.DONE),
                Milestone(id="2", description="signup", status=MilestoneStatus.PENDING),
            ],
            stalled_since="2026-01-01T00:00:00+00:00",
            confidence=0.8,
        ),
    )
    append_entry(ws, MemoryKind.NOTES, "tests live in tests/", now=NOW)
    append_entry(ws, MemoryKind.DECISIONS, "use JWT", now=NOW)
    (ws / ".vtcode/memories").mkdir()
    (ws / ".vtcode/memories/compaction_summary.md").write_text("Earlier: wrote the parser.\n")
    (tasks / "current_context_reset.md").write_text(
        "# Context Reset Manifest\n\n - **Triggered at:** 2026-01-01T00:00:00Z\n"
        " - **Trigger:** stall\n - **Stall count:** 3\n"
    )
    write_handoff(ws, HandoffRequest(state_summary="login done", task_context="ship auth"))


def test_nothing_to_orient_from_is_none(tmp_path: Path) -> None:
    ctx = gather_orientation(tmp_path)
    assert ctx == OrientationContext()
    assert ctx.to_prompt_section() is None


@needs_git
def test_full_section_snapshot(tmp_path: Path, snapshot_json: SnapshotAssertion) -> None:
    _git(tmp_path, "init", "-q")
    for i in range(7):
        (tmp_path / "f.txt").write_text(str(i))
        _git(tmp_path, "add", "f.txt")
        _git(tmp_path, "commit", "-q", "-m", f"commit {i}")
    _populate(tmp_path)
    section = gather_orientation(tmp_path).to_prompt_section()
    assert section is not None
    assert section.split("\n") == snapshot_json
    # Upstream's order of the headings.
    order = [
        "### Progress", "### Spec", "### Contract", "### Sprint Contract", "### Last Evaluation",
        "### Outcome Verification", "### Recent Git Log", "### Loop Notes", "### Loop Decisions",
        "### Previous Session Summary", "### Feature List", "### Context Reset",
        "## HANDOFF FROM PREVIOUS AGENT",
    ]  # fmt: skip
    positions = [section.index(h + "\n") for h in order]
    assert positions == sorted(positions)
    assert section.count("commit ") == 5  # git log -5


def test_artifact_preview_is_bounded_to_280_chars(tmp_path: Path) -> None:
    p = tmp_path / "spec.md"
    p.write_text("# Title\n" + "\n".join("x" * 100 for _ in range(6)))
    summary = read_artifact_summary(p, "Spec")
    assert summary is not None
    body = summary.removeprefix("Spec: ")
    assert len(body) == 280 and body.endswith("...")
    assert body.count(" | ") == 2  # only the first 4 lines are considered, then truncated
    (tmp_path / "headings.md").write_text("# only\n## headings\n\n")
    assert read_artifact_summary(tmp_path / "headings.md", "Spec") is None
    assert read_artifact_summary(tmp_path / "missing.md", "Spec") is None


def test_long_memory_shows_only_the_newest_entries(tmp_path: Path) -> None:
    for i in range(25):
        append_entry(tmp_path, MemoryKind.NOTES, f"note {i}", now=NOW)
    notes = gather_orientation(tmp_path).loop_notes
    assert notes is not None
    lines = notes.splitlines()
    assert lines[0] == "# Loop Notes"
    assert "(newest 20 of 25 entries; all of them: .vtcode/state/notes.md)" in lines
    assert lines[-1].endswith("note 24") and not any(ln.endswith("note 4") for ln in lines)


def test_outside_git_there_is_no_git_log(tmp_path: Path) -> None:
    append_entry(tmp_path, MemoryKind.NOTES, "n", now=NOW)
    ctx = gather_orientation(tmp_path)
    assert ctx.recent_git_log is None and ctx.loop_notes is not None


def test_cli_prints_the_same_section_and_consumes_nothing(
    tmp_path: Path, run_vtcode: RunVtcode
) -> None:
    _populate(tmp_path)
    expected = gather_orientation(tmp_path).to_prompt_section()
    rc, out, err = run_vtcode(["orient"], cwd=tmp_path)
    assert (rc, out) == (0, f"{expected}\n"), err
    rc, out, _ = run_vtcode(["orient", "--json"], cwd=tmp_path)
    data = orjson.loads(out)
    assert rc == 0 and data["section"] == expected
    assert data["progress_summary"].startswith("Goal: ship auth | Completion: 50%")
    assert data["handoff"]["state_summary"] == "login done"
    assert (tmp_path / ".vtcode/tasks/current_handoff.json").exists()
    assert (tmp_path / ".vtcode/tasks/current_context_reset.md").exists()


def test_cli_with_nothing_prints_nothing(tmp_path: Path, run_vtcode: RunVtcode) -> None:
    rc, out, err = run_vtcode(["orient"], cwd=tmp_path)
    assert (rc, out) == (0, "") and "nothing to orient from" in err
