"""`vtcode fleet` on a real PostgreSQL, through the real CLI: the schema, the registry, and what
users rely on: a loop's steps across several workers and hosts, a SIGKILLed worker's step re-run,
every event of every session in the central store, cron ticks fired once, budgets fleet-wide,
and a database restart in the middle of a run."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.exec_support import spawn_vtcode, vtcode
from tests.fleet.pgcluster import Cluster, wait_until

STALL = "3"


def fleet(tmp: Path, url: str, *args: str, extra: dict[str, str] | None = None) -> Any:
    env = {"VTCODE_DATABASE_URL": url, **(extra or {})}
    return vtcode(["fleet", *args], tmp, env=env)


def status(tmp: Path, url: str) -> dict[str, dict[str, Any]]:
    r = fleet(tmp, url, "status", "--json")
    assert r.returncode == 0, r.stderr
    return {row["loop_id"]: row for row in json.loads(r.stdout)["loops"]}


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
            r = fleet(tmp, url, "events", sid)
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


def test_migrate_is_idempotent_and_refuses_a_newer_schema(
    tmp_path: Path, database_url: str
) -> None:
    r = fleet(tmp_path, database_url, "status")
    assert r.returncode == 2 and "vtcode fleet migrate" in r.stderr
    first = fleet(tmp_path, database_url, "migrate", "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout) == {"from": 0, "to": 1}
    again = fleet(tmp_path, database_url, "migrate", "--json")
    assert json.loads(again.stdout) == {"from": 1, "to": 1}
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("INSERT INTO vtcode_fleet_meta (version) VALUES (99)")
    newer = fleet(tmp_path, database_url, "migrate")
    assert newer.returncode == 2
    assert "schema 99" in newer.stderr and "Traceback" not in newer.stderr


def test_the_database_url_never_comes_from_the_workspace(tmp_path: Path, database_url: str) -> None:
    (tmp_path / "vtcode.toml").write_text(f'[fleet]\ndatabase_url = "{database_url}"\n')
    for trust in ("0", "1"):
        r = vtcode(["fleet", "status"], tmp_path, env={"VTCODE_TRUST_WORKSPACE": trust})
        assert r.returncode == 2, r.stderr
        assert "no fleet database" in r.stderr
    home = tmp_path / ".home"
    home.mkdir()
    (home / "config.toml").write_text(f'[fleet]\ndatabase_url = "{database_url}"\n')
    assert vtcode(["fleet", "migrate"], tmp_path).returncode == 0  # the user config is read


def test_registry_commands_and_bad_input(tmp_path: Path, database_url: str) -> None:
    assert fleet(tmp_path, database_url, "migrate").returncode == 0
    ws = tmp_path / "ws"
    ws.mkdir()
    r = fleet(
        tmp_path, database_url, "add", "x", "--workspace", "ws", "--schedule", "0 25 * * *", "p"
    )
    assert r.returncode == 2 and "out of range" in r.stderr and "Traceback" not in r.stderr
    r = fleet(tmp_path, database_url, "add", "x", "--workspace", "nope", "p")
    assert r.returncode == 2 and "not a directory" in r.stderr
    add = fleet(
        tmp_path,
        database_url,
        "add",
        "x",
        "--workspace",
        "ws",
        "--schedule",
        "0 4 * * *",
        "--max-steps",
        "2",
        "--queue",
        "q1",
        "keep docs",
    )
    assert add.returncode == 0, add.stderr
    row = status(tmp_path, database_url)["x"]
    assert row | {"workspace": None} == {
        "loop_id": "x",
        "workspace": None,
        "queue": "q1",
        "schedule": "0 4 * * *",
        "steps_done": 0,
        "max_steps": 2,
        "state": "idle",
        "running_on": None,
        "last_session_id": None,
        "last_outcome": None,
        "cost_usd": 0.0,
        "tokens": 0,
    }
    assert fleet(tmp_path, database_url, "run-now", "x").returncode == 0
    assert status(tmp_path, database_url)["x"]["state"] == "queued"
    assert fleet(tmp_path, database_url, "pause", "x").returncode == 0
    assert status(tmp_path, database_url)["x"]["state"] == "paused"
    assert fleet(tmp_path, database_url, "resume", "x").returncode == 0
    assert status(tmp_path, database_url)["x"]["state"] == "queued"
    assert fleet(tmp_path, database_url, "remove", "x").returncode == 0
    assert status(tmp_path, database_url) == {}
    gone = fleet(tmp_path, database_url, "run-now", "x")
    assert gone.returncode == 2 and "no fleet loop 'x'" in gone.stderr


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


def test_four_workers_on_two_hosts_survive_a_sigkilled_worker(
    tmp_path: Path, database_url: str
) -> None:
    assert fleet(tmp_path, database_url, "migrate").returncode == 0
    script = tmp_path / "slow-once.toml"
    script.write_text(SLOW_ONCE)
    workspaces = []
    for name in ("a", "b", "c"):
        ws = tmp_path / name
        ws.mkdir()
        workspaces.append(ws)
        r = fleet(
            tmp_path,
            database_url,
            "add",
            name,
            "--workspace",
            str(ws),
            "--max-steps",
            "4",
            "--script",
            str(script),
            "step of " + name,
        )
        assert r.returncode == 0, r.stderr
    (tmp_path / "b" / "slow.flag").write_text("")  # b's next step blocks until killed
    hosts = ["host-a", "host-a", "host-b", "host-b"]
    workers = [start_worker(tmp_path, database_url, h) for h in hosts]
    try:
        job = tmp_path / "b" / "job.pid"
        wait_until(job.exists, "the slow step of loop b")
        sleeper = int(job.read_text())
        [victim] = [w for w in workers if w.pid == lease_owner_pid(database_url, "b")]
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        os.kill(sleeper, signal.SIGKILL)  # a grandchild of the dead worker, as on a lost host
        wait_until(
            lambda: all(r["state"] == "complete" for r in status(tmp_path, database_url).values()),
            "every loop to complete",
            timeout=90,
        )
    finally:
        stop_workers(workers)
    rows = status(tmp_path, database_url)
    by_loop = {k: (r["steps_done"], r["state"]) for k, r in rows.items()}
    assert by_loop == dict.fromkeys("abc", (4, "complete"))
    for ws in workspaces:
        state = json.loads((ws / ".vtcode" / "state" / f"loop-{ws.name}.json").read_text())
        done = [s["index"] for s in state["steps"] if s["status"] == "done"]
        assert done == [1, 2, 3, 4]  # no step was repeated once done
        spans = intervals(ws)
        for (_s1, end1), (start2, _e2) in itertools.pairwise(spans):
            assert end1 <= start2  # never two steps of one loop at once
    b_state = json.loads((tmp_path / "b" / ".vtcode/state/loop-b.json").read_text())
    assert [s["status"] for s in b_state["steps"]].count("interrupted") == 1
    assert assert_store_has_every_event(tmp_path, database_url, workspaces) == 13
    sessions = json.loads(fleet(tmp_path, database_url, "sessions", "--json").stdout)["sessions"]
    assert {s["host"] for s in sessions} <= {"host-a", "host-b"}
    per_loop = fleet(tmp_path, database_url, "sessions", "--loop", "b", "--json")
    assert len(json.loads(per_loop.stdout)["sessions"]) == 5


def test_a_cron_schedule_fires_once_per_tick_with_three_workers(
    tmp_path: Path, database_url: str
) -> None:
    assert fleet(tmp_path, database_url, "migrate").returncode == 0
    (tmp_path / "ws").mkdir()
    r = fleet(
        tmp_path,
        database_url,
        "add",
        "tick",
        "--workspace",
        "ws",
        "--schedule",
        "*/2 * * * * *",
        "tick step",
    )
    assert r.returncode == 0, r.stderr
    workers = [start_worker(tmp_path, database_url, f"h{i}") for i in range(3)]

    def fires() -> list[Any]:
        with psycopg.connect(database_url) as conn:
            return conn.execute("SELECT tick FROM vtcode_fleet_fires ORDER BY tick").fetchall()

    try:
        wait_until(lambda: len(fires()) >= 3, "three ticks", timeout=30)
    finally:
        stop_workers(workers)
    ticks = [t for (t,) in fires()]
    assert all(t.second % 2 == 0 for t in ticks)
    with psycopg.connect(database_url) as conn:
        steps = conn.execute("SELECT count(*) FROM vtcode_fleet_steps").fetchone()
    assert steps is not None
    # one step per tick at most, whatever the number of workers (a tick while one ran: none)
    assert 1 <= steps[0] <= len(ticks)
    assert status(tmp_path, database_url)["tick"]["steps_done"] == steps[0]


def test_budgets_hold_fleet_wide(tmp_path: Path, database_url: str) -> None:
    assert fleet(tmp_path, database_url, "migrate").returncode == 0
    (tmp_path / "ws").mkdir()
    # each replay step uses about 1,270 tokens: the third crosses 3000, the fourth is refused
    r = fleet(
        tmp_path, database_url, "add", "cap", "--workspace", "ws", "--max-tokens", "3000", "capped"
    )
    assert r.returncode == 0, r.stderr
    workers = [start_worker(tmp_path, database_url, f"h{i}") for i in range(2)]
    try:
        wait_until(
            lambda: status(tmp_path, database_url)["cap"]["state"] == "complete",
            "the budget stop",
            timeout=60,
        )
    finally:
        stop_workers(workers)
    row = status(tmp_path, database_url)["cap"]
    state = json.loads((tmp_path / "ws/.vtcode/state/loop-cap.json").read_text())
    used = [s["input_tokens"] + s["output_tokens"] for s in state["steps"]]
    assert row["steps_done"] == len(used) == 3
    assert row["tokens"] == sum(used) >= 3000 > sum(used[:-1])


def test_the_database_restarts_mid_run(
    tmp_path: Path, database_url: str, pg_server: Cluster | None
) -> None:
    if pg_server is None:
        pytest.skip("VTCODE_TEST_DATABASE_URL is not ours to restart")
    assert fleet(tmp_path, database_url, "migrate").returncode == 0
    ws = tmp_path / "ws"
    ws.mkdir()
    r = fleet(tmp_path, database_url, "add", "r", "--workspace", "ws", "--max-steps", "6", "go")
    assert r.returncode == 0, r.stderr
    workers = [
        spawn_vtcode(
            ["fleet", "worker", "--poll", "0.1", "--stall-timeout", "8"],
            tmp_path,
            env={"VTCODE_DATABASE_URL": database_url, "VTCODE_HOST_ID": f"h{i}"},
        )
        for i in range(2)
    ]
    try:
        wait_until(lambda: status(tmp_path, database_url)["r"]["steps_done"] >= 2, "two steps")
        pg_server.stop("fast")
        pg_server.start()
        wait_until(
            lambda: status(tmp_path, database_url)["r"]["state"] == "complete",
            "the loop to complete after the restart",
            timeout=60,
        )
    finally:
        stop_workers(workers)
    assert status(tmp_path, database_url)["r"]["steps_done"] == 6
    assert assert_store_has_every_event(tmp_path, database_url, [ws]) == 6
