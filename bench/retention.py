"""Automatic retention with many closed sessions: time to the first event vs an empty workspace.

Run: .venv/bin/python bench/retention.py [SESSIONS=100000] [--repeats 3] [--full-scan]

Builds a workspace holding SESSIONS closed sessions (copies of one real session, each with its
own manifest, and the closed-session index a closing run appends to), then times `vtcode exec
--json` from start to its first stdout event (median of --repeats) in three workspaces:
an empty one (the baseline), the big one with a policy that keeps everything (the pass reads the
index and removes nothing) and the big one with the default policy (50 sessions: the pass
removes its cap of sessions per run). Prints each time and its ratio to the baseline.
Then times the automatic pass alone in this process (default policy). `--full-scan` also
times the full pass (`sessions gc --dry-run`), which reads every manifest.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "fixtures" / "scripts" / "scenario-success.toml"


def _vtcode(ws: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "vtcode", "-C", str(ws), *args]


def _first_event_secs(ws: Path, sid: str, extra: list[str]) -> float:
    cmd = _vtcode(ws, *extra, "exec", "--json", "--session-id", sid, "--script", str(SCRIPT), "hi")
    env = {**os.environ, "NO_COLOR": "1"}
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    elapsed = time.perf_counter() - start
    _, err = proc.communicate(timeout=600)
    if not line or proc.returncode != 0:
        raise SystemExit(f"vtcode failed ({proc.returncode}): {err.decode(errors='replace')}")
    return elapsed


def _populate(ws: Path, n: int) -> None:
    """`n` closed sessions, copies of one real session, plus their index lines (oldest first)."""
    subprocess.run(
        _vtcode(ws, "exec", "-q", "--session-id", "template", "--script", str(SCRIPT), "hi"),
        check=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    root = ws / ".vtcode" / "sessions"
    tpl = root / "template"
    events = (tpl / "events.jsonl").read_bytes()
    turns = (tpl / "index" / "turns.json").read_bytes()
    manifest = orjson.loads((tpl / "manifest.json").read_bytes())
    lines = []
    for i in range(n):
        sid = f"old-{i:06d}"
        sdir = root / sid
        (sdir / "index").mkdir(parents=True)
        (sdir / "events.jsonl").write_bytes(events)
        (sdir / "index" / "turns.json").write_bytes(turns)
        stamp = f"2026-01-01T00:00:00.{i % 1_000_000:06d}+00:00"
        m = dict(manifest, session_id=sid, created_at=stamp, updated_at=stamp)
        (sdir / "manifest.json").write_bytes(orjson.dumps(m))
        lines.append(f"{stamp} {sid}\n")
    # The template stays: the newest session, as in a real workspace (whose runs left ledgers).
    (ws / ".vtcode" / "closed-sessions.index").write_text("".join(lines))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("sessions", type=int, nargs="?", default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--full-scan", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="vtcode-retention-") as tmp:
        empty, big = Path(tmp) / "empty", Path(tmp) / "big"
        empty.mkdir()
        big.mkdir()
        t = time.perf_counter()
        _populate(big, args.sessions)
        print(f"built {args.sessions} closed sessions in {time.perf_counter() - t:.1f}s")
        keep_all = ["-c", f"store.retention.max_sessions={args.sessions * 2}"]
        keep_all += ["-c", "store.retention.max_age_days=100000"]
        runs = {
            "empty workspace": (empty, keep_all),
            f"{args.sessions} sessions, nothing to remove": (big, keep_all),
            f"{args.sessions} sessions, default policy": (big, []),
        }
        base = 0.0
        for n, (label, (ws, extra)) in enumerate(runs.items()):
            times = [_first_event_secs(ws, f"run-{n}-{k}", extra) for k in range(args.repeats)]
            med = statistics.median(times)
            base = base or med
            print(f"{label:<44} first event {med * 1000:8.1f} ms  x{med / base:5.2f}")
        # The automatic pass alone, in this process (default policy: it removes up to its cap).
        from vtcode.config.model import RetentionConfig
        from vtcode.store.retention import apply_retention_indexed

        for label, ws in (
            ("automatic pass alone, empty workspace", empty),
            ("automatic pass alone, big workspace", big),
        ):
            t = time.perf_counter()
            rep = apply_retention_indexed(ws, RetentionConfig())
            dt = time.perf_counter() - t
            print(f"{label:<44} {dt * 1000:8.1f} ms  removed {len(rep.deleted)}")
        if args.full_scan:
            t = time.perf_counter()
            subprocess.run(
                _vtcode(big, *keep_all, "sessions", "gc", "--dry-run", "--json"),
                check=True,
                stdout=subprocess.DEVNULL,
            )
            full = time.perf_counter() - t
            label = "full scan (sessions gc --dry-run)"
            print(f"{label:<44} {full * 1000:8.1f} ms  x{full / base:5.2f}")


if __name__ == "__main__":
    main()
