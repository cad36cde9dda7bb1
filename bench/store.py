"""Canonical store throughput: events/s per durability level against raw limits, and gc speed.

Run: .venv/bin/python bench/store.py [--quick]

Every figure is measured in this process on this machine, next to its baseline:
- raw write:        pre-encoded canonical lines, one os.write each, no fsync
- raw encode+write: encode_wrapped_line + os.write per line (the same encoding work as ours)
- raw write+fsync:  os.write + fsync per line
- ours:             DispatchGate.emit -> SessionWriter (queue, drain thread, manifest and index
                    at turn boundaries), 10 events per turn, timed from the first emit until
                    close() returned (everything written; fsynced unless `os`)
- event (acked):    emit, then wait until that event is fsynced, one at a time: the figure to
                    compare with raw write+fsync
The per-event overhead of gate + drain is (ours[os] - raw encode+write) / N.
- write-ahead exporter: `--json` to a file through DispatchGate (exporters see an event once the
                    drain wrote it, from the dispatch thread) against the previous direct path
                    (the exporter called inline in emit, right after submit), same events, same
                    durability (`turn`), timed until close() returned and the export was flushed
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import orjson

from vtcode.cli.sinks import StdoutJsonSink
from vtcode.clock import rfc3339
from vtcode.config.model import Durability, RetentionConfig, StoreConfig
from vtcode.events.codec import encode_wrapped_line
from vtcode.events.types import (
    AgentMessageItem,
    ItemCompletedEvent,
    ThreadEvent,
    ThreadItem,
    TurnCompletedEvent,
    TurnStartedEvent,
    Usage,
)
from vtcode.store import DispatchGate, SessionWriter, apply_retention, sessions_root

PER_TURN = 10


def events(n: int) -> list[ThreadEvent]:
    out: list[ThreadEvent] = []
    i = 0
    while len(out) < n:
        out.append(TurnStartedEvent())
        for j in range(PER_TURN - 2):
            text = f"step {i}.{j}: reading the file and thinking about what to change next"
            out.append(
                ItemCompletedEvent(
                    item=ThreadItem(id=f"item_{i}_{j}", details=AgentMessageItem(text=text))
                )
            )
        out.append(TurnCompletedEvent(usage=Usage(input_tokens=1200, output_tokens=40)))
        i += 1
    return out[:n]


def raw_write(tmp: Path, lines: list[bytes], fsync: bool) -> float:
    path = tmp / f"raw-{fsync}.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    t = time.perf_counter()
    for line in lines:
        os.write(fd, line)
        if fsync:
            os.fsync(fd)
    dt = time.perf_counter() - t
    os.close(fd)
    path.unlink()
    return dt


def raw_encode_write(tmp: Path, evs: list[ThreadEvent]) -> float:
    path = tmp / "raw-enc.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    t = time.perf_counter()
    for seq, e in enumerate(evs, 1):
        os.write(fd, encode_wrapped_line(e, seq=seq, ts=rfc3339()))
    dt = time.perf_counter() - t
    os.close(fd)
    path.unlink()
    return dt


def ours(tmp: Path, evs: list[ThreadEvent], mode: Durability, tag: str) -> float:
    cfg = StoreConfig(durability=mode, queue_max_events=len(evs) + 10, queue_max_bytes=2**34)
    ws = tmp / f"ws-{tag}"
    gate = DispatchGate(SessionWriter.create(ws, "bench", cfg))
    t = time.perf_counter()
    for e in evs:
        gate.emit(e)
    gate.close()
    dt = time.perf_counter() - t
    shutil.rmtree(ws)
    return dt


class _DirectGate:
    """The gate before write-ahead dispatch: submit, then every exporter inline (the baseline)."""

    def __init__(self, w: SessionWriter, exporters: list[StdoutJsonSink]) -> None:
        self.w, self.exporters = w, exporters

    def emit(self, e: ThreadEvent) -> None:
        self.w.submit(e)
        for ex in self.exporters:
            ex.handle(e)

    def close(self) -> None:
        for ex in self.exporters:
            ex.finish()
        self.w.close()


def exporter_case(tmp: Path, evs: list[ThreadEvent], write_ahead: bool, tag: str) -> float:
    cfg = StoreConfig(
        durability=Durability.TURN, queue_max_events=len(evs) + 10, queue_max_bytes=2**34
    )
    ws = tmp / f"ws-exp-{tag}"
    with open(tmp / f"export-{tag}.jsonl", "wb") as out:
        sink = StdoutJsonSink(out)
        w = SessionWriter.create(ws, "bench", cfg)
        gate: DispatchGate | _DirectGate = (
            DispatchGate(w, [sink]) if write_ahead else _DirectGate(w, [sink])
        )
        t = time.perf_counter()
        for e in evs:
            gate.emit(e)
        gate.close()
        dt = time.perf_counter() - t
    assert (tmp / f"export-{tag}.jsonl").read_bytes().count(b"\n") == len(evs)
    shutil.rmtree(ws)
    (tmp / f"export-{tag}.jsonl").unlink()
    return dt


def acked_vs_raw(tmp: Path, evs: list[ThreadEvent], rounds: int = 10) -> tuple[float, float]:
    """(raw write+fsync seconds, ours acked seconds) over the same events, interleaved in
    rounds so both see the same disk load (fsync latency here swings 10x with other work)."""
    cfg = StoreConfig(durability=Durability.EVENT)
    ws = tmp / "ws-acked"
    w = SessionWriter.create(ws, "bench", cfg)
    gate = DispatchGate(w)
    lines = [encode_wrapped_line(e, seq=i, ts=rfc3339()) for i, e in enumerate(evs, 1)]
    raw_path = tmp / "raw-acked.jsonl"
    fd = os.open(raw_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    step = max(1, len(evs) // rounds)
    t_raw = t_ours = 0.0
    for start in range(0, len(evs), step):
        t = time.perf_counter()
        for line in lines[start : start + step]:
            os.write(fd, line)
            os.fsync(fd)
        t_raw += time.perf_counter() - t
        t = time.perf_counter()
        for e in evs[start : start + step]:
            gate.emit(e)
            w.wait_durable(w.last_seq, 30)
        t_ours += time.perf_counter() - t
    gate.close()
    os.close(fd)
    shutil.rmtree(ws)
    raw_path.unlink()
    return t_raw, t_ours


def make_sessions(ws: Path, n: int) -> None:
    """n completed sessions, written directly (the writer's fsyncs would dominate setup)."""
    root = sessions_root(ws)
    (root / ".locks").mkdir(parents=True)
    line = encode_wrapped_line(TurnStartedEvent(), seq=1, ts=rfc3339())
    for i in range(n):
        sid = f"s{i:05d}"
        d = root / sid
        (d / "index").mkdir(parents=True)
        (d / "derived").mkdir()
        (d / "events.jsonl").write_bytes(line)
        stamp = f"2026-01-01T00:00:{i % 60:02d}.{i:06d}+00:00"
        m = {
            "session_id": sid,
            "schema_version": 1,
            "created_at": stamp,
            "updated_at": stamp,
            "turn_count": 0,
            "event_count": 1,
            "status": "completed",
            "last_seq": 1,
            "log_bytes": len(line),
            "first_seq": 1,
        }
        (d / "manifest.json").write_bytes(orjson.dumps(m))
        (d / "index" / "turns.json").write_bytes(b'{"entries":[]}')


def gc_bench(tmp: Path, n: int) -> tuple[float, float, int]:
    ws = tmp / "gc"
    make_sessions(ws, n)
    t = time.perf_counter()
    kept = apply_retention(ws, RetentionConfig(max_sessions=n, max_age_days=100_000))
    scan = time.perf_counter() - t
    assert not kept.deleted
    t = time.perf_counter()
    keep = max(50, n - 1000)  # remove up to 1,000: the kernel's rmdir dominates, not the scan
    rep = apply_retention(ws, RetentionConfig(max_sessions=keep, max_age_days=100_000))
    delete = time.perf_counter() - t
    shutil.rmtree(ws)
    return scan, delete, len(rep.deleted)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller N (noisier figures)")
    args = ap.parse_args()
    n = 20_000 if args.quick else 100_000
    n_sync = 500 if args.quick else 2_000
    n_gc = 2_000 if args.quick else 10_000
    evs = events(n)
    sync_evs = evs[:n_sync]
    lines = [encode_wrapped_line(e, seq=i, ts=rfc3339()) for i, e in enumerate(evs, 1)]
    tmp = Path(tempfile.mkdtemp(prefix="vtcode-bench-", dir=os.environ.get("BENCH_TMP")))
    try:
        r_write = raw_write(tmp, lines, fsync=False)
        r_enc = raw_encode_write(tmp, evs)
        o_os = ours(tmp, evs, Durability.OS, "os")
        o_turn = ours(tmp, evs, Durability.TURN, "turn")
        o_event = ours(tmp, evs, Durability.EVENT, "event")
        # interleaved twice so both paths see the same machine load
        direct = exporter_case(tmp, evs, False, "d1") + exporter_case(tmp, evs, False, "d2")
        ahead = exporter_case(tmp, evs, True, "w1") + exporter_case(tmp, evs, True, "w2")
        r_sync, o_acked = acked_vs_raw(tmp, sync_evs)
        items = [e for e in events(n_sync * 2) if isinstance(e, ItemCompletedEvent)][:n_sync]
        r_sync2, o_acked2 = acked_vs_raw(tmp, list(items))
        scan, delete, deleted = gc_bench(tmp, n_gc)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    def rate(count: int, secs: float) -> str:
        return f"{count / secs:>12,.0f} ev/s  ({secs / count * 1e6:7.2f} us/ev)"

    avg = sum(len(x) for x in lines) / len(lines)
    print(f"python {sys.version.split()[0]}, {n} events ({avg:.0f} B/line), {PER_TURN} per turn")
    print(f"raw write (no fsync)        {rate(n, r_write)}")
    print(f"raw encode+write            {rate(n, r_enc)}")
    print(f"raw write+fsync per line    {rate(n_sync, r_sync)}")
    print(f"ours durability=os          {rate(n, o_os)}")
    print(f"ours durability=turn        {rate(n, o_turn)}")
    print(f"ours durability=event       {rate(n, o_event)}  (group commit)")
    print(f"ours event, acked one by one{rate(n_sync, o_acked)}")
    print(f"--json, direct (old gate)   {rate(2 * n, direct)}")
    print(f"--json, write-ahead         {rate(2 * n, ahead)}")
    print()
    print(f"write-ahead / direct        {direct / ahead:6.1%}   (throughput kept)")
    print(f"turn / raw write            {r_write / o_turn:6.1%}   (target >= 50%)")
    print(f"turn / raw encode+write     {r_enc / o_turn:6.1%}")
    print(
        f"event acked / raw fsync     {r_sync / n_sync / (o_acked / n_sync):6.1%}   (target >= 80%)"
    )
    print(
        f"  same, no turn boundaries  {r_sync2 / o_acked2:6.1%}   (no manifest/index replace: "
        "the gate + drain + thread handoff alone)"
    )
    print(f"event group / raw fsync     {(r_sync / n_sync) / (o_event / n):6.1f}x")
    print(f"gate+drain overhead         {(o_os - r_enc) / n * 1e6:6.2f} us/event  (target < 20)")
    print(f"gc scan of {n_gc} sessions   {scan:6.3f} s   (target < 2 s)")
    print(
        f"gc deleting {deleted} of {n_gc}  {delete:6.3f} s  ({delete / max(1, deleted) * 1e3:.2f} "
        "ms per session: rename + 4 unlinks + 3 rmdir)"
    )


if __name__ == "__main__":
    main()
