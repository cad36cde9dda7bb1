"""Progress ledger: upstream's rules, the markdown rendering, persistence and the stall signal."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from syrupy.assertion import SnapshotAssertion

from vtcode import schemas
from vtcode.jsontypes import encode
from vtcode.orient.models import Milestone, MilestoneStatus, ProgressLedger
from vtcode.orient.progress import (
    ProgressMonitor,
    completion_ratio,
    is_complete,
    latest_progress,
    load_progress,
    note_advance,
    note_stall,
    parse_task_milestones,
    save_progress,
    summary_line,
    to_markdown,
)

T0 = "2026-01-01T00:00:00.000000+00:00"
T1 = "2026-01-01T00:05:00.000000+00:00"
T2 = "2026-01-01T00:10:00.000000+00:00"


def ledger(*statuses: MilestoneStatus, **kw: object) -> ProgressLedger:
    ms = [
        Milestone(id=str(i + 1), description=f"item {i + 1}", status=s)
        for i, s in enumerate(statuses)
    ]
    return ProgressLedger(session_id="s1", goal="ship it", milestones=ms, updated_at=T0, **kw)  # type: ignore[arg-type]


def test_completion_ratio_is_done_over_total_and_one_without_milestones() -> None:
    assert completion_ratio(ledger()) == 1.0
    assert is_complete(ledger())
    mixed = ledger(MilestoneStatus.DONE, MilestoneStatus.IN_PROGRESS, MilestoneStatus.PENDING)
    assert completion_ratio(mixed) == pytest.approx(1 / 3)
    assert not is_complete(mixed)
    assert is_complete(ledger(MilestoneStatus.DONE, MilestoneStatus.DONE))


def test_stall_sets_since_once_and_advance_clears_it() -> None:
    l0 = ledger()
    l1 = note_stall(l0, now=T1)
    assert (l1.stalled_since, l1.confidence, l1.consecutive_stalls) == (T1, 0.9, 1)
    l2 = note_stall(l1, now=T2)
    assert (l2.stalled_since, l2.confidence, l2.consecutive_stalls) == (T1, 0.8, 2)
    assert l2.updated_at == T2
    l3 = note_advance(l2, now=T2)
    assert (l3.stalled_since, l3.confidence, l3.consecutive_stalls) == (None, 0.85, 0)


def test_confidence_is_clamped_to_unit_interval() -> None:
    low = ledger()
    for _ in range(15):
        low = note_stall(low)
    assert low.confidence == 0.0
    assert low.consecutive_stalls == 15
    high = note_advance(ledger())
    assert high.confidence == 1.0


def test_summary_line_is_upstreams_format() -> None:
    led = ledger(MilestoneStatus.DONE, MilestoneStatus.PENDING, MilestoneStatus.PENDING)
    assert summary_line(led) == "Goal: ship it | Completion: 33% | Confidence: 1.00 | on track"
    assert summary_line(note_stall(led)) == (
        "Goal: ship it | Completion: 33% | Confidence: 0.90 | STALLED"
    )


def test_markdown_rendering(snapshot_json: SnapshotAssertion) -> None:
    full = ledger(
        MilestoneStatus.DONE,
        MilestoneStatus.IN_PROGRESS,
        MilestoneStatus.BLOCKED,
        MilestoneStatus.PENDING,
        stalled_since=T1,
        confidence=0.7,
        previous_session_id="s0",
        handoff_summary="built the parser",
        git_checkpoint="abc1234",
        known_issues=["flaky test_io", "no docs"],
    )
    empty = ledger()
    assert {"full": to_markdown(full).splitlines(), "empty": to_markdown(empty).splitlines()} == (
        snapshot_json
    )


def test_markdown_rounds_half_away_from_zero_like_rust() -> None:
    # 1 of 8 done = 12.5% -> Rust's round() gives 13 (Python's round() would give 12).
    led = ledger(MilestoneStatus.DONE, *([MilestoneStatus.PENDING] * 7))
    assert "**Completion:** 13%\n" in to_markdown(led)


def test_task_tracker_checkboxes_become_milestones() -> None:
    text = (
        "# Tasks\n\n- [x] design\n- [~] build\n* [!] deploy\n1. [ ] docs\n- plain line\n- [?] odd\n"
    )
    ms = parse_task_milestones(text)
    assert [(m.id, m.description, m.status.value) for m in ms] == [
        ("1", "design", "done"),
        ("2", "build", "in_progress"),
        ("3", "deploy", "blocked"),
        ("4", "docs", "pending"),
    ]


def _session(ws: Path, sid: str) -> None:
    (ws / ".vtcode" / "sessions" / sid).mkdir(parents=True)


def test_save_load_round_trip_matches_schema(tmp_path: Path) -> None:
    _session(tmp_path, "s1")
    led = note_stall(ledger(MilestoneStatus.DONE, MilestoneStatus.PENDING))
    path = save_progress(tmp_path, led)
    assert path == tmp_path / ".vtcode/sessions/s1/derived/progress.json"
    assert load_progress(tmp_path, "s1") == led
    data = orjson.loads(path.read_bytes())
    assert data == encode(led)
    assert list(schemas.reference_validator("progress-ledger").iter_errors(data)) == []
    assert (path.stat().st_mode & 0o777) == 0o600


def test_save_refuses_a_missing_session(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        save_progress(tmp_path, ledger())
    assert not (tmp_path / ".vtcode").exists()


def test_latest_progress_picks_newest_and_skips_garbage(tmp_path: Path) -> None:
    for sid, ts in (("a", T1), ("b", T2), ("c", T0)):
        _session(tmp_path, sid)
        save_progress(
            tmp_path,
            ProgressLedger(session_id=sid, goal=sid, updated_at=ts),
        )
    _session(tmp_path, "junk")
    (tmp_path / ".vtcode/sessions/junk/derived").mkdir()
    (tmp_path / ".vtcode/sessions/junk/derived/progress.json").write_text("{not json")
    best = latest_progress(tmp_path)
    assert best is not None and best.session_id == "b"
    other = latest_progress(tmp_path, exclude="b")
    assert other is not None and other.session_id == "a"
    assert latest_progress(tmp_path / "nowhere") is None


def test_monitor_exposes_consecutive_stalls() -> None:
    mon = ProgressMonitor(ledger())
    mon.record(made_progress=False)
    mon.record(made_progress=False)
    assert mon.consecutive_stalls == 2
    mon.record(made_progress=True)
    assert mon.consecutive_stalls == 0
    assert mon.ledger.stalled_since is None


def test_latest_progress_reads_the_recent_list_not_every_session(tmp_path: Path) -> None:
    """Saves keep `.vtcode/progress-recent` (newest first); a ledger outside that list is not
    read while the list has a usable one, and a missing list falls back to the full scan."""
    for sid, ts in (("a", T1), ("b", T2)):
        _session(tmp_path, sid)
        save_progress(tmp_path, ProgressLedger(session_id=sid, goal=sid, updated_at=ts))
    recent = tmp_path / ".vtcode" / "progress-recent"
    assert recent.read_text() == "b\na\n"
    save_progress(tmp_path, ProgressLedger(session_id="a", goal="a", updated_at=T1))
    assert recent.read_text() == "a\nb\n"
    # A newer ledger written behind the list's back (not through save_progress) is not seen...
    _session(tmp_path, "unlisted")
    derived = tmp_path / ".vtcode/sessions/unlisted/derived"
    derived.mkdir()
    (derived / "progress.json").write_bytes(
        orjson.dumps(encode(ProgressLedger(session_id="unlisted", goal="u", updated_at=T2)))
    )
    best = latest_progress(tmp_path)
    assert best is not None and best.session_id == "b"
    assert latest_progress(tmp_path, exclude="b") is not None
    # ...until the list is gone: then every session is scanned again.
    recent.unlink()
    best = latest_progress(tmp_path)
    assert best is not None and best.session_id == "unlisted"
