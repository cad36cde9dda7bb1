"""Helpers of the fleet tests: the CLI with a database URL, workers, and what the store holds."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import psycopg

from tests.exec_support import spawn_vtcode, vtcode
from tests.fleet.pgcluster import wait_until

STALL = "3"


def fleet(tmp: Path, url: str, *args: str, extra: dict[str, str] | None = None) -> Any:
    env = {"VTCODE_DATABASE_URL": url, **(extra or {})}
    return vtcode(["fleet", *args], tmp, env=env)


def status(tmp: Path, url: str) -> dict[str, dict[str, Any]]:
    r = fleet(tmp, url, "status", "--json")
    assert r.returncode == 0, r.stderr
    return {row["loop_id"]: row for row in json.loads(r.stdout)["loops"]}


def wait_for_loop(
    tmp: Path, url: str, loop_id: str, what: str, timeout: float = 60, **want: object
) -> dict[str, Any]:
    """Poll `fleet status --json` until loop_id's row has every field of `want` (e.g.
    state="complete"), failing with `what` after `timeout` seconds; the row that matched."""
    row: dict[str, Any] = {}

    def matches() -> bool:
        nonlocal row
        row = status(tmp, url).get(loop_id, {})
        return all(row.get(k) == v for k, v in want.items())

    wait_until(matches, what, timeout)
    return row


def start_worker(tmp: Path, url: str, host: str, *extra: str) -> subprocess.Popen[str]:
    return spawn_vtcode(
        ["fleet", "worker", "--poll", "0.1", "--stall-timeout", STALL, *extra],
        tmp,
        env={"VTCODE_DATABASE_URL": url, "VTCODE_HOST_ID": host},
    )


def stop_workers(workers: list[subprocess.Popen[str]]) -> None:
    """SIGTERM every live worker; each must end its steps and exit 0."""
    live = [w for w in workers if w.poll() is None]
    for w in live:
        w.send_signal(signal.SIGTERM)
    for w in live:
        _out, err = w.communicate(timeout=60)
        assert w.returncode == 0, err


def local_sessions(ws: Path) -> dict[str, bytes]:
    root = ws / ".vtcode" / "sessions"
    return {p.parent.name: p.read_bytes() for p in root.glob("session-*/events.jsonl")}


def assert_store_has_every_event(tmp: Path, url: str, workspaces: list[Path]) -> int:
    """`fleet events` prints, for every session of every workspace, the local log's bytes."""
    n = 0
    stored = json.loads(fleet(tmp, url, "sessions", "--json").stdout)["sessions"]
    stored_ids = {s["session_id"] for s in stored}
    for ws in workspaces:
        for sid, data in local_sessions(ws).items():
            assert sid in stored_ids
            r = fleet(tmp, url, "events", "--canonical", sid)
            assert r.returncode == 0, r.stderr
            assert r.stdout.encode() == data, sid
            n += 1
    assert n == len(stored_ids)
    return n


def intervals(ws: Path) -> list[tuple[str, str]]:
    """[first event ts, last event ts] of each session of a workspace, by start."""
    out = []
    for data in local_sessions(ws).values():
        lines = [json.loads(x) for x in data.splitlines() if x.strip()]
        out.append((lines[0]["ts"], lines[-1]["ts"]))
    return sorted(out)


SLOW_ONCE = """
[provider]
model = "replay-1"
context_window = 200000

[[turn]]
text = "Working."
[[turn.tool_calls]]
name = "exec_command"
arguments = { command = ["bash", "-c", "test -e slow.flag || exit 0; rm slow.flag; \
echo $$ > job.pid.tmp && mv job.pid.tmp job.pid && exec sleep 60"], yield_time_ms = 30000 }

[[turn]]
text = "Done."
stop_reason = "end_turn"
"""


def lease_owner_pid(url: str, loop_id: str) -> int:
    """The pid of the worker holding the loop's lease (its owner is host/pid/nonce)."""
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT lease_owner FROM vtcode_fleet_loops WHERE loop_id = %s", (loop_id,)
        ).fetchone()
    assert row is not None and row[0], "loop is not leased"
    return int(str(row[0]).split("/")[1])
