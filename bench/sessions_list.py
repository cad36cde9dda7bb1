"""`vtcode sessions list` over many closed sessions: the index path against the full scan.

Run: .venv/bin/python bench/sessions_list.py [SESSIONS=20000] [--repeats 3] [--no-cli]

Builds a workspace holding SESSIONS closed sessions: one real run (`vtcode exec` with a replay
script) is the template, and each session is written in the store's on-disk format (its own
events.jsonl, manifest.json, index/turns.json and lock file), then indexed as a closing run
indexes it (`record_closed`, which appends the session's card). Then, in this process, times
`list_rows` reading the index (the new path: what `sessions list` calls), `list_sessions` from
the index (the API: the same rows as `SessionSummary`s), and `list_sessions(use_index=False)`,
which reads every session (what `sessions list` did before the index; with today's lock probe,
so the ratio errs against the index), best of --repeats each, interleaved; checks that all
give the same rows, and prints each time and the ratio new/old. Unless --no-cli, also times
the CLI (`vtcode sessions list`, text and --json, wall time, best of --repeats) on that
workspace and on an empty one (the interpreter's start-up floor).
"""

from __future__ import annotations

import argparse
import os
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


def _populate(ws: Path, n: int) -> None:
    """`n` closed sessions, copies of one real session, each indexed as its close would."""
    from vtcode.store.closed_index import record_closed

    env = {**os.environ, "NO_COLOR": "1"}
    cmd = _vtcode(ws, "exec", "-q", "--session-id", "template", "--script", str(SCRIPT), "hi")
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    root = ws / ".vtcode" / "sessions"
    tpl = root / "template"
    events = (tpl / "events.jsonl").read_bytes()
    turns = (tpl / "index" / "turns.json").read_bytes()
    manifest = orjson.loads((tpl / "manifest.json").read_bytes())
    for i in range(n):
        sid = f"old-{i:06d}"
        sdir = root / sid
        (sdir / "index").mkdir(parents=True)
        (sdir / "events.jsonl").write_bytes(events)
        (sdir / "index" / "turns.json").write_bytes(turns)
        stamp = f"2026-01-01T00:00:00.{i % 1_000_000:06d}+00:00"
        m = dict(manifest, session_id=sid, created_at=stamp, updated_at=stamp)
        (sdir / "manifest.json").write_bytes(orjson.dumps(m))
        fd = os.open(root / ".locks" / f"{sid}.lock", os.O_WRONLY | os.O_CREAT, 0o600)
        os.close(fd)
        assert record_closed(ws, sid)


def _best(fn: object, repeats: int) -> float:
    assert callable(fn)
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _cli(ws: Path, repeats: int, *args: str) -> float:
    cmd = _vtcode(ws, "sessions", "list", *args)
    env = {**os.environ, "NO_COLOR": "1"}
    return _best(lambda: subprocess.run(cmd, check=True, env=env, capture_output=True), repeats)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("sessions", type=int, nargs="?", default=20_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-cli", action="store_true")
    args = ap.parse_args()
    from vtcode.store.listing import list_rows, list_sessions

    with tempfile.TemporaryDirectory(prefix="vtcode-sessions-list-") as tmp:
        ws, empty = Path(tmp) / "ws", Path(tmp) / "empty"
        ws.mkdir()
        empty.mkdir()
        t = time.perf_counter()
        _populate(ws, args.sessions)
        built = time.perf_counter() - t
        print(f"built and indexed {args.sessions} closed sessions in {built:.1f}s")
        rows_new = [r.to_json() for r in list_rows(ws)]
        rows_api = [r.to_json() for r in list_sessions(ws)]
        rows_old = [r.to_json() for r in list_sessions(ws, use_index=False)]
        same = rows_new == rows_old == rows_api
        print(f"same rows from every path: {'yes' if same else 'NO'}")
        new = api = old = float("inf")
        for _ in range(args.repeats):  # interleaved, so a load change hits all
            new = min(new, _best(lambda: list_rows(ws), 1))
            api = min(api, _best(lambda: list_sessions(ws), 1))
            old = min(old, _best(lambda: list_sessions(ws, use_index=False), 1))
        print(f"list_rows, index (new)               {new * 1000:8.1f} ms")
        print(f"list_sessions, index (the API)       {api * 1000:8.1f} ms")
        print(f"list_sessions, full scan (old)       {old * 1000:8.1f} ms")
        print(f"ratio new/old                        {new / old:8.3f}  ({old / new:.1f}x faster)")
        if not args.no_cli:
            floor = _cli(empty, args.repeats)
            text = _cli(ws, args.repeats)
            as_json = _cli(ws, args.repeats, "--json")
            print(f"CLI sessions list, empty workspace   {floor * 1000:8.1f} ms (start-up)")
            print(f"CLI sessions list                    {text * 1000:8.1f} ms")
            print(f"CLI sessions list --json             {as_json * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
