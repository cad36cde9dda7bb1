"""Crash safety of the canonical log: SIGKILL loop, power-loss model, injected I/O errors."""

from __future__ import annotations

import dataclasses
import errno
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from test_store import CFG, message

from vtcode import fsutil
from vtcode.config.model import Durability
from vtcode.errors import CorruptLogError, PersistenceError
from vtcode.events.types import ThreadStartedEvent, TurnCompletedEvent, TurnStartedEvent, Usage
from vtcode.schemas import fast_validator
from vtcode.store import SessionWriter, read_session_events, sessions_root

REPO = Path(__file__).resolve().parents[2]

# The child appends turns to one session and prints each seq once `wait_durable` says the drain
# has fsynced it (the acknowledgement). With SPLIT=1 every write is cut in two with a short
# pause, so kills land mid-line and recovery has torn tails to repair.
CHILD = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from vtcode import fsutil
    from vtcode.config.model import Durability, StoreConfig
    from vtcode.events.types import (AgentMessageItem, ItemCompletedEvent, ThreadItem,
        ThreadStartedEvent, TurnCompletedEvent, TurnStartedEvent, Usage)
    from vtcode.store import SessionWriter, session_exists

    ws, sid, durability, split = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4] == "1"
    if split:
        real = fsutil.write_all
        def write_all(fd, data):
            half = len(data) // 2
            real(fd, data[:half]); time.sleep(0.0005); real(fd, data[half:])
        fsutil.write_all = write_all
    cfg = StoreConfig(durability=Durability(durability), lock_timeout_secs=10)
    if session_exists(ws, sid):
        w = SessionWriter.open_existing(ws, sid, cfg)
    else:
        w = SessionWriter.create(ws, sid, cfg)
        w.submit(ThreadStartedEvent(thread_id=sid))
    print("ready", w.last_seq, flush=True)
    n = 0
    while True:
        evs = [TurnStartedEvent()]
        evs += [ItemCompletedEvent(item=ThreadItem(id=f"item_{n}_{i}",
                details=AgentMessageItem(text="x" * (40 + 7 * i)))) for i in range(3)]
        evs.append(TurnCompletedEvent(usage=Usage(input_tokens=n)))
        for e in evs:
            seq = w.submit(e)
            if durability == "event":
                w.wait_durable(seq, 30)
                print(seq, flush=True)
        if durability != "event":
            w.flush()
            print(w.last_seq, flush=True)
        n += 1
    """
)


def spawn(ws: Path, sid: str, durability: str, split: bool) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(ws), sid, durability, "1" if split else "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )


def check_log(ws: Path, sid: str, acked: int) -> int:
    """Reopen (recovery), then assert the invariants; returns the last seq."""
    w = SessionWriter.open_existing(ws, sid, CFG)
    w.close()
    sdir = sessions_root(ws) / sid
    data = (sdir / "events.jsonl").read_bytes()
    assert data.endswith(b"\n")
    validator = fast_validator("versioned-thread-event")
    lines = [orjson.loads(x) for x in data.splitlines()]
    for obj in lines:
        validator.validate(obj)
    seqs = [x["seq"] for x in lines]
    assert seqs == list(range(1, len(seqs) + 1)), "gapless, no duplicates"
    assert len(seqs) >= acked, f"acknowledged seq {acked} lost (log ends at {len(seqs)})"
    m = orjson.loads((sdir / "manifest.json").read_bytes())
    assert (m["event_count"], m["last_seq"], m["log_bytes"]) == (len(seqs), len(seqs), len(data))
    idx = orjson.loads((sdir / "index" / "turns.json").read_bytes())["entries"]
    for e in idx:
        assert orjson.loads(data[e["start_offset"] :].split(b"\n", 1)[0])["seq"] == e["start_seq"]
    return len(seqs)


def kill_loop(ws: Path, kills: int, durability: str, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    sid = f"kill-{durability}"
    acked = 0
    torn = 0
    for i in range(kills):
        split = i % 2 == 1
        child = spawn(ws, sid, durability, split)
        assert child.stdout is not None
        ready = child.stdout.readline().split()
        assert ready and ready[0] == "ready", child.stderr.read() if child.stderr else ""
        for _ in range(rng.randint(0, 25)):
            line = child.stdout.readline()
            if not line:
                break
            acked = max(acked, int(line))
        # A random moment after the last ack (fault timing, not synchronisation: nothing waits
        # on it), so kills also land mid-write instead of only right after a print.
        time.sleep(rng.random() * 0.004)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        child.stdout.close()
        if child.stderr:
            child.stderr.close()
        sdir = sessions_root(ws) / sid
        before = {n for n in os.listdir(sdir) if n.startswith("events.jsonl.torn-")}
        check_log(ws, sid, acked)  # acks follow an fsync in every mode
        torn += len({n for n in os.listdir(sdir) if n.startswith("events.jsonl.torn-")} - before)
    return {"acked": acked, "torn": torn}


@pytest.mark.slow
def test_sigkill_loop_event_durability(tmp_path: Path) -> None:
    """40 kills with fsync per event: every acknowledged event survives, tails are repaired."""
    stats = kill_loop(tmp_path, 40, "event", seed=7)
    assert stats["acked"] > 0


@pytest.mark.slow
def test_sigkill_loop_turn_durability(tmp_path: Path) -> None:
    """12 more kills with the default durability: flushed events survive, the prefix is valid."""
    kill_loop(tmp_path, 12, "turn", seed=11)


# ------------------------------------------------------------------------------------------
# power loss: only the unsynced suffix may be lost (SQLite test6-style crash model)

SECTOR = 512


class PowerLoss(RuleBasedStateMachine):
    """A live writer; at any point, a crash image keeps the fsynced bytes and mangles the rest."""

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(os.environ.get("VTCODE_TEST_TMP", "/tmp")) / f"pl-{os.getpid()}"
        shutil.rmtree(self.root, ignore_errors=True)
        self.root.mkdir(parents=True)
        self.crashes = 0
        self.writer: SessionWriter | None = None
        self.outcomes: dict[str, int] = {"clean": 0, "repaired": 0, "corrupt": 0}

    @initialize(mode=st.sampled_from([Durability.EVENT, Durability.TURN]))
    def start(self, mode: Durability) -> None:
        cfg = dataclasses.replace(CFG, durability=mode)
        self.writer = SessionWriter.create(self.root / "live", "s", cfg)
        self.writer.submit(ThreadStartedEvent(thread_id="s"))
        self.n = 0

    @rule(k=st.integers(1, 6), close_turn=st.booleans())
    def append(self, k: int, close_turn: bool) -> None:
        assert self.writer is not None
        self.writer.submit(TurnStartedEvent())
        for _ in range(k):
            self.writer.submit(message(self.n, "y" * (self.n % 300)))
            self.n += 1
        if close_turn:
            self.writer.submit(TurnCompletedEvent(usage=Usage(output_tokens=k)))
        self.writer.wait_written()

    @rule()
    def sync(self) -> None:
        assert self.writer is not None
        self.writer.flush()

    @rule(data=st.data())
    def power_loss(self, data: st.DataObject) -> None:
        w = self.writer
        assert w is not None
        w.wait_written()
        live = w.path
        image = (live / "events.jsonl").read_bytes()
        synced = w.durable_size
        durable_seq = w.durable_seq
        assert image[:synced].endswith(b"\n") or synced == 0
        cut = data.draw(st.one_of(st.just(len(image)), st.integers(synced, len(image))))
        body = bytearray(image[:cut])
        mangled = False
        if cut > synced and data.draw(st.booleans()):
            first = synced // SECTOR
            sector = data.draw(st.integers(first, (cut - 1) // SECTOR))
            lo, hi = max(synced, sector * SECTOR), min(cut, (sector + 1) * SECTOR)
            fill = data.draw(st.sampled_from([b"\x00", b"\xff", b"garbage{"]))
            body[lo:hi] = (fill * SECTOR)[: hi - lo]
            mangled = True
        self.crashes += 1
        ws = self.root / f"crash-{self.crashes}"
        sdir = sessions_root(ws) / "s"
        (sdir / "index").mkdir(parents=True)
        for name in ("manifest.json", "index/turns.json"):  # each replaced atomically
            (sdir / name).write_bytes((live / name).read_bytes())
        (sdir / "events.jsonl").write_bytes(bytes(body))
        try:
            rw = SessionWriter.open_existing(ws, "s", CFG)
        except CorruptLogError as e:
            assert mangled, f"corruption reported without damage: {e}"
            bad_line = int(str(e.location).rsplit(":", 2)[1])
            offset = sum(len(x) + 1 for x in bytes(body).split(b"\n")[: bad_line - 1])
            assert offset >= synced, "corruption inside the synced prefix"
            assert bytes(body) == (sdir / "events.jsonl").read_bytes(), "refusal changed the log"
            self.outcomes["corrupt"] += 1
            shutil.rmtree(ws)
            return
        rec = rw.recovery
        rw.close()
        kept = (sdir / "events.jsonl").read_bytes()
        assert image.startswith(kept), "recovered log is not a prefix of what was written"
        assert len(kept) >= synced, "fsynced bytes lost"
        seqs = [e.seq for e in read_session_events(ws, "s")]
        assert seqs == list(range(1, len(seqs) + 1))
        assert (seqs[-1] if seqs else 0) >= durable_seq
        self.outcomes["repaired" if rec and rec.torn_bytes else "clean"] += 1
        shutil.rmtree(ws)

    @invariant()
    def healthy(self) -> None:
        if self.writer is not None:
            assert not self.writer.failed

    def teardown(self) -> None:
        if self.writer is not None:
            self.writer.close()
        shutil.rmtree(self.root, ignore_errors=True)


PowerLoss.TestCase.settings = settings(
    max_examples=40,
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
test_power_loss_model = PowerLoss.TestCase


# ------------------------------------------------------------------------------------------
# injected I/O errors (the kernel cannot be made to fail here without root)


def _is_events_fd(fd: int) -> bool:
    try:
        return os.readlink(f"/proc/self/fd/{fd}").endswith("/events.jsonl")
    except OSError:
        return False


class Faults:
    """Fail the Nth write / fsync on events.jsonl (once), through the fsutil and os seams."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, op: str, nth: int, err: int) -> None:
        self.count = 0
        self.fired = False
        real_write, real_fsync = fsutil.write_all, os.fsync

        def trip(fd: int) -> None:
            if _is_events_fd(fd):
                self.count += 1
                if self.count == nth:
                    self.fired = True
                    raise OSError(err, os.strerror(err))

        def write_all(fd: int, data: bytes) -> None:
            if op == "write":
                trip(fd)
            real_write(fd, data)

        def fsync(fd: int) -> None:
            if op == "fsync":
                trip(fd)
            real_fsync(fd)

        monkeypatch.setattr(fsutil, "write_all", write_all)
        monkeypatch.setattr(os, "fsync", fsync)


@pytest.mark.parametrize(
    ("op", "err"), [("write", errno.ENOSPC), ("write", errno.EIO), ("fsync", errno.EIO)]
)
def test_nth_io_error_fails_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, op: str, err: int
) -> None:
    cfg = dataclasses.replace(CFG, durability=Durability.EVENT)
    for nth in range(1, 14):
        ws = tmp_path / f"{op}-{nth}"
        with monkeypatch.context() as mp:
            faults = Faults(mp, op, nth, err)
            w = SessionWriter.create(ws, "s", cfg)
            accepted: list[int] = []
            acked = 0
            raised: PersistenceError | None = None
            try:
                for i in range(10):
                    accepted.append(w.submit(message(i)))
                    if w.wait_durable(accepted[-1], 10):
                        acked = accepted[-1]
                w.close()
            except PersistenceError as e:
                raised = e
                w.abort()
        if not faults.fired:
            assert raised is None
            continue
        assert raised is not None, f"{op} #{nth} failed silently"
        assert os.strerror(err) in str(raised) and "events.jsonl" in str(raised)
        lines = [
            orjson.loads(x)
            for x in (ws / ".vtcode/sessions/s/events.jsonl").read_bytes().splitlines()
        ]
        seqs = [x["seq"] for x in lines]
        assert seqs == list(range(1, len(seqs) + 1))
        assert len(seqs) >= acked, "an acknowledged event was lost"
        if op == "write":
            assert seqs == list(range(1, nth)), "the failed write left a partial or later line"
        # once the fault is gone the session reopens cleanly and continues the sequence
        w2 = SessionWriter.open_existing(ws, "s", cfg)
        assert w2.submit(message(99)) == len(seqs) + 1
        w2.close()


def test_manifest_write_error_fails_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    w = SessionWriter.create(tmp_path, "s", CFG)
    real = fsutil.atomic_write_bytes

    def broken(path: Path, data: bytes, **kw: Any) -> None:
        if path.name == "manifest.json":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(path, data, **kw)

    monkeypatch.setattr(fsutil, "atomic_write_bytes", broken)
    w.submit(TurnStartedEvent())
    w.submit(TurnCompletedEvent(usage=Usage()))
    with pytest.raises(PersistenceError, match="manifest"):
        w.close()
    monkeypatch.undo()
    assert [e.seq for e in read_session_events(tmp_path, "s")] == [1, 2]
    SessionWriter.open_existing(tmp_path, "s", CFG).close()  # rebuilds the stale manifest


RLIMIT_CHILD = textwrap.dedent(
    """
    import os, resource, signal, sys
    from pathlib import Path
    from vtcode.config.model import Durability, StoreConfig
    from vtcode.errors import PersistenceError
    from vtcode.events.types import AgentMessageItem, ItemCompletedEvent, ThreadItem
    from vtcode.store import SessionWriter

    ws = Path(sys.argv[1])
    w = SessionWriter.create(ws, "s", StoreConfig(durability=Durability.EVENT))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
    try:
        for i in range(20):
            seq = w.submit(ItemCompletedEvent(item=ThreadItem(id=f"item_{i}",
                details=AgentMessageItem(text="z" * 180))))
            if w.wait_durable(seq, 10):
                print("acked", seq, flush=True)
        w.close()
    except PersistenceError as e:
        print("error", e, flush=True)
        w.abort()
        sys.exit(int(e.exit_code))
    """
)


def test_short_write_under_rlimit_fsize(tmp_path: Path) -> None:
    """A real short write (RLIMIT_FSIZE): the partial line is truncated away, the run fails."""
    p = subprocess.run(
        [sys.executable, "-c", RLIMIT_CHILD, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert p.returncode == 1, p.stderr
    out = p.stdout.splitlines()
    acked = [int(x.split()[1]) for x in out if x.startswith("acked")]
    [error] = [x for x in out if x.startswith("error")]
    assert "File too large" in error and "events.jsonl" in error
    data = (tmp_path / ".vtcode/sessions/s/events.jsonl").read_bytes()
    assert len(data) <= 1000 and data.endswith(b"\n")
    seqs = [orjson.loads(x)["seq"] for x in data.splitlines()]
    assert seqs == list(range(1, len(seqs) + 1)) and seqs == acked and len(seqs) >= 2
    w = SessionWriter.open_existing(tmp_path, "s", CFG)
    assert w.recovery is not None and w.recovery.torn_bytes == 0
    w.close()
