"""Fleet workers on a real PostgreSQL, through the real CLI: a loop's steps across several workers
and hosts, a SIGKILLed worker's step re-run, every event of every session in the central store,
cron ticks fired exactly once each with three workers, and a database restart mid-run."""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import signal
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.exec_support import spawn_vtcode
from tests.fleet.pgcluster import Cluster, wait_until
from tests.fleet.support import (
    SLOW_ONCE,
    assert_store_has_every_event,
    fleet,
    intervals,
    lease_owner_pid,
    start_worker,
    status,
    stop_workers,
    wait_for_loop,
)
from vtcode.fleet import cron


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


def test_a_cron_schedule_fires_exactly_once_per_tick_with_three_workers(
    tmp_path: Path, database_url: str
) -> None:
    """Time enters a schedule through the loop's `next_fire`, which the workers compare with the
    database's now() (cron.next_after only computes the next one). So a tick comes due exactly
    when `next_fire` is in the past: the test makes three ticks due, one after another, instead
    of waiting on the clock, and each must give exactly one fire and exactly one step, with
    three workers polling. The schedule is added while the workers already run."""
    assert fleet(tmp_path, database_url, "migrate").returncode == 0
    (tmp_path / "ws").mkdir()
    # A long lease: on a loaded machine a worker can miss the 3 s test lease's renewals, fence
    # its step (SIGTERM, exit 130) and re-queue it: a correct extra step that this test, which
    # counts steps per tick, would read as a second fire (seen once: [(3,)] == [(2,)] at tick 2).
    workers = [
        start_worker(tmp_path, database_url, f"h{i}", "--stall-timeout", "60") for i in range(3)
    ]
    far = (dt.date.today().month + 5) % 12 + 1  # its real next tick is months away
    schedule = f"0 0 1 {far} *"

    def db(sql: str, *args: object) -> list[Any]:
        with psycopg.connect(database_url, autocommit=True) as conn:
            return conn.execute(sql.encode(), args).fetchall()

    ticks = []
    try:
        r = fleet(
            tmp_path, database_url, "add", "tick", "--workspace", "ws", "--schedule", schedule,
            "--provider", "replay", "t",
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        for k in (1, 2, 3):
            [(tick,)] = db(
                "UPDATE vtcode_fleet_loops SET next_fire = date_trunc('second', now())"
                " - make_interval(mins => %s) RETURNING next_fire",
                10 - k,
            )
            ticks.append(tick)
            # idle again: the tick's step ran and nothing waits (a second fire would queue one)
            wait_for_loop(
                tmp_path,
                database_url,
                "tick",
                f"the one step of tick {k}",
                steps_done=k,
                state="idle",
            )
            assert db("SELECT count(*) FROM vtcode_fleet_steps") == [(k,)]
    finally:
        stop_workers(workers)
    assert [t for (t,) in db("SELECT tick FROM vtcode_fleet_fires ORDER BY tick")] == ticks
    assert db("SELECT count(*) FROM vtcode_fleet_steps WHERE exit_code = 0") == [(3,)]
    [(next_fire, now)] = db("SELECT next_fire, now() FROM vtcode_fleet_loops")
    assert next_fire == cron.next_after(schedule, now)  # back on the schedule's real ticks


def test_the_database_restarts_mid_run(
    tmp_path: Path, database_url: str, pg_server: Cluster | None
) -> None:
    if pg_server is None:
        pytest.skip("VTCODE_TEST_DATABASE_URL is not ours to restart")
    assert fleet(tmp_path, database_url, "migrate").returncode == 0
    ws = tmp_path / "ws"
    ws.mkdir()
    r = fleet(
        tmp_path, database_url, "add", "r", "--workspace", "ws", "--max-steps", "4",
        "--provider", "replay", "go",
    )  # fmt: skip
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
        wait_for_loop(
            tmp_path, database_url, "r", "the loop to complete after the restart", state="complete"
        )
    finally:
        stop_workers(workers)
    assert status(tmp_path, database_url)["r"]["steps_done"] == 4
    assert assert_store_has_every_event(tmp_path, database_url, [ws]) == 4


def test_a_worker_that_loses_the_database_stops_its_step_before_its_lease_lapses(
    tmp_path: Path, database_url: str, pg_server: Cluster | None
) -> None:
    """Fencing: without the database a worker cannot renew its lease, so it stops the step
    itself (another worker could claim the loop once the lease expired); the loop goes on when
    the database is back."""
    if pg_server is None:
        pytest.skip("VTCODE_TEST_DATABASE_URL is not ours to stop")
    assert fleet(tmp_path, database_url, "migrate").returncode == 0
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "slow.flag").write_text("")
    script = tmp_path / "slow.toml"
    script.write_text(SLOW_ONCE)
    r = fleet(
        tmp_path,
        database_url,
        "add",
        "f",
        "--workspace",
        "ws",
        "--max-steps",
        "2",
        "--script",
        str(script),
        "fenced",
    )
    assert r.returncode == 0, r.stderr
    worker = start_worker(tmp_path, database_url, "h")
    state_file = ws / ".vtcode/state/loop-f.json"

    def first_step_exit() -> Any:
        steps = json.loads(state_file.read_text())["steps"] if state_file.exists() else []
        return steps[0].get("exit_code") if steps else None

    try:
        wait_until((ws / "job.pid").exists, "the slow step")
        pg_server.stop("fast")
        try:
            wait_until(lambda: first_step_exit() is not None, "the fenced step to stop", 20)
        finally:
            pg_server.start()
        wait_for_loop(tmp_path, database_url, "f", "the loop to complete", state="complete")
    finally:
        stop_workers([worker])
    assert first_step_exit() == 130  # cancelled cleanly by its own worker, not killed
    assert status(tmp_path, database_url)["f"]["steps_done"] == 2
