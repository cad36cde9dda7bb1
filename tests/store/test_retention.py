"""Retention removes exactly the right session folders, and nothing else."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from test_store import run_session, script

from vtcode.config.model import RetentionConfig, StoreConfig
from vtcode.events.types import ThreadStartedEvent, TurnStartedEvent
from vtcode.store import SessionWriter, apply_retention, list_sessions, sessions_root
from vtcode.store.layout import lock_path
from vtcode.store.retention import RetentionReport

CFG = StoreConfig(lock_timeout_secs=0.2)
DAY = 86400.0


def make(ws: Path, sid: str, *, age_days: float = 0.0, completed: bool = True) -> Path:
    """A session whose manifest and log are `age_days` old."""
    if completed:
        sdir = run_session(ws, sid, script(sid, turns=1))
    else:
        w = SessionWriter.create(ws, sid, CFG)
        w.submit(ThreadStartedEvent(thread_id=sid))
        w.submit(TurnStartedEvent())
        w.close()
        sdir = sessions_root(ws) / sid
    if age_days:
        when = dt.datetime.now(dt.UTC) - dt.timedelta(days=age_days)
        m = orjson.loads((sdir / "manifest.json").read_bytes())
        m["updated_at"] = when.isoformat(timespec="microseconds")
        (sdir / "manifest.json").write_bytes(orjson.dumps(m))
        t = when.timestamp()
        os.utime(sdir / "events.jsonl", (t, t))
    return sdir


def names(ws: Path) -> set[str]:
    return set(os.listdir(sessions_root(ws)))


def policy(max_sessions: int = 50, max_age_days: int = 30) -> RetentionConfig:
    return RetentionConfig(max_sessions=max_sessions, max_age_days=max_age_days)


def test_count_limit_removes_oldest_completed(tmp_path: Path) -> None:
    for i, sid in enumerate(["a", "b", "c", "d", "e"]):
        make(tmp_path, sid, age_days=10 - i)
    report = apply_retention(tmp_path, policy(max_sessions=3))
    assert sorted(report.deleted) == ["a", "b"]
    assert names(tmp_path) == {".locks", "c", "d", "e"}
    # lock files are never deleted
    assert sorted(os.listdir(sessions_root(tmp_path) / ".locks")) == [f"{s}.lock" for s in "abcde"]


def test_age_limit_and_fresh_mtime(tmp_path: Path) -> None:
    make(tmp_path, "old", age_days=40)
    stale = make(tmp_path, "stale-manifest", age_days=40)
    now = dt.datetime.now(dt.UTC).timestamp()
    os.utime(stale / "events.jsonl", (now, now))  # the log was written recently
    make(tmp_path, "new", age_days=1)
    report = apply_retention(tmp_path, policy())
    assert report.deleted == ["old"]
    assert names(tmp_path) == {".locks", "stale-manifest", "new"}


def test_abandoned_sessions(tmp_path: Path) -> None:
    """Abandoned (active, lock free): never removed for the count, removed once too old."""
    make(tmp_path, "crashed-old", age_days=40, completed=False)
    make(tmp_path, "crashed-new", age_days=2, completed=False)
    make(tmp_path, "done", age_days=3)
    make(tmp_path, "newer", age_days=1)
    report = apply_retention(tmp_path, policy(max_sessions=1))
    assert sorted(report.deleted) == ["crashed-old", "done"]
    assert names(tmp_path) == {".locks", "crashed-new", "newer"}


def test_live_and_current_sessions_are_kept(tmp_path: Path) -> None:
    make(tmp_path, "live-here", age_days=40)
    make(tmp_path, "live-there", age_days=40)
    make(tmp_path, "current", age_days=40)
    w = SessionWriter.open_existing(tmp_path, "live-here", CFG)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from filelock import FileLock\n"
            f"l = FileLock({str(lock_path(tmp_path, 'live-there'))!r}, mode=0o600, timeout=5)\n"
            "l.acquire(); print('held', flush=True); sys.stdin.read()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        report = apply_retention(tmp_path, policy(max_sessions=0), preserve="current")
    finally:
        holder.communicate("", timeout=30)
        w.close()
    assert report.deleted == []
    reasons = dict(report.skipped)
    assert reasons["live-here"].startswith("in use")
    assert reasons["live-there"].startswith("in use")
    assert reasons["current"] == "preserved (the current session, or a loop's recent step)"
    assert names(tmp_path) == {".locks", "live-here", "live-there", "current"}


def test_symlinks_unrelated_and_broken_folders_survive(tmp_path: Path) -> None:
    real = make(tmp_path, "real", age_days=40)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep me")
    (outside / "manifest.json").write_bytes(
        orjson.dumps({"session_id": "to-outside", "status": "completed"})
    )
    root = sessions_root(tmp_path)
    os.symlink(real, root / "to-real")
    os.symlink(outside, root / "to-outside")
    (root / "notes.txt").write_text("not a session")
    (root / "no-manifest").mkdir()
    (root / "no-manifest" / "events.jsonl").write_text("")
    broken = make(tmp_path, "broken", age_days=40)
    (broken / "manifest.json").write_bytes(b"{oops")
    other = make(tmp_path, "other-id", age_days=40)
    m = orjson.loads((other / "manifest.json").read_bytes())
    (other / "manifest.json").write_bytes(orjson.dumps(dict(m, session_id="someone-else")))
    report = apply_retention(tmp_path, policy(max_sessions=0))
    assert report.deleted == ["real"]  # the real folder goes; the symlink to it stays (dangling)
    assert os.path.islink(root / "to-real") and os.path.islink(root / "to-outside")
    assert (outside / "precious.txt").read_text() == "keep me"
    assert (root / "notes.txt").exists()
    left = names(tmp_path)
    assert {"no-manifest", "broken", "other-id", "to-real", "to-outside"} <= left
    reasons = dict(report.skipped)
    assert reasons["to-outside"] == "symlink (not followed)"
    assert reasons["broken"].startswith("no readable manifest")
    assert reasons["other-id"].startswith("no readable manifest")


def test_unknown_files_keep_the_whole_session(tmp_path: Path) -> None:
    sdir = make(tmp_path, "s1", age_days=40)
    (sdir / "derived" / "mine.txt").write_text("user data")
    sdir2 = make(tmp_path, "s2", age_days=40)
    os.symlink("/etc/passwd", sdir2 / "derived" / "open-responses.jsonl")
    report = apply_retention(tmp_path, policy())
    assert report.deleted == []
    reasons = dict(report.skipped)
    assert reasons["s1"] == "unknown files: derived/mine.txt"
    assert reasons["s2"] == "unknown files: derived/open-responses.jsonl"
    assert (sdir / "events.jsonl").exists() and (sdir2 / "events.jsonl").exists()


def test_known_extra_files_are_removed(tmp_path: Path) -> None:
    sdir = make(tmp_path, "s1", age_days=40)
    (sdir / "events.jsonl.torn-20260101T000000Z-abcd").write_text("x")
    (sdir / "events.jsonl.bak-20260101T000000Z").write_text("x")
    (sdir / "derived" / "open-responses.jsonl").write_text("x")
    (sdir / "derived" / "atif-trajectory.json").write_text("{}")
    (sdir / ".manifest.json.abc123.tmp").write_text("x")
    report = apply_retention(tmp_path, policy())
    assert report.deleted == ["s1"] and report.leftovers == []
    assert names(tmp_path) == {".locks"}


def test_dry_run_changes_nothing(tmp_path: Path) -> None:
    make(tmp_path, "a", age_days=40)
    make(tmp_path, "b", age_days=1)
    before = sorted(p.name for p in sessions_root(tmp_path).rglob("*"))
    report = apply_retention(tmp_path, policy(), dry_run=True)
    assert report.dry_run and report.deleted == ["a"]
    assert sorted(p.name for p in sessions_root(tmp_path).rglob("*")) == before


def test_leftover_tombstone_is_finished(tmp_path: Path) -> None:
    """A gc killed between rename and rmdir leaves `.trash-*`; the next pass finishes it."""
    sdir = make(tmp_path, "s1", age_days=1)
    root = sessions_root(tmp_path)
    os.rename(sdir, root / ".trash-s1-20260101T000000Z-abcdef")
    tomb2 = make(tmp_path, "s2", age_days=1)
    (tomb2 / "derived" / "user.txt").write_text("x")
    os.rename(tomb2, root / ".trash-s2-20260101T000000Z-abcdef")
    report = apply_retention(tmp_path, policy())
    assert not (root / ".trash-s1-20260101T000000Z-abcdef").exists()
    assert report.leftovers == [(".trash-s2-20260101T000000Z-abcdef", ["derived/user.txt"])]
    assert (root / ".trash-s2-20260101T000000Z-abcdef" / "derived" / "user.txt").exists()


def test_deleted_session_can_be_created_again(tmp_path: Path) -> None:
    make(tmp_path, "s1", age_days=40)
    assert apply_retention(tmp_path, policy()).deleted == ["s1"]
    run_session(tmp_path, "s1", script("s1"))
    assert [r.session_id for r in list_sessions(tmp_path)] == ["s1"]


def test_missing_root_is_a_noop(tmp_path: Path) -> None:
    report = apply_retention(tmp_path, policy())
    assert report == RetentionReport()
    assert not (tmp_path / ".vtcode").exists()


@pytest.mark.parametrize("n", [1])
def test_report_json_shape(tmp_path: Path, n: int) -> None:
    make(tmp_path, "a", age_days=40)
    data = apply_retention(tmp_path, policy(), dry_run=True).to_json()
    assert data["deleted"] == ["a"] and data["dry_run"] is True
    assert set(data) == {"dry_run", "deleted", "kept", "skipped", "leftovers", "errors"}
