"""`vtcode fleet` on a real PostgreSQL, through the real CLI: the schema, where the database URL
may come from, the registry commands, budgets fleet-wide, and SIGTERM of a worker."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import psycopg
import pytest

from tests.exec_support import vtcode
from tests.fleet.pgcluster import wait_until
from tests.fleet.support import (
    SLOW_ONCE,
    assert_store_has_every_event,
    fleet,
    start_worker,
    status,
    stop_workers,
    wait_for_loop,
)


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
    # sessions follow the same rule: mirrored by the user's URL, never by the workspace's
    ran = vtcode(["exec", "--script", "demo", "hi"], tmp_path, env={"VTCODE_TRUST_WORKSPACE": "1"})
    assert ran.returncode == 0, ran.stderr
    (home / "config.toml").unlink()
    ran = vtcode(["exec", "--script", "demo", "hi"], tmp_path, env={"VTCODE_TRUST_WORKSPACE": "1"})
    assert ran.returncode == 0, ran.stderr
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT count(*) FROM vtcode_sessions").fetchone()
    assert row is not None and row[0] == 1


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
        "--max-cost",
        "1.5",
        "--max-tokens",
        "9000",
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
        "max_cost_usd": 1.5,
        "tokens": 0,
        "max_tokens": 9000,
    }
    text = fleet(tmp_path, database_url, "status")
    assert text.returncode == 0, text.stderr
    [line] = text.stdout.splitlines()
    assert line.split("\t")[1:5] == ["idle", "steps 0/2", "$0.0000/$1.5000", "0/9000 tok"]
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


def test_budgets_hold_fleet_wide(tmp_path: Path, database_url: str) -> None:
    assert fleet(tmp_path, database_url, "migrate").returncode == 0
    (tmp_path / "ws").mkdir()
    # each replay step uses about 1,270 tokens: the third crosses 3000, the fourth is refused
    r = fleet(
        tmp_path, database_url, "add", "cap", "--workspace", "ws", "--max-tokens", "3000",
        "--provider", "replay", "capped",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    workers = [start_worker(tmp_path, database_url, f"h{i}") for i in range(2)]
    try:
        wait_for_loop(tmp_path, database_url, "cap", "the budget stop", state="complete")
    finally:
        stop_workers(workers)
    row = status(tmp_path, database_url)["cap"]
    state = json.loads((tmp_path / "ws/.vtcode/state/loop-cap.json").read_text())
    used = [s["input_tokens"] + s["output_tokens"] for s in state["steps"]]
    assert row["steps_done"] == len(used) == 3
    assert row["tokens"] == sum(used) >= 3000 > sum(used[:-1])
    assert (row["max_tokens"], row["max_cost_usd"], row["max_steps"]) == (3000, None, None)
    [line] = fleet(tmp_path, database_url, "status").stdout.splitlines()
    assert f"{sum(used)}/3000 tok" in line.split("\t")
    assert "steps 3/-" in line.split("\t")


SLOW_FOR = SLOW_ONCE.replace("exec sleep 60", 'exec sleep \\"$(cat slow.secs)\\"')


@pytest.mark.parametrize(("secs", "grace", "exit_code"), [("2", "30", 0), ("60", "1", 130)])
def test_sigterm_lets_the_step_finish_or_cancels_it_cleanly(
    tmp_path: Path, database_url: str, secs: str, grace: str, exit_code: int
) -> None:
    assert fleet(tmp_path, database_url, "migrate").returncode == 0
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "slow.flag").write_text("")
    (ws / "slow.secs").write_text(secs)
    script = tmp_path / "slow.toml"
    script.write_text(SLOW_FOR)
    r = fleet(
        tmp_path,
        database_url,
        "add",
        "t",
        "--workspace",
        "ws",
        "--max-steps",
        "1",
        "--script",
        str(script),
        "slow",
    )
    assert r.returncode == 0, r.stderr
    worker = start_worker(tmp_path, database_url, "h", "--grace", grace)
    wait_until((ws / "job.pid").exists, "the slow step")
    worker.send_signal(signal.SIGTERM)
    _out, err = worker.communicate(timeout=60)
    assert worker.returncode == 0, err
    state = json.loads((ws / ".vtcode/state/loop-t.json").read_text())
    [step] = state["steps"]
    assert step["exit_code"] == exit_code
    row = status(tmp_path, database_url)["t"]
    assert (row["running_on"], row["last_session_id"]) == (None, step["session_id"])
    assert_store_has_every_event(tmp_path, database_url, [ws])
    last = json.loads(
        fleet(tmp_path, database_url, "events", step["session_id"]).stdout.splitlines()[-1]
    )
    assert last["type"] == "thread.completed"


def test_a_loop_whose_workspace_is_gone_fails_visibly(tmp_path: Path, database_url: str) -> None:
    assert fleet(tmp_path, database_url, "migrate").returncode == 0
    ws = tmp_path / "gone"
    ws.mkdir()
    assert fleet(tmp_path, database_url, "add", "g", "--workspace", "gone", "p").returncode == 0
    ws.rmdir()
    worker = start_worker(tmp_path, database_url, "h")
    try:
        wait_for_loop(tmp_path, database_url, "g", "the loop to fail", state="failed")
    finally:
        stop_workers([worker])
    assert "cannot start the step" in status(tmp_path, database_url)["g"]["last_outcome"]


def test_an_exec_is_mirrored_live_by_the_exporter_behind_the_gate(
    tmp_path: Path, database_url: str
) -> None:
    """No worker: the exporter alone copies the session, and `fleet events` prints the bytes
    `exec --json` printed; a database that is down costs one warning, never the run."""
    assert fleet(tmp_path, database_url, "migrate").returncode == 0
    env = {"VTCODE_DATABASE_URL": database_url, "VTCODE_HOST_ID": "laptop"}
    r = vtcode(["exec", "--json", "--script", "demo", "fix the greeting"], tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    sid = json.loads(r.stdout.splitlines()[0])["thread_id"]
    stored = fleet(tmp_path, database_url, "events", sid)
    assert stored.stdout == r.stdout
    [row] = json.loads(fleet(tmp_path, database_url, "sessions", "--json").stdout)["sessions"]
    assert (row["host"], row["loop_id"], row["outcome_code"]) == ("laptop", None, "success")
    assert row["events"] == len(r.stdout.splitlines())
    down = {"VTCODE_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none"}
    r = vtcode(["exec", "--script", "demo", "fix the greeting"], tmp_path, env=down)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("central store unavailable") == 1
