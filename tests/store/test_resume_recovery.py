"""Resume after a crash, through the real CLI: every log vtcode writes passes a full validate.

`vtcode exec --json` is SIGKILLed at random points (after a random number of events shown on
stdout, in `turn` and `event` durability), then `exec resume` appends a new run. Opening the
session closes the interrupted run first (store/closeout.py): item completions for open items,
a `harness` item (`error_recovered`), `turn.failed` ("interrupted") when a turn was open and
`thread.completed{error_during_execution, interrupted}`. `sessions repair` does the same, and
the closing sequence is snapshot-tested (syrupy) and schema-validated.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.exec_support import (
    SCRIPTS,
    canonical_lines,
    canonical_snapshot,
    spawn_vtcode,
    vtcode,
    wait_for_path,
)

FAST = ["-c", "agent.task_retry_backoff_secs=0"]
KILL_SCRIPTS = ("demo", "scenario-tool-loop", "streaming-chunks", "scenario-multi-tools")
KILLS_PER_DURABILITY = 12  # x 2 durabilities = 24 kills in the suite


def _events_path(ws: Path, sid: str) -> Path:
    return ws / ".vtcode" / "sessions" / sid / "events.jsonl"


def _types(ws: Path, sid: str) -> list[str]:
    """Event types of the complete lines (a kill may leave a torn final fragment)."""
    whole = _events_path(ws, sid).read_bytes().split(b"\n")[:-1]
    return [json.loads(line)["event"]["type"] for line in whole]


def _kill_after(ws: Path, sid: str, script: str, shown: int, durability: str) -> int:
    """Run exec, SIGKILL it once stdout has shown `shown` events; returns the events seen."""
    for name in ("a.txt", "b.txt"):  # streaming-chunks reads them
        (ws / name).write_text(f"{name}\n")
    proc = spawn_vtcode(
        [
            *FAST,
            "-c",
            f'store.durability="{durability}"',
            "exec",
            "--json",
            "--session-id",
            sid,
            "--script",
            str(SCRIPTS / f"{script}.toml"),
            "do the task",
        ],
        ws,
    )
    assert proc.stdout is not None
    seen = 0
    try:
        while seen < shown:
            line = proc.stdout.readline()
            if not line:
                break
            seen += 1
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        proc.stdout.close()
        if proc.stderr is not None:
            proc.stderr.close()
    return seen


def _resume(ws: Path, sid: str) -> Any:
    return vtcode(
        [
            *FAST,
            "exec",
            "resume",
            sid,
            "--json",
            "--script",
            str(SCRIPTS / "scenario-success.toml"),
            "go on",
        ],
        ws,
    )


@pytest.mark.parametrize("durability", ["turn", "event"])
def test_sigkill_at_random_points_then_resume_validates_in_full(
    tmp_path: Path, durability: str
) -> None:
    rng = random.Random(f"resume-{durability}")
    logs: list[Path] = []
    closed = 0
    for n in range(KILLS_PER_DURABILITY):
        ws = tmp_path / f"w{n}"
        ws.mkdir()
        sid = f"kill-{n}"
        script = KILL_SCRIPTS[n % len(KILL_SCRIPTS)]
        _kill_after(ws, sid, script, rng.randint(1, 40), durability)
        before = _types(ws, sid)
        proc = _resume(ws, sid)
        assert proc.returncode == 0, proc.stderr
        after = _types(ws, sid)
        assert after[: len(before)] == before  # nothing the crash left is rewritten
        if before and before[-1] != "thread.completed":
            closed += 1
            tail = after[len(before) :]
            end = tail.index("thread.completed")
            assert tail[end + 1] == "thread.started"
            assert (
                "turn.failed" in tail[:end]
                if before.count("turn.started")
                > sum(before.count(t) for t in ("turn.completed", "turn.failed"))
                else "turn.failed" not in tail[:end]
            )
            recovered = canonical_lines(ws, sid)[len(before) + end]["event"]
            assert (recovered["subtype"], recovered["outcome_code"]) == (
                "error_during_execution",
                "interrupted",
            )
        assert after.count("thread.started") == after.count("thread.completed") == 2
        logs.append(_events_path(ws, sid))
    assert closed >= KILLS_PER_DURABILITY // 2  # most kills land inside the run
    check = vtcode(["validate", "--json", *map(str, logs)], tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    report = json.loads(check.stdout)
    assert report["totals"]["errors"] == 0 and report["totals"]["warnings"] == 0, report


def _kill_in_command(ws: Path, sid: str) -> None:
    """SIGKILL exec while its command runs (item open, turn open); end the orphan command."""
    started = ws / "started"
    script = ws / "hang.toml"
    script.write_text(
        "[[turn]]\n"
        'text = "Running a long command."\n'
        "usage = { input_tokens = 100, output_tokens = 10 }\n"
        "[[turn.tool_calls]]\n"
        'name = "exec_command"\n'
        'arguments = { command = "echo $$ > started.tmp && mv started.tmp started && exec sleep 60"'
        ", yield_time_ms = 60000 }\n"
    )
    proc = spawn_vtcode(
        [*FAST, "exec", "--json", "--session-id", sid, "--script", str(script), "go"], ws
    )
    try:
        wait_for_path(started, proc, "the command")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    child = int(started.read_text())
    with contextlib.suppress(ProcessLookupError):
        os.kill(child, signal.SIGKILL)  # the orphan `sleep` (its own process is ours to end)


def _closing(ws: Path, sid: str, first: int) -> list[dict[str, Any]]:
    """The normalised events from line `first` on, each checked against the schema."""
    return canonical_snapshot(ws, sid)[first:]


def test_resume_closes_an_open_turn_and_item(tmp_path: Path, snapshot_json: Any) -> None:
    _kill_in_command(tmp_path, "s")
    before = len(_types(tmp_path, "s"))
    assert _types(tmp_path, "s")[-1] != "thread.completed"
    proc = _resume(tmp_path, "s")
    assert proc.returncode == 0, proc.stderr
    # The resumed run's own events follow the closing; its first item id is fresh.
    lines = canonical_lines(tmp_path, "s")
    types = [e["event"]["type"] for e in lines]
    restart = types.index("thread.started", before)
    assert _closing(tmp_path, "s", before)[: restart - before] == snapshot_json(name="closing")
    earlier = {e["event"]["item"]["id"] for e in lines[:restart] if "item" in e["event"]}
    later = {e["event"]["item"]["id"] for e in lines[restart:] if "item" in e["event"]}
    assert later and not earlier & later  # no item id of the session is reused
    check = vtcode(["validate", str(_events_path(tmp_path, "s"))], tmp_path)
    assert check.returncode == 0 and "0 error(s), 0 warning(s)" in check.stdout, check.stdout


def test_sessions_repair_closes_a_killed_session(tmp_path: Path, snapshot_json: Any) -> None:
    _kill_in_command(tmp_path, "s")
    before = len(_types(tmp_path, "s"))
    proc = vtcode(["sessions", "repair", "s", "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["changed"] is True and report["closed_interrupted"] == 4
    assert _closing(tmp_path, "s", before) == snapshot_json(name="closing")
    check = vtcode(["validate", str(_events_path(tmp_path, "s"))], tmp_path)
    assert check.returncode == 0 and "0 error(s), 0 warning(s)" in check.stdout, check.stdout
    again = vtcode(["sessions", "repair", "s"], tmp_path)
    assert again.returncode == 0 and "nothing to repair" in again.stdout


def test_compact_of_a_killed_session_closes_the_run_first(tmp_path: Path) -> None:
    _kill_in_command(tmp_path, "s")
    proc = vtcode(["compact", "s"], tmp_path)
    assert proc.returncode in (0, 2), proc.stderr  # 0: compacted; 2: nothing to compact
    types = _types(tmp_path, "s")
    assert types.count("thread.completed") == 1
    check = vtcode(["validate", str(_events_path(tmp_path, "s"))], tmp_path)
    assert check.returncode == 0, check.stdout
