"""The orient part of the loop: orientation once per run, one-shot handoff, ledger per turn."""

from __future__ import annotations

from pathlib import Path

import orjson

from vtcode.loop.outcomes import Outcome, OutcomeKind
from vtcode.loop.recorder import Recorder
from vtcode.messages import Message, ModelRequest
from vtcode.orient.handoff import write_handoff
from vtcode.orient.models import HandoffRequest, ProgressLedger
from vtcode.orient.progress import load_progress, progress_monitor, save_progress
from vtcode.runtime.orient_part import OrientPart


def _session(ws: Path, sid: str) -> None:
    (ws / ".vtcode/sessions" / sid).mkdir(parents=True)


def _request(prompt: str) -> ModelRequest:
    return ModelRequest(
        model="m",
        messages=(Message(role="system", content="sys"), Message(role="user", content=prompt)),
        tools=(),
    )


def test_ledger_tracks_turns_and_is_persisted(tmp_path: Path) -> None:
    _session(tmp_path, "s1")
    tasks = tmp_path / ".vtcode/tasks"
    tasks.mkdir(parents=True)
    (tasks / "current_task.md").write_text("- [ ] parse\n- [ ] print\n")
    part = OrientPart(tmp_path, "s1", resumed=False)
    part.before_request(_request("  build   the\nthing  "))
    part.on_turn_end(made_progress=False)
    part.on_turn_end(made_progress=False)
    mon = progress_monitor("s1")
    assert mon is not None and mon.consecutive_stalls == 2
    saved = load_progress(tmp_path, "s1")
    assert saved is not None and saved.goal == "build the thing" and saved.consecutive_stalls == 2
    # Checking a box counts as progress even when the turn produced no text.
    (tasks / "current_task.md").write_text("- [x] parse\n- [ ] print\n")
    part.on_turn_end(made_progress=False)
    events: list[object] = []
    part.on_finish(Outcome(OutcomeKind.SUCCESS), Recorder(events.append))
    final = load_progress(tmp_path, "s1")
    assert final is not None
    assert (final.stalled_since, final.consecutive_stalls) == (None, 0)
    assert [m.status.value for m in final.milestones] == ["done", "pending"]
    assert events == [] and progress_monitor("s1") is None
    on_disk = orjson.loads((tmp_path / ".vtcode/sessions/s1/derived/progress.json").read_bytes())
    assert on_disk["confidence"] == 0.85


def test_new_session_links_to_the_previous_ledger(tmp_path: Path) -> None:
    _session(tmp_path, "old")
    _session(tmp_path, "new")
    save_progress(
        tmp_path,
        ProgressLedger(
            session_id="old", goal="g", updated_at="2026-01-01T00:00:00+00:00", known_issues=["x"]
        ),
    )
    part = OrientPart(tmp_path, "new", resumed=False)
    assert part.monitor.ledger.previous_session_id == "old"
    assert part.monitor.ledger.known_issues == ["x"]
    section = part.orientation()
    # Another session's goal is history, never this session's progress (issue 26.2).
    assert section is not None and "### Progress" not in section
    assert "### Previous Run\nPrevious session old (a different run, not this task)" in section
    assert section.endswith("its goal was: g")


def test_handoff_is_shown_once_then_archived_but_survives_an_in_run_reset(tmp_path: Path) -> None:
    _session(tmp_path, "s1")
    write_handoff(
        tmp_path,
        HandoffRequest(state_summary="half done", task_context="t", known_issues=["slow"]),
    )
    part = OrientPart(tmp_path, "s1", resumed=False)
    first = part.orientation()
    assert first is not None and "### Current State\nhalf done" in first
    assert not (tmp_path / ".vtcode/tasks/current_handoff.json").exists()
    assert len(list((tmp_path / ".vtcode/tasks/handoffs").iterdir())) == 2
    assert part.monitor.ledger.handoff_summary == "half done"
    assert part.monitor.ledger.known_issues == ["slow"]
    again = part.orientation()  # e.g. after a context reset in the same run
    assert again is not None and "half done" in again
    other = OrientPart(tmp_path, "s2", resumed=False)
    assert "HANDOFF" not in (other.orientation() or "")


def test_reset_manifest_is_consumed_after_orienting(tmp_path: Path) -> None:
    _session(tmp_path, "s1")
    manifest = tmp_path / ".vtcode/tasks/current_context_reset.md"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(
        "# Context Reset Manifest\n\n - **Triggered at:** 2026-01-01T00:00:00Z\n"
        " - **Trigger:** stall\n - **Stall count:** 2\n"
    )
    part = OrientPart(tmp_path, "s1", resumed=False)
    section = part.orientation()
    assert section is not None and "### Context Reset\nThis session starts" in section
    assert " - **Stall count:** 2" in section
    assert not manifest.exists()  # one-shot
    assert "Context Reset" not in (part.orientation() or "")
