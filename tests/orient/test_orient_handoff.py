"""Handoff: upstream's markdown byte for byte, building from real state, one-shot take-over."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import orjson
import pytest
from syrupy.assertion import SnapshotAssertion

from tests.conftest import RunVtcode
from vtcode import schemas
from vtcode.orient.handoff import (
    build_handoff,
    load_handoff,
    run_test_command,
    take_over_handoff,
    to_handoff_prompt,
    write_handoff,
)
from vtcode.orient.models import (
    BoundaryItem,
    BoundaryStatus,
    HandoffRequest,
    Milestone,
    MilestoneStatus,
    ProgressLedger,
)

FULL = HandoffRequest(
    target_agent="verifier",
    state_summary="All features implemented",
    modified_files=["src/main.rs", "src/auth.rs"],
    open_decisions=["Should we use JWT?", "Rate limit per user or per IP?"],
    task_context="Review the implementation",
    test_results="15 passed, 2 failed\n  FAIL: test_login_rate_limit",
    boundary_status=[
        BoundaryItem(feature="login", status=BoundaryStatus.DONE, notes="JWT auth working"),
        BoundaryItem(feature="signup", status=BoundaryStatus.IN_PROGRESS),
        BoundaryItem(feature="billing", status=BoundaryStatus.NOT_STARTED),
        BoundaryItem(feature="sso", status=BoundaryStatus.BLOCKED, notes="needs IdP"),
    ],
    known_issues=["Rate limiting missing"],
    next_actions=["Fix failing tests", "Write integration tests"],
)

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def test_rendering_snapshot(snapshot_json: SnapshotAssertion) -> None:
    minimal = HandoffRequest(state_summary="Implemented login", task_context="Build auth")
    assert {
        "full": to_handoff_prompt(FULL).split("\n"),
        "minimal": to_handoff_prompt(minimal).split("\n"),
    } == snapshot_json


def test_rendering_matches_upstream_exactly() -> None:
    req = HandoffRequest(
        state_summary="Code ready",
        task_context="Review",
        boundary_status=[BoundaryItem(feature="auth", status=BoundaryStatus.DONE)],
        next_actions=["a", "b"],
    )
    assert to_handoff_prompt(req) == (
        "## HANDOFF FROM PREVIOUS AGENT\n\n\n\n"
        "Previous agent completed work and is handing off to you.\n\n\n\n"
        "### Current State\nCode ready\n\n"
        "### Boundary Status\n- [DONE] auth\n\n"
        "### Recommended Next Actions\n1. a\n1. b\n\n"
        "### Task Context\nReview\n\n"
        "Continue from where the previous agent left off. Read the modified files to understand "
        "the current state. Check boundary status to know what's done vs. what needs work."
    )


def test_write_then_load_round_trips_and_validates(tmp_path: Path) -> None:
    md, js = write_handoff(tmp_path, FULL)
    assert md == tmp_path / ".vtcode/tasks/current_handoff.md"
    assert md.read_text() == to_handoff_prompt(FULL) + "\n"
    data = orjson.loads(js.read_bytes())
    assert list(schemas.reference_validator("handoff-request").iter_errors(data)) == []
    req, text = load_handoff(tmp_path)
    assert req == FULL and text == to_handoff_prompt(FULL)


def test_a_hand_written_markdown_handoff_is_used_as_is(tmp_path: Path) -> None:
    (tmp_path / ".vtcode/tasks").mkdir(parents=True)
    (tmp_path / ".vtcode/tasks/current_handoff.md").write_text("## my notes\n\ndo X next\n")
    assert load_handoff(tmp_path) == (None, "## my notes\n\ndo X next")


def test_broken_json_falls_back_to_markdown(tmp_path: Path) -> None:
    md, js = write_handoff(tmp_path, FULL)
    js.write_text('{"state_summary": 3}')
    req, text = load_handoff(tmp_path)
    assert req is None and text == md.read_text().strip()


def test_take_over_archives_both_files(tmp_path: Path) -> None:
    write_handoff(tmp_path, FULL)
    moved = take_over_handoff(tmp_path, "sess-1")
    assert sorted(p.suffix for p in moved) == [".json", ".md"]
    assert all(p.parent == tmp_path / ".vtcode/tasks/handoffs" for p in moved)
    assert load_handoff(tmp_path) == (None, None)
    assert take_over_handoff(tmp_path, "sess-2") == []


def test_test_command_output_is_the_real_output(tmp_path: Path) -> None:
    ok = run_test_command("echo 3 passed; echo warn >&2", tmp_path)
    assert ok.passed and ok.exit_code == 0
    assert "3 passed" in ok.output and "warn" in ok.output
    rendered = ok.render()
    assert rendered.startswith("$ echo 3 passed; echo warn >&2\nPASSED (exit 0) in ")
    bad = run_test_command("echo 1 failed; exit 3", tmp_path)
    assert not bad.passed and bad.render().splitlines()[1].startswith("FAILED (exit 3)")


def test_test_command_timeout_kills_it(tmp_path: Path) -> None:
    run = run_test_command("echo started; sleep 30", tmp_path, timeout=0.5)
    assert run.exit_code is None and "started" in run.output
    assert "TIMED OUT" in run.render()


def _git(ws: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", *args],
        cwd=ws,
        check=True,
        capture_output=True,
    )


@needs_git
def test_build_from_state(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("a")
    _git(tmp_path, "add", "a.txt")
    _git(tmp_path, "commit", "-q", "-m", "first")
    (tmp_path / "a.txt").write_text("changed")
    (tmp_path / "new.txt").write_text("n")
    (tmp_path / ".vtcode").mkdir()
    (tmp_path / ".vtcode/junk").write_text("x")
    ledger = ProgressLedger(
        session_id="s",
        goal="ship the feature",
        updated_at="2026-01-01T00:00:00+00:00",
        milestones=[
            Milestone(id="1", description="parser", status=MilestoneStatus.DONE),
            Milestone(id="2", description="cli", status=MilestoneStatus.PENDING),
        ],
        known_issues=["slow on big files"],
    )
    req = build_handoff(
        tmp_path,
        next_actions=["write the cli"],
        test_run=run_test_command("echo ok", tmp_path),
        ledger=ledger,
    )
    assert req.modified_files == ["a.txt", "new.txt"]
    assert req.task_context == "ship the feature"
    assert req.state_summary.startswith("Goal: ship the feature | Completion: 50%")
    assert [(b.feature, b.status) for b in req.boundary_status] == [
        ("parser", BoundaryStatus.DONE),
        ("cli", BoundaryStatus.NOT_STARTED),
    ]
    assert req.known_issues == ["slow on big files"]
    assert req.test_results is not None and "ok" in req.test_results


def test_build_outside_git_has_no_modified_files(tmp_path: Path) -> None:
    req = build_handoff(tmp_path, summary="did things")
    assert req.modified_files == [] and req.state_summary == "did things"


def test_cli_writes_the_handoff_and_the_next_session_takes_it_over(
    tmp_path: Path, run_vtcode: RunVtcode
) -> None:
    rc, out, err = run_vtcode(
        ["handoff", "--json", "--summary", "parser done", "--next", "write the cli",
         "--next", "add docs", "--issue", "slow on big files", "--task", "ship the tool",
         "--test-cmd", "echo 12 passed"],
        cwd=tmp_path,
    )  # fmt: skip
    assert rc == 0, err
    req = orjson.loads(out)
    assert req["state_summary"] == "parser done"
    assert req["next_actions"] == ["write the cli", "add docs"]
    assert req["test_results"].startswith("$ echo 12 passed\nPASSED (exit 0) in ")
    assert req["test_results"].endswith("\n12 passed")
    md = (tmp_path / ".vtcode/tasks/current_handoff.md").read_text()
    assert "### Recommended Next Actions\n1. write the cli\n1. add docs" in md
    rc, out, _ = run_vtcode(["orient"], cwd=tmp_path)
    assert "## HANDOFF FROM PREVIOUS AGENT" in out and "parser done" in out
    # A real session orients from it, then archives it: the session after that does not see it.
    rc, _, err = run_vtcode(
        ["exec", "--provider", "replay", "--session-id", "next-1", "continue"], cwd=tmp_path
    )
    assert rc == 0, err
    assert not (tmp_path / ".vtcode/tasks/current_handoff.md").exists()
    archived = sorted(p.name for p in (tmp_path / ".vtcode/tasks/handoffs").iterdir())
    assert [n.split("-", 1)[1] for n in archived] == ["next-1.json", "next-1.md"]
    ledger = orjson.loads((tmp_path / ".vtcode/sessions/next-1/derived/progress.json").read_bytes())
    assert ledger["handoff_summary"] == "parser done"
    assert ledger["known_issues"] == ["slow on big files"]
    rc, out, _ = run_vtcode(["orient"], cwd=tmp_path)
    assert "HANDOFF" not in out


def test_cli_failing_test_command_exits_1_but_still_writes(
    tmp_path: Path, run_vtcode: RunVtcode
) -> None:
    rc, out, err = run_vtcode(
        ["handoff", "--summary", "s", "--test-cmd", "echo 1 failed; exit 5"], cwd=tmp_path
    )
    assert rc == 1 and "FAILED (exit 5)" in out
    # issue 26: the exit code is not a surprise; stderr says why it is 1
    assert "vtcode handoff: --test-cmd exited 5; exit code 1" in err
    assert (tmp_path / ".vtcode/tasks/current_handoff.json").exists()
    rc, _, _ = run_vtcode(["handoff", "--summary", "dry", "--dry-run"], cwd=tmp_path)
    saved = orjson.loads((tmp_path / ".vtcode/tasks/current_handoff.json").read_bytes())
    assert rc == 0 and saved["state_summary"] == "s"


def test_help_says_test_cmd_runs_and_sets_the_exit_code(run_vtcode: RunVtcode) -> None:
    rc, out, _ = run_vtcode(["handoff", "--help"])
    flat = " ".join(out.replace("│", " ").split())
    assert rc == 0
    assert "Run CMD now" in flat and "handoff exits 1" in flat, out
    assert "outside the sandbox, even with --dry-run" in flat, out
