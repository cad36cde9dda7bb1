"""Fleet throughput on a real PostgreSQL (prints; never asserts).

    .venv/bin/python bench/fleet.py [--quick] [--url postgresql://...] [--ingest-only REPEATS]

Without --url (or VTCODE_TEST_DATABASE_URL) it starts a throwaway cluster from the machine's
PostgreSQL binaries, as the tests do. Two measurements, each with its baseline in the same run:

- steps/s of trivial steps (the replay provider, no script) with 1, 2 and 4 workers, each step a
  `vtcode loop run --steps 1` child, next to `vtcode loop run --steps 1` run back to back in one
  shell loop (the same child without the fleet: the cost of the fleet itself is the difference);
- event ingest into the central store (`sync_session`: read the local log, INSERT ... ON
  CONFLICT DO NOTHING, session summary upsert) vs a bare COPY of the same rows into a table of
  the same shape, in rows/s, with the ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import psycopg  # noqa: E402

from tests.fleet.pgcluster import fresh_database, throwaway_cluster  # noqa: E402
from vtcode.store.exports.central import sync_session  # noqa: E402


def cli(tmp: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "VTCODE_DATABASE_URL": url, "VTCODE_HOME": str(tmp / "home")}
    return subprocess.run(
        [sys.executable, "-m", "vtcode", *args], cwd=tmp, env=env, capture_output=True, text=True
    )


@contextlib.contextmanager
def server(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    with throwaway_cluster() as cluster:
        yield cluster.url


def steps_per_second(admin: str, workers: int, loops: int, steps: int) -> float:
    url = fresh_database(admin)
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        assert cli(tmp, url, "fleet", "migrate").returncode == 0
        for i in range(loops):
            (tmp / f"w{i}").mkdir()
            r = cli(
                tmp,
                url,
                "fleet",
                "add",
                f"l{i}",
                "--workspace",
                f"w{i}",
                "--max-steps",
                str(steps),
                "bench step",
            )
            assert r.returncode == 0, r.stderr
        env = {**os.environ, "VTCODE_DATABASE_URL": url, "VTCODE_HOME": str(tmp / "home")}
        t0 = time.perf_counter()
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "vtcode", "-q", "fleet", "worker", "--poll", "0.05"],
                cwd=tmp,
                env=env,
                stdin=subprocess.DEVNULL,
            )
            for _ in range(workers)
        ]
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                while True:
                    row = conn.execute(
                        "SELECT count(*) FILTER (WHERE state = 'complete') FROM vtcode_fleet_loops"
                    ).fetchone()
                    if row and row[0] == loops:
                        break
                    time.sleep(0.02)
            elapsed = time.perf_counter() - t0
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.wait()
    return loops * steps / elapsed


def local_steps_per_second(n: int) -> float:
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        env = {**os.environ, "VTCODE_HOME": str(tmp / "home")}
        t0 = time.perf_counter()
        for _ in range(n):
            subprocess.run(
                [sys.executable, "-m", "vtcode", "-q", "loop", "run", "--id", "b", "bench step"],
                cwd=tmp,
                env=env,
                check=True,
                capture_output=True,
            )
        return n / (time.perf_counter() - t0)


def ingest(admin: str, rows: int) -> tuple[float, float]:
    """(sync_session rows/s, COPY rows/s) for the same `rows` lines."""
    url = fresh_database(admin)
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        assert cli(tmp, url, "fleet", "migrate").returncode == 0
        sid = "session-20260101T000000Z-bench0"
        folder = tmp / ".vtcode" / "sessions" / sid
        folder.mkdir(parents=True)
        item = {
            "type": "item.completed",
            "item": {"id": "item_0", "type": "agent_message", "text": "x" * 200},
        }
        lines = [
            json.dumps(
                {
                    "schema_version": "0.11.0",
                    "event": item,
                    "seq": i,
                    "ts": "2026-01-01T00:00:00+00:00",
                },
                separators=(",", ":"),
            )
            for i in range(1, rows + 1)
        ]
        (folder / "events.jsonl").write_text("\n".join(lines) + "\n")
        with psycopg.connect(url, autocommit=True) as conn:
            t0 = time.perf_counter()
            n, _end = sync_session(conn, tmp, sid, loop_id="bench", host="bench")
            ours = time.perf_counter() - t0
            assert n == rows
            conn.execute("CREATE TABLE copy_target (LIKE vtcode_events INCLUDING ALL)")
            t0 = time.perf_counter()
            with (
                conn.cursor() as cur,
                cur.copy("COPY copy_target (session_id, seq, ts, type, line) FROM STDIN") as copy,
            ):
                for i, line in enumerate(lines, 1):
                    copy.write_row((sid, i, "2026-01-01T00:00:00+00:00", "item.completed", line))
            bare = time.perf_counter() - t0
    return rows / ours, rows / bare


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--url", default=os.environ.get("VTCODE_TEST_DATABASE_URL"))
    ap.add_argument("--ingest-only", type=int, metavar="REPEATS", default=0)
    a = ap.parse_args()
    loops, steps, rows = (4, 2, 5_000) if a.quick else (4, 4, 50_000)
    with server(a.url) as admin:
        for _ in range(a.ingest_only):  # the ingest alone, REPEATS times (each a fresh database)
            ours, bare = ingest(admin, rows)
            print(
                f"ingest {rows} events: sync_session {ours:9.0f} rows/s, bare COPY {bare:9.0f}"
                f" rows/s, ratio {ours / bare:.2f}"
            )
        if a.ingest_only:
            return
        base = local_steps_per_second(loops * steps // 2)
        print(f"loop run --steps 1, back to back (no fleet): {base:6.2f} steps/s")
        for w in (1, 2, 4):
            rate = steps_per_second(admin, w, loops, steps)
            print(
                f"fleet, {w} worker(s), {loops} loops x {steps} steps: {rate:6.2f} steps/s"
                f"  ({rate / base:.2f}x the local loop)"
            )
        ours, bare = ingest(admin, rows)
        print(
            f"ingest {rows} events: sync_session {ours:9.0f} rows/s, bare COPY {bare:9.0f}"
            f" rows/s, ratio {ours / bare:.2f}"
        )
        print(f"cores: {os.cpu_count()}")


if __name__ == "__main__":
    main()
