"""The canonical session store: layout, writer, gate, recovery, reader, lifecycle."""

from __future__ import annotations

import dataclasses
import os
import stat
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from syrupy.assertion import SnapshotAssertion

from vtcode.config.model import Durability, StoreConfig
from vtcode.errors import (
    CorruptLogError,
    ExitCode,
    ExportError,
    InvalidIdError,
    LockBusyError,
    NotFoundError,
    PersistenceError,
    UsageError,
)
from vtcode.events.types import (
    AgentMessageItem,
    ItemCompletedEvent,
    ThreadCompletedEvent,
    ThreadCompletionSubtype,
    ThreadEvent,
    ThreadItem,
    ThreadStartedEvent,
    TurnCompletedEvent,
    TurnFailedEvent,
    TurnStartedEvent,
    Usage,
)
from vtcode.schemas import fast_validator
from vtcode.store import (
    DispatchGate,
    SessionWriter,
    latest_session_id,
    list_sessions,
    read_session_events,
    sessions_root,
)
from vtcode.store.layout import lock_path

CFG = StoreConfig(lock_timeout_secs=0.2)


def message(i: int, text: str = "hello") -> ItemCompletedEvent:
    return ItemCompletedEvent(item=ThreadItem(id=f"item_{i}", details=AgentMessageItem(text=text)))


def completed(sid: str, turns: int) -> ThreadCompletedEvent:
    return ThreadCompletedEvent(
        thread_id=sid,
        session_id=sid,
        subtype=ThreadCompletionSubtype.SUCCESS,
        outcome_code="success",
        usage=Usage(input_tokens=10, output_tokens=2),
        num_turns=turns,
    )


def script(sid: str, turns: int = 2, per_turn: int = 2) -> list[ThreadEvent]:
    out: list[ThreadEvent] = [ThreadStartedEvent(thread_id=sid)]
    n = 0
    for _ in range(turns):
        out.append(TurnStartedEvent())
        for _ in range(per_turn):
            out.append(message(n))
            n += 1
        out.append(TurnCompletedEvent(usage=Usage(input_tokens=5, output_tokens=1)))
    out.append(completed(sid, turns))
    return out


def run_session(ws: Path, sid: str, events: list[ThreadEvent], cfg: StoreConfig = CFG) -> Path:
    gate = DispatchGate(SessionWriter.create(ws, sid, cfg))
    for e in events:
        gate.emit(e)
    gate.close()
    return sessions_root(ws) / sid


def log_lines(sdir: Path) -> list[dict[str, object]]:
    return [orjson.loads(x) for x in (sdir / "events.jsonl").read_bytes().splitlines()]


def manifest(sdir: Path) -> dict[str, object]:
    data: dict[str, object] = orjson.loads((sdir / "manifest.json").read_bytes())
    return data


def assert_schema_valid(sdir: Path) -> None:
    validator = fast_validator("versioned-thread-event")
    for obj in log_lines(sdir):
        validator.validate(obj)


# ------------------------------------------------------------------------------------------
# layout and ids


def test_layout_modes_and_lines(tmp_path: Path) -> None:
    sdir = run_session(tmp_path, "s1", script("s1"))
    assert sdir == tmp_path / ".vtcode" / "sessions" / "s1"
    for d in (sdir, sdir / "index", sdir / "derived", sessions_root(tmp_path) / ".locks"):
        assert stat.S_IMODE(os.lstat(d).st_mode) == 0o700, d
    for f in (sdir / "events.jsonl", sdir / "manifest.json", sdir / "index" / "turns.json"):
        assert stat.S_IMODE(os.lstat(f).st_mode) == 0o600, f
    assert stat.S_IMODE(os.lstat(lock_path(tmp_path, "s1")).st_mode) == 0o600
    lines = log_lines(sdir)
    assert [x["seq"] for x in lines] == list(range(1, 11))
    assert all(x["schema_version"] == "0.11.0" for x in lines)
    assert_schema_valid(sdir)
    assert not (Path.home() / ".vtcode" / "sessions" / "s1").exists()


@pytest.mark.parametrize(
    "bad", ["../x", "a/b", "x\x00y", "-rf", ".hidden", "a" * 129, "", "a..b", "sp ace"]
)
def test_invalid_session_ids_create_nothing(tmp_path: Path, bad: str) -> None:
    with pytest.raises(InvalidIdError) as ei:
        SessionWriter.create(tmp_path, bad, CFG)
    assert ei.value.exit_code == ExitCode.USAGE
    assert not (tmp_path / ".vtcode").exists()


# ------------------------------------------------------------------------------------------
# manifest, index and lifecycle


def test_manifest_and_index_follow_the_log(tmp_path: Path) -> None:
    sdir = run_session(tmp_path, "s1", script("s1", turns=3, per_turn=1))
    m = manifest(sdir)
    data = (sdir / "events.jsonl").read_bytes()
    assert m["status"] == "completed"
    assert m["turn_count"] == 3
    assert m["event_count"] == 11
    assert m["last_seq"] == 11
    assert m["log_bytes"] == len(data)
    idx = orjson.loads((sdir / "index" / "turns.json").read_bytes())["entries"]
    assert [e["turn_number"] for e in idx] == [1, 2, 3]
    for e in idx:
        chunk = data[e["start_offset"] : e["end_offset"]].splitlines()
        assert len(chunk) == e["event_count"] == 3
        assert orjson.loads(chunk[0])["event"]["type"] == "turn.started"
        assert orjson.loads(chunk[-1])["event"]["type"] == "turn.completed"


def test_status_active_until_thread_completed_then_abandoned(tmp_path: Path) -> None:
    w = SessionWriter.create(tmp_path, "s1", CFG)
    w.submit(ThreadStartedEvent(thread_id="s1"))
    w.submit(TurnStartedEvent())
    w.submit(TurnCompletedEvent(usage=Usage()))
    w.flush()
    [row] = list_sessions(tmp_path)
    assert (row.status, row.live, row.turns) == ("active", True, 1)
    w.close()  # closed without thread.completed: upstream would keep it "active" forever
    [row] = list_sessions(tmp_path)
    assert (row.status, row.live) == ("abandoned", False)
    assert manifest(sessions_root(tmp_path) / "s1")["status"] == "active"
    w = SessionWriter.open_existing(tmp_path, "s1", CFG)
    w.submit(completed("s1", 1))
    w.close()
    [row] = list_sessions(tmp_path)
    assert row.status == "completed"
    # a resumed completed session flips back to active at turn.started
    w = SessionWriter.open_existing(tmp_path, "s1", CFG)
    w.submit(TurnStartedEvent())
    w.flush()
    assert list_sessions(tmp_path)[0].status == "active"
    w.close()
    assert manifest(sessions_root(tmp_path) / "s1")["status"] == "active"


def test_resume_continues_seq(tmp_path: Path) -> None:
    sdir = run_session(tmp_path, "s1", script("s1", turns=1))
    w = SessionWriter.open_existing(tmp_path, "s1", CFG)
    assert w.recovery is not None and w.recovery.reason is None
    assert w.submit(TurnStartedEvent()) == 7
    w.close()
    assert [x["seq"] for x in log_lines(sdir)] == list(range(1, 8))
    envs = list(read_session_events(tmp_path, "s1"))
    assert [e.seq for e in envs] == list(range(1, 8))
    assert isinstance(envs[0].event, ThreadStartedEvent)
    assert all(e.ts for e in envs)


def test_latest_session_id(tmp_path: Path) -> None:
    assert latest_session_id(tmp_path) is None
    run_session(tmp_path, "a", script("a"))
    run_session(tmp_path, "b", script("b"))
    assert latest_session_id(tmp_path) == "b"
    w = SessionWriter.open_existing(tmp_path, "a", CFG)
    w.submit(TurnStartedEvent())
    w.close()
    assert latest_session_id(tmp_path) == "a"


# ------------------------------------------------------------------------------------------
# locking


def test_second_writer_in_another_process_gets_exit_75(tmp_path: Path) -> None:
    w = SessionWriter.create(tmp_path, "s1", CFG)
    code = (
        "import sys; from pathlib import Path; from vtcode.store import SessionWriter;"
        "from vtcode.config.model import StoreConfig; from vtcode.errors import VtcodeError\n"
        "try:\n"
        f"    SessionWriter.open_existing(Path({str(tmp_path)!r}), 's1', "
        "StoreConfig(lock_timeout_secs=0.1))\n"
        "except VtcodeError as e:\n"
        "    print(e); sys.exit(int(e.exit_code))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    w.close()
    assert p.returncode == 75, p.stderr
    assert "in use by another process" in p.stdout


def test_second_writer_in_same_process_is_refused(tmp_path: Path) -> None:
    w = SessionWriter.create(tmp_path, "s1", CFG)
    with pytest.raises(LockBusyError):
        SessionWriter.open_existing(tmp_path, "s1", CFG)
    with pytest.raises(LockBusyError):
        SessionWriter.create(tmp_path, "s1", CFG)
    w.close()


def test_create_existing_and_open_missing(tmp_path: Path) -> None:
    run_session(tmp_path, "s1", script("s1"))
    with pytest.raises(UsageError, match="already exists"):
        SessionWriter.create(tmp_path, "s1", CFG)
    with pytest.raises(NotFoundError):
        SessionWriter.open_existing(tmp_path, "nope", CFG)


def test_symlinked_session_is_not_followed(tmp_path: Path) -> None:
    run_session(tmp_path, "real", script("real"))
    os.symlink(sessions_root(tmp_path) / "real", sessions_root(tmp_path) / "link")
    with pytest.raises(NotFoundError, match="symlink"):
        SessionWriter.open_existing(tmp_path, "link", CFG)
    with pytest.raises(NotFoundError):
        list(read_session_events(tmp_path, "link"))
    assert [r.session_id for r in list_sessions(tmp_path)] == ["real"]


# ------------------------------------------------------------------------------------------
# fail closed


def test_oversized_event_fails_closed(tmp_path: Path) -> None:
    cfg = dataclasses.replace(CFG, max_event_bytes=2048)
    w = SessionWriter.create(tmp_path, "s1", cfg)
    gate = DispatchGate(w)
    gate.emit(ThreadStartedEvent(thread_id="s1"))
    gate.emit(message(0, "small"))
    with pytest.raises(PersistenceError, match="max_event_bytes"):
        gate.emit(message(1, "x" * 5000))
    with pytest.raises(PersistenceError):
        gate.emit(message(2))
    with pytest.raises(PersistenceError) as ei:
        gate.close()
    assert ei.value.exit_code == ExitCode.FAILURE
    lines = log_lines(sessions_root(tmp_path) / "s1")
    assert [x["seq"] for x in lines] == [1, 2, 3, 4]  # what was accepted before, the closing pair
    # ... and the gate closed the run truthfully (write-ahead dispatch, issue 11)
    end = lines[-1]["event"]
    assert isinstance(end, dict)
    assert end["type"] == "thread.completed" and end["subtype"] == "error_during_execution"
    assert end["stop_reason"] == "error"  # a code, as the runner writes it; the why comes before
    why = lines[-2]["event"]
    assert isinstance(why, dict) and why["type"] == "error" and "max_event_bytes" in why["message"]


def test_saturation_fails_closed_and_keeps_accepted(tmp_path: Path) -> None:
    cfg = dataclasses.replace(CFG, queue_max_events=4, durability=Durability.EVENT)
    w = SessionWriter.create(tmp_path, "s1", cfg)
    accepted: list[int] = []
    with pytest.raises(PersistenceError, match="queue is full"):
        for i in range(100_000):
            accepted.append(w.submit(message(i)))
    with pytest.raises(PersistenceError):
        w.close()
    lines = log_lines(sessions_root(tmp_path) / "s1")
    assert [x["seq"] for x in lines] == accepted
    assert len(accepted) < 100_000


def test_encoding_error_fails_closed(tmp_path: Path) -> None:
    w = SessionWriter.create(tmp_path, "s1", CFG)
    w.submit(ThreadStartedEvent(thread_id="s1"))
    with pytest.raises(PersistenceError, match="cannot encode"):
        w.submit(TurnCompletedEvent(usage=Usage(input_tokens=2**70)))
    w.abort()
    assert [x["seq"] for x in log_lines(sessions_root(tmp_path) / "s1")] == [1]


class _Broken:
    name = "events export"

    def __init__(self, fail_at: int) -> None:
        self.fail_at = fail_at
        self.seen: list[str] = []
        self.finished = False

    def handle(self, event: ThreadEvent) -> None:
        if len(self.seen) == self.fail_at:
            raise OSError(28, "No space left on device")
        self.seen.append(type(event).__name__)

    def finish(self) -> None:
        self.finished = True


def test_exporter_failure_keeps_canonical_and_fails_the_run(tmp_path: Path) -> None:
    good, bad = _Broken(10**9), _Broken(2)
    gate = DispatchGate(SessionWriter.create(tmp_path, "s1", CFG), [bad, good])
    events = script("s1")
    for e in events:
        gate.emit(e)
    with pytest.raises(ExportError, match=r"events export: .*No space left"):
        gate.close()
    assert len(log_lines(sessions_root(tmp_path) / "s1")) == len(events)
    assert len(good.seen) == len(events) and good.finished
    assert len(bad.seen) == 2 and not bad.finished
    assert manifest(sessions_root(tmp_path) / "s1")["status"] == "completed"


def test_gate_feeds_exporters_even_after_canonical_failure(tmp_path: Path) -> None:
    cfg = dataclasses.replace(CFG, max_event_bytes=2048)
    sink = _Broken(10**9)
    gate = DispatchGate(SessionWriter.create(tmp_path, "s1", cfg), [sink])
    gate.emit(ThreadStartedEvent(thread_id="s1"))
    with pytest.raises(PersistenceError):
        gate.emit(message(1, "x" * 5000))
    with pytest.raises(PersistenceError):
        gate.emit(completed("s1", 0))
    assert sink.seen[-1] == "ThreadCompletedEvent"
    with pytest.raises(PersistenceError):
        gate.close()


# ------------------------------------------------------------------------------------------
# recovery


def _bytes(sdir: Path) -> bytes:
    return (sdir / "events.jsonl").read_bytes()


def test_torn_tail_is_quarantined_and_truncated(tmp_path: Path) -> None:
    sdir = run_session(tmp_path, "s1", script("s1", turns=1))
    good = _bytes(sdir)
    with open(sdir / "events.jsonl", "ab") as f:
        f.write(b'{"schema_version":"0.11.0","event":{"type":"turn.st')
    w = SessionWriter.open_existing(tmp_path, "s1", CFG)
    assert w.recovery is not None and w.recovery.torn_bytes > 0
    q = w.recovery.quarantine
    assert q is not None and q.parent == sdir and q.name.startswith("events.jsonl.torn-")
    assert q.read_bytes().startswith(b'{"schema_version"')
    assert stat.S_IMODE(os.lstat(q).st_mode) == 0o600
    assert _bytes(sdir) == good
    assert w.submit(TurnStartedEvent()) == 7
    w.close()
    assert [x["seq"] for x in log_lines(sdir)] == list(range(1, 8))


def test_trailing_invalid_complete_line_is_torn(tmp_path: Path) -> None:
    sdir = run_session(tmp_path, "s1", script("s1", turns=1))
    good = _bytes(sdir)
    with open(sdir / "events.jsonl", "ab") as f:
        f.write(b"\x00" * 300 + b"\n" + b"\x00" * 100)
    w = SessionWriter.open_existing(tmp_path, "s1", CFG)
    w.close()
    assert _bytes(sdir) == good


def test_mid_file_corruption_refuses_and_changes_nothing(tmp_path: Path) -> None:
    sdir = run_session(tmp_path, "s1", script("s1", turns=2))
    lines = _bytes(sdir).splitlines(keepends=True)
    lines[3] = b'{"schema_version":"0.11.0","event":{"type"\n'
    corrupt = b"".join(lines)
    (sdir / "events.jsonl").write_bytes(corrupt)
    (sdir / "manifest.json").unlink()
    before = sorted(os.listdir(sdir))
    with pytest.raises(CorruptLogError) as ei:
        SessionWriter.open_existing(tmp_path, "s1", CFG)
    assert ei.value.location == f"{sdir / 'events.jsonl'}:4:1"
    assert _bytes(sdir) == corrupt
    assert sorted(os.listdir(sdir)) == before
    with pytest.raises(CorruptLogError, match="followed by a valid line 5"):
        list(read_session_events(tmp_path, "s1"))
    # the lock was released: a later open gets the same clear refusal, not exit 75
    with pytest.raises(CorruptLogError):
        SessionWriter.open_existing(tmp_path, "s1", CFG)


def test_seq_gap_is_corruption(tmp_path: Path) -> None:
    sdir = run_session(tmp_path, "s1", script("s1", turns=2))
    lines = _bytes(sdir).splitlines(keepends=True)
    del lines[2]
    (sdir / "events.jsonl").write_bytes(b"".join(lines))
    with pytest.raises(CorruptLogError, match="seq 4 where 3 was expected"):
        SessionWriter.open_existing(tmp_path, "s1", CFG)


@pytest.mark.parametrize("damage", ["delete", "garbage", "stale"])
def test_caches_rebuilt_from_log(tmp_path: Path, damage: str) -> None:
    sdir = run_session(tmp_path, "s1", script("s1", turns=2))
    want_m, want_i = manifest(sdir), (sdir / "index" / "turns.json").read_bytes()
    if damage == "delete":
        (sdir / "manifest.json").unlink()
        (sdir / "index" / "turns.json").unlink()
    elif damage == "garbage":
        (sdir / "manifest.json").write_bytes(b"{not json")
        (sdir / "index" / "turns.json").write_bytes(b"[]")
    else:
        stale = dict(want_m, event_count=3, last_seq=3, log_bytes=100, status="active")
        (sdir / "manifest.json").write_bytes(orjson.dumps(stale))
    w = SessionWriter.open_existing(tmp_path, "s1", CFG)
    assert w.recovery is not None and w.recovery.rebuilt
    w.close()
    got = manifest(sdir)
    keep = ("created_at",) if damage == "stale" else ()
    for k in want_m:
        if k not in keep and k != "created_at":
            assert got[k] == want_m[k], k
    assert (sdir / "index" / "turns.json").read_bytes() == want_i


def test_upstream_log_without_seq_is_accepted(tmp_path: Path) -> None:
    sdir = sessions_root(tmp_path) / "up"
    sdir.mkdir(parents=True)
    (sdir / "events.jsonl").write_bytes(
        b'{"schema_version":"0.11.0","event":{"type":"thread.started","thread_id":"up"}}\n'
        b'{"schema_version":"0.11.0","event":{"type":"turn.started"}}\n'
    )
    assert [e.seq for e in read_session_events(tmp_path, "up")] == [1, 2]
    w = SessionWriter.open_existing(tmp_path, "up", CFG)
    assert w.submit(TurnCompletedEvent(usage=Usage())) == 3
    w.close()
    assert manifest(sdir)["turn_count"] == 1


# ------------------------------------------------------------------------------------------
# event cap


def test_event_cap_evicts_oldest_whole_turns(tmp_path: Path) -> None:
    cfg = dataclasses.replace(CFG, max_events=10)
    sdir = run_session(tmp_path, "s1", script("s1", turns=5, per_turn=2), cfg)
    lines = log_lines(sdir)
    seqs = [int(x["seq"]) for x in lines]  # type: ignore[call-overload]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # gapless within what is retained
    assert len(lines) <= 10
    assert lines[0]["event"] == {"type": "turn.started"}
    m = manifest(sdir)
    assert m["event_count"] == len(lines) and m["first_seq"] == seqs[0]
    assert m["log_bytes"] == len(_bytes(sdir))
    data = _bytes(sdir)
    idx = orjson.loads((sdir / "index" / "turns.json").read_bytes())["entries"]
    assert idx[0]["start_offset"] == 0 and idx[0]["turn_number"] == 1
    for e in idx:
        first = orjson.loads(data[e["start_offset"] :].split(b"\n", 1)[0])
        assert first["event"]["type"] == "turn.started" and first["seq"] == e["start_seq"]
    # the evicted log reopens cleanly via the fast path and keeps counting
    w = SessionWriter.open_existing(tmp_path, "s1", cfg)
    assert w.recovery is not None and not w.recovery.rebuilt
    assert w.submit(TurnStartedEvent()) == seqs[-1] + 1
    w.close()
    assert_schema_valid(sdir)


# ------------------------------------------------------------------------------------------
# snapshots


def _normalise(doc: object) -> object:
    """Replace wall-clock times (created_at, updated_at, ts) with a placeholder."""
    if isinstance(doc, dict):
        return {
            k: "<time>" if k in ("created_at", "updated_at", "ts") else _normalise(v)
            for k, v in doc.items()
        }
    if isinstance(doc, list):
        return [_normalise(v) for v in doc]
    return doc


def test_lifecycle_snapshot(tmp_path: Path, snapshot_json: SnapshotAssertion) -> None:
    """Manifest and index after a scripted sequence: start, two turns, a failed one, resume."""
    sid = "snap"
    w = SessionWriter.create(tmp_path, sid, CFG)
    for e in script(sid, turns=2, per_turn=1)[:-1]:
        w.submit(e)
    w.submit(TurnStartedEvent())
    w.submit(TurnFailedEvent(message="turn aborted"))
    w.close()
    sdir = sessions_root(tmp_path) / sid
    first = {
        "manifest": manifest(sdir),
        "index": orjson.loads((sdir / "index/turns.json").read_bytes()),
    }
    w = SessionWriter.open_existing(tmp_path, sid, CFG)
    w.submit(TurnStartedEvent())
    w.submit(message(9))
    w.submit(TurnCompletedEvent(usage=Usage(input_tokens=3)))
    w.submit(completed(sid, 4))
    w.close()
    second = {
        "manifest": manifest(sdir),
        "index": orjson.loads((sdir / "index/turns.json").read_bytes()),
    }
    assert_schema_valid(sdir)
    for name, doc in (("manifest", second["manifest"]), ("turn-index", second["index"])):
        fast_validator("session-manifest" if name == "manifest" else name).validate(doc)
    assert _normalise({"after_first_run": first, "after_resume": second}) == snapshot_json
