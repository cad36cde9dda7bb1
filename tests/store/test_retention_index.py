"""Automatic retention works from the closed-session index, with every safety rule kept.

The index (`.vtcode/closed-sessions.index`) is appended when a run closes its session; the
automatic pass before each run reads it instead of scanning every session, re-checks each doomed
session on disk, and removes at most `AUTO_MAX_REMOVALS`; `vtcode sessions gc` scans everything
and rewrites the index (missing or corrupt). Speed: bench/retention.py.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from test_retention import CFG, make, names, policy

from tests.exec_support import SCRIPTS, vtcode
from vtcode.store import SessionWriter, sessions_root
from vtcode.store import retention as retention_mod
from vtcode.store.closed_index import index_path, read_index, record_closed
from vtcode.store.layout import lock_path
from vtcode.store.retention import apply_retention, apply_retention_indexed

SUCCESS = str(SCRIPTS / "scenario-success.toml")


def _index(ws: Path, *sids: str) -> None:
    for sid in sids:
        assert record_closed(ws, sid)


def test_runs_through_the_cli_index_and_retire_sessions(tmp_path: Path) -> None:
    keep2 = ["-c", "store.retention.max_sessions=2"]
    for n in range(4):
        proc = vtcode(
            [*keep2, "exec", "-q", "--session-id", f"s{n}", "--script", SUCCESS, "hi"], tmp_path
        )
        assert proc.returncode == 0, proc.stderr
    # Before each run the pass keeps the 2 newest closed sessions (the running one aside).
    assert names(tmp_path) == {".locks", "s1", "s2", "s3"}
    indexed = read_index(tmp_path)
    assert indexed is not None and sorted(indexed) == ["s1", "s2", "s3"]
    lines = index_path(tmp_path).read_text().splitlines()
    assert [line.split(" ")[1] for line in lines] == ["s1", "s2", "s3"]  # oldest first


def test_the_automatic_pass_reads_only_the_index(tmp_path: Path) -> None:
    for i, sid in enumerate(["a", "b", "c"]):
        make(tmp_path, sid, age_days=10 - i)
    _index(tmp_path, "b", "c")  # "a" closed but never indexed (say, killed after closing)
    report = apply_retention_indexed(tmp_path, policy(max_sessions=1))
    assert report.deleted == ["b"]
    assert names(tmp_path) == {".locks", "a", "c"}  # "a" is not seen without a full scan
    full = apply_retention(tmp_path, policy(max_sessions=1))  # `sessions gc`
    assert full.deleted == ["a"]
    assert read_index(tmp_path) == {
        "c": orjson.loads((sessions_root(tmp_path) / "c" / "manifest.json").read_bytes())[
            "updated_at"
        ]
    }


def test_age_limit_from_the_index_rechecks_the_fresh_age(tmp_path: Path) -> None:
    make(tmp_path, "old", age_days=40)
    stale = make(tmp_path, "written-since", age_days=40)
    make(tmp_path, "new", age_days=1)
    _index(tmp_path, "old", "written-since", "new")
    now = time.time()
    os.utime(stale / "events.jsonl", (now, now))  # the log changed after it was indexed
    report = apply_retention_indexed(tmp_path, policy())
    assert report.deleted == ["old"]
    assert names(tmp_path) == {".locks", "written-since", "new"}
    index = read_index(tmp_path) or {}
    assert sorted(index) == ["new", "written-since"]
    # re-dated to the log's time, so later passes do not visit it again
    assert index["written-since"] > (dt.datetime.now(dt.UTC) - dt.timedelta(days=1)).isoformat()


def test_visits_per_automatic_pass_are_capped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sids = [f"s{i}" for i in range(5)]
    for sid in sids:
        make(tmp_path, sid, age_days=40)
    _index(tmp_path, *sids)
    now = time.time()
    for sid in sids:  # every log is fresh: the indexed (old) times all look doomed
        os.utime(sessions_root(tmp_path) / sid / "events.jsonl", (now, now))
    monkeypatch.setattr(retention_mod, "AUTO_MAX_VISITS", 2)
    before = read_index(tmp_path) or {}
    assert apply_retention_indexed(tmp_path, policy()).deleted == []
    after = read_index(tmp_path) or {}
    assert [s for s in sids if after[s] != before[s]] == ["s0", "s1"]  # only two visited
    apply_retention_indexed(tmp_path, policy())
    after = read_index(tmp_path) or {}
    assert [s for s in sids if after[s] != before[s]] == ["s0", "s1", "s2", "s3"]
    assert names(tmp_path) == {".locks", *sids}


def test_indexed_pass_keeps_every_safety_rule(tmp_path: Path) -> None:
    root = sessions_root(tmp_path)
    for sid in ("real", "live", "current", "odd", "other-id", "reopened"):
        make(tmp_path, sid, age_days=40)
    _index(tmp_path, "real", "live", "current", "odd", "other-id", "reopened")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep me")
    os.symlink(outside, root / "link")
    with index_path(tmp_path).open("a") as f:  # index lines naming a symlink and garbage
        f.write("2000-01-01T00:00:00.000000+00:00 link\nnot an index line\n\xff\xfe junk\n")
    (root / "odd" / "mine.txt").write_text("unknown file")
    m = orjson.loads((root / "other-id" / "manifest.json").read_bytes())
    (root / "other-id" / "manifest.json").write_bytes(orjson.dumps(dict(m, session_id="x")))
    w = SessionWriter.open_existing(tmp_path, "reopened", CFG)  # closes nothing: it ended well
    w.close()
    m = orjson.loads((root / "reopened" / "manifest.json").read_bytes())
    (root / "reopened" / "manifest.json").write_bytes(orjson.dumps(dict(m, status="active")))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from filelock import FileLock\n"
            f"l = FileLock({str(lock_path(tmp_path, 'live'))!r}, mode=0o600, timeout=5)\n"
            "l.acquire(); print('held', flush=True); sys.stdin.read()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        report = apply_retention_indexed(tmp_path, policy(max_sessions=0), preserve="current")
    finally:
        holder.communicate("", timeout=30)
    assert report.deleted == ["real"]
    assert (outside / "precious.txt").read_text() == "keep me" and (root / "link").is_symlink()
    assert {"live", "current", "odd", "other-id", "reopened", "link"} <= names(tmp_path)
    assert (root / "odd" / "mine.txt").exists()
    left = read_index(tmp_path) or {}
    assert "reopened" not in left  # no longer closed: indexed again when it closes
    assert {"live", "current", "odd", "other-id", "link"} <= set(left)


def test_removals_per_automatic_pass_are_capped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sids = [f"s{i}" for i in range(6)]
    for i, sid in enumerate(sids):
        make(tmp_path, sid, age_days=10 - i)
    _index(tmp_path, *sids)
    monkeypatch.setattr(retention_mod, "AUTO_MAX_REMOVALS", 2)
    assert apply_retention_indexed(tmp_path, policy(max_sessions=1)).deleted == ["s0", "s1"]
    assert apply_retention_indexed(tmp_path, policy(max_sessions=1)).deleted == ["s2", "s3"]
    assert apply_retention_indexed(tmp_path, policy(max_sessions=1)).deleted == ["s4"]
    assert names(tmp_path) == {".locks", "s5"}


def test_missing_index_full_pass_when_small_else_left_to_gc(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i, sid in enumerate(["a", "b", "c"]):
        make(tmp_path, sid, age_days=10 - i)
    assert not index_path(tmp_path).exists()
    monkeypatch.setattr(retention_mod, "AUTO_REBUILD_MAX", 2)
    report = apply_retention_indexed(tmp_path, policy(max_sessions=1))
    assert report.deleted == [] and report.skipped[0][1].startswith("missing")
    monkeypatch.setattr(retention_mod, "AUTO_REBUILD_MAX", 1000)
    report = apply_retention_indexed(tmp_path, policy(max_sessions=1))
    assert sorted(report.deleted) == ["a", "b"]
    assert sorted(read_index(tmp_path) or {}) == ["c"]  # the full pass wrote the index


def test_sessions_gc_rebuilds_a_corrupt_index(tmp_path: Path) -> None:
    make(tmp_path, "a", age_days=3)
    make(tmp_path, "b", age_days=2)
    make(tmp_path, "crashed", age_days=1, completed=False)
    index_path(tmp_path).write_bytes(b"\x00\x01garbage\nno-time-here\n2026 ../evil\n")
    proc = vtcode(["sessions", "gc"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert sorted(read_index(tmp_path) or {}) == ["a", "b"]  # closed ones only
