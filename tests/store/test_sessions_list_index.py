"""`sessions list` reads the closed-session index, and prints exactly what a full scan prints.

A completed session is listed from its index card (store/list_card.py) while the card matches
the manifest's stat; a missing, stale or damaged card, or a session that closed without its
index line (a crash between closing and the append), is read from its folder instead, and its
card is then appended. Every case here compares the CLI's text and --json output with the full
scan (`list_sessions(use_index=False)`, what `sessions list` printed before the index).
Speed: bench/sessions_list.py.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.exec_support import SCRIPTS, end_run_and_its_job, spawn_vtcode, vtcode, wait_for_path
from vtcode.config.model import RetentionConfig, StoreConfig
from vtcode.store import listing
from vtcode.store.closed_index import index_lock, index_path, read_entries, record_closed
from vtcode.store.layout import sessions_root
from vtcode.store.list_card import parse_card
from vtcode.store.listing import list_sessions
from vtcode.store.manifest_io import manifest_stat
from vtcode.store.repair import repair_session
from vtcode.store.retention import apply_retention, apply_retention_indexed

RUNS = [
    ("ok", "scenario-success"),
    ("fatal", "scenario-provider-fatal"),
    ("looping", "scenario-loop-detected"),
]


def _run(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = vtcode(list(args), ws)
    assert proc.returncode == 0, proc.stderr
    return proc


def _exec(ws: Path, sid: str, script: str = "scenario-success") -> None:
    """A run that closes its session (provider-fatal and loop-detected runs exit 1)."""
    args = ["exec", "-q", "--session-id", sid, "--script", str(SCRIPTS / f"{script}.toml"), "go"]
    proc = vtcode(args, ws)
    assert proc.returncode in (0, 1), proc.stderr


def _full_scan_json(ws: Path) -> dict[str, Any]:
    """What `sessions list --json` printed before the index: every session read."""
    rows = list_sessions(ws, use_index=False)
    return json.loads(json.dumps({"sessions": [r.to_json() for r in rows]}))


def _listed(ws: Path) -> tuple[str, dict[str, Any]]:
    text = _run(ws, "sessions", "list").stdout
    doc = json.loads(_run(ws, "sessions", "list", "--json").stdout)
    return text, doc


def _carded(ws: Path) -> set[str]:
    """Sessions whose index card matches their manifest now (listed without being read)."""
    out = set()
    for sid, (_, text) in (read_entries(ws) or {}).items():
        card = parse_card(text) if text else None
        mpath = sessions_root(ws) / sid / "manifest.json"
        if card is None or not mpath.exists():
            continue
        if manifest_stat(mpath.stat(follow_symlinks=False)) == card.manifest_stat:
            out.add(sid)
    return out


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("listed")
    for sid, script in RUNS:
        _exec(ws, sid, script)
    _run(ws, "exec", "-q", "resume", "ok", "again")  # two runs in one session
    broken = sessions_root(ws) / "broken"
    broken.mkdir()
    (broken / "manifest.json").write_text("{not json")  # unreadable: never indexed
    return ws


@pytest.fixture
def ws(template: Path, tmp_path: Path) -> Path:
    """A copy of the template: its manifests are new files, so their cards are made again."""
    ws = tmp_path / "ws"
    shutil.copytree(template, ws, symlinks=True)
    index_path(ws).unlink()
    list_sessions(ws)
    assert _carded(ws) == {"ok", "fatal", "looping"}
    return ws


def test_closing_runs_index_their_cards(template: Path) -> None:
    assert _carded(template) == {"ok", "fatal", "looping"}  # each close appended its card


def test_the_listing_equals_the_full_scan(ws: Path) -> None:
    text, doc = _listed(ws)
    assert doc == _full_scan_json(ws)
    assert [r["session_id"] for r in doc["sessions"]][-1] == "broken"
    assert {r["session_id"]: r["runs"] for r in doc["sessions"]}["ok"] == 2
    # The text table is the one the full scan renders (the index off: no index file).
    index_path(ws).unlink()
    assert _listed(ws) == (text, doc)


def test_indexed_sessions_are_listed_without_reading_them(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    full = [r.to_json() for r in list_sessions(ws, use_index=False)]
    read: list[str] = []
    real = listing.read_manifest

    def counting(sdir: Path, session_id: str | None = None) -> Any:
        read.append(sdir.name)
        return real(sdir, session_id)

    monkeypatch.setattr(listing, "read_manifest", counting)
    assert [r.to_json() for r in list_sessions(ws)] == full
    assert read == ["broken"]  # the only session without a card
    row = next(r for r in list_sessions(ws) if r.session_id == "ok")
    assert row.manifest is not None and len(row.manifest.runs or ()) == 2  # read on first use


def test_a_missing_index_or_missing_lines_are_read_and_then_indexed(ws: Path) -> None:
    expected = _listed(ws)
    index_path(ws).unlink()
    assert _listed(ws) == expected
    assert _carded(ws) == {"ok", "fatal", "looping"}  # the listing appended their cards
    # An index written by an older vtcode: lines without a card.
    lines = [" ".join(x.split(" ")[:2]) for x in index_path(ws).read_text().splitlines()]
    index_path(ws).write_text("".join(f"{x}\n" for x in lines))
    assert _carded(ws) == set()
    assert _listed(ws) == expected
    assert _carded(ws) == {"ok", "fatal", "looping"}


@pytest.mark.parametrize(
    "card",
    [
        "[1,2,3",  # torn JSON
        '{"v":1}',  # another shape
        "[2,1,1,1,1]",  # another version
        '[1,1,1,1,1,"a","b",-1,8,1,1,8,"success","success",1]',  # negative count
        '[1,1,1,1,1,"a","b",1,8,0,1,8,"success","success",1]',  # runs 0 with a last run
        '[1,1,1,1,1,"a","b",true,8,1,1,8,"success","success",1]',  # bool for a count
        '[1,1,1,1,1,"\xe9","b",1,8,1,1,8,"success","success",1]',  # not ASCII
    ],
)
def test_a_damaged_card_is_read_around(ws: Path, card: str) -> None:
    expected = _listed(ws)
    with index_path(ws).open("ab") as f:
        f.write(f"2099-01-01T00:00:00Z fatal {card}\n".encode("latin-1"))
        f.write(b"2099-01-01T00:00:00Z ok [1,2")  # a torn final fragment
    assert "fatal" not in _carded(ws)
    assert _listed(ws) == expected
    assert "fatal" in _carded(ws)  # appended after the torn fragment, not glued to it


def test_a_card_with_the_right_shape_but_another_manifest_is_not_trusted(ws: Path) -> None:
    """A card made from another version of the manifest (stat differs) is never shown."""
    expected = _listed(ws)
    entries = read_entries(ws)
    assert entries is not None
    ts, text = entries["fatal"]
    forged = json.loads(text)
    forged[8] = 999_999  # events
    forged[2] += 1  # the manifest's size as it is not
    with index_path(ws).open("a") as f:
        f.write(f"{ts} fatal {json.dumps(forged, separators=(',', ':'))}\n")
    assert _listed(ws) == expected


def test_a_session_that_closed_after_its_card_was_written_is_read(ws: Path) -> None:
    """A crash between a run closing its session and appending to the index: the index still
    holds the card of the previous close. The listing sees the manifest changed and reads it."""
    before = index_path(ws).read_bytes()
    _run(ws, "exec", "-q", "resume", "ok", "once more")
    index_path(ws).write_bytes(before)  # the append after the close never happened
    assert "ok" not in _carded(ws)
    doc = _listed(ws)[1]
    assert doc == _full_scan_json(ws)
    row = next(r for r in doc["sessions"] if r["session_id"] == "ok")
    assert row["runs"] == 3 and doc["sessions"][0]["session_id"] == "ok"  # newest first
    assert "ok" in _carded(ws)  # re-indexed by the listing


def test_a_session_closed_after_the_index_was_written_is_listed(ws: Path) -> None:
    """A session that closes while the index cannot be appended (its lock is a folder here)
    is not indexed, yet listed; the listing cannot append either, and says nothing about it."""
    lock = index_path(ws).with_name("closed-sessions.lock")
    lock.unlink()
    lock.mkdir()
    _exec(ws, "late")
    text, doc = _listed(ws)
    assert doc == _full_scan_json(ws)
    assert doc["sessions"][0]["session_id"] == "late"
    assert "late" not in (read_entries(ws) or {})
    lock.rmdir()
    assert _listed(ws) == (text, doc)
    assert "late" in _carded(ws)


# Holds session 'ok' as `exec resume` does before its first event: the writer has reopened the
# session (its lock taken, nothing written, the manifest still says completed). "bare" takes the
# lock alone (no vtcode path does), to show a card made meanwhile is not trusted either.
HOLDER = """
import sys
from pathlib import Path
from vtcode.config.model import StoreConfig
ws, how = Path(sys.argv[1]), sys.argv[2]
if how == "writer":
    from vtcode.store.writer import SessionWriter
    writer = SessionWriter.open_existing(ws, "ok", StoreConfig())
else:
    from vtcode.store.layout import lock_path
    from vtcode.store.locks import session_lock
    session_lock(lock_path(ws, "ok")).acquire(5)
print("held", flush=True)
sys.stdin.readline()
"""


def _hold(ws: Path, how: str) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(ws), how],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def _release(holder: subprocess.Popen[str]) -> None:
    assert holder.stdin is not None
    holder.stdin.close()
    assert holder.wait(timeout=30) == 0


def _ok_row(doc: dict[str, Any]) -> tuple[str, bool, int]:
    row = next(r for r in doc["sessions"] if r["session_id"] == "ok")
    return row["status"], row["live"], row["runs"]


def test_a_session_reopened_after_its_card_was_written_is_active(ws: Path) -> None:
    """A carded session is listed without probing its lock; reopening it (`exec resume`, before
    its first event has changed the manifest) moves the manifest's mtime, so the card no longer
    matches: the session is read, its lock probed, and it shows active, then completed again."""
    expected = _listed(ws)
    assert "ok" in _carded(ws)
    holder = _hold(ws, "writer")
    try:
        assert "ok" not in _carded(ws)
        doc = _listed(ws)[1]
        assert doc == _full_scan_json(ws)
        assert _ok_row(doc) == ("active", True, 2)
        assert "ok" not in _carded(ws)  # a session in use gets no card
    finally:
        _release(holder)
    assert _listed(ws) == expected
    assert "ok" in _carded(ws)  # listed completed again, and carded again


def test_a_session_resumed_by_a_real_run_is_active_while_it_runs(ws: Path) -> None:
    script = str(SCRIPTS / "loop-slow-step.toml")
    proc = spawn_vtcode(["exec", "-q", "resume", "ok", "--script", script, "long work"], ws)
    job = ws / "job.pid"
    try:
        wait_for_path(job, proc, "the resumed run's command")
        doc = _listed(ws)[1]
        assert doc == _full_scan_json(ws)
        assert _ok_row(doc) == ("active", True, 2)
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        end_run_and_its_job(proc, job)
    doc = _listed(ws)[1]
    assert doc == _full_scan_json(ws)
    assert _ok_row(doc)[:2] == ("abandoned", False)


def test_a_close_recorded_while_the_session_is_held_again_gets_no_card(ws: Path) -> None:
    """`record_closed` probes the lock after reading the manifest: a session resumed between
    a run's close and its index append is indexed without a card, so it is read (and probed)."""
    holder = _hold(ws, "bare")
    try:
        assert record_closed(ws, "ok")
        assert (read_entries(ws) or {})["ok"][1] == ""
        assert _ok_row(_listed(ws)[1]) == ("active", True, 2)
    finally:
        _release(holder)
    assert _ok_row(_listed(ws)[1]) == ("completed", False, 2)
    assert "ok" in _carded(ws)


def test_repair_and_retention_mark_the_sessions_they_take(ws: Path) -> None:
    """Every taker of a session lock moves the manifest's mtime (mark_in_use): after it, the
    card made before no longer matches. A dry run changes nothing."""
    expected = _listed(ws)
    report = repair_session(ws, "fatal", StoreConfig())
    assert not report.changed
    assert "fatal" not in _carded(ws)
    assert _listed(ws) == expected
    assert _carded(ws) == {"ok", "fatal", "looping"}
    policy = RetentionConfig(max_sessions=1, max_age_days=0)
    apply_retention(ws, policy, dry_run=True)
    assert _carded(ws) == {"ok", "fatal", "looping"}
    (sessions_root(ws) / "looping" / "mine.txt").write_text("not vtcode's")
    report = apply_retention(ws, policy)
    assert report.deleted == ["fatal"]
    assert ("looping", "unknown files: mine.txt") in report.skipped  # taken, marked, kept
    assert "looping" not in _carded(ws)
    assert _listed(ws)[1] == _full_scan_json(ws)
    assert _carded(ws) == {"ok", "looping"}


def test_gc_rebuilds_the_cards_and_a_busy_index_never_blocks_a_listing(ws: Path) -> None:
    index_path(ws).write_text("garbage\n")
    _run(ws, "sessions", "gc")
    assert _carded(ws) == {"ok", "fatal", "looping"}
    expected = _listed(ws)
    index_path(ws).unlink()
    lock = index_lock(ws)
    lock.acquire(5)  # held by this process: the listing's append is skipped, not waited on
    try:
        assert _listed(ws) == expected
    finally:
        lock.release()


def test_the_automatic_retention_pass_keeps_the_cards_of_what_it_keeps(ws: Path) -> None:
    report = apply_retention_indexed(ws, RetentionConfig(max_sessions=1, max_age_days=0))
    assert sorted(report.deleted) == ["fatal", "looping"]  # "ok" ran last
    assert _carded(ws) == {"ok"}  # the rewritten index kept its card
    assert _listed(ws)[1] == _full_scan_json(ws)
