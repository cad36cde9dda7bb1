"""An eval SIGKILLed midway resumes where it stopped: only the missing runs run again, and the
final document has the shape of an uninterrupted one."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

from tests.eval.support import replay_task
from tests.exec_support import spawn_vtcode, vtcode

SLOWISH = """
[[turn]]
delay_ms = 400
text = "Writing it."
usage = { input_tokens = 1000, output_tokens = 20 }
[[turn.tool_calls]]
name = "exec_command"
arguments = { command = "echo hello > hello.txt" }
[[turn]]
text = "Done."
usage = { input_tokens = 1100, output_tokens = 5 }
"""


def _records(runs: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(runs.glob("*.json"))}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_sigkill_midway_then_resume_runs_only_the_missing(tmp_path: Path) -> None:
    for i in range(4):
        replay_task(tmp_path / "suite", f"task-{i}", SLOWISH)
    proc = spawn_vtcode(["eval", "suite", "-k", "2", "--id", "killed"], tmp_path)
    runs = tmp_path / ".vtcode" / "evals" / "killed" / "runs"
    deadline = time.monotonic() + 90
    children: list[int] = []
    while len(list(runs.glob("*.json"))) < 3 or not children:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else "exited early"
        assert time.monotonic() < deadline, "no three results and a running agent in 90 s"
        time.sleep(0.02)
        children = _agents()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    kept = _records(runs)
    assert 3 <= len(kept) < 8
    # The agent that was running dies with the eval (parent-death signal): no orphan remains.
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in children)

    done = vtcode(["eval", "--resume", "killed", "--json"], tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    after = _records(runs)
    assert len(after) == 8 and doc["complete"]
    assert {k: after[k] for k in kept} == kept  # finished runs were not run again
    assert f"[{len(kept) + 1}/8]" in done.stderr and "[1/8]" not in done.stderr
    assert all(r["passed"] for r in doc["runs"])
    assert [(r["task_id"], r["repetition"]) for r in doc["runs"]] == [
        (f"task-{i}", rep) for i in range(4) for rep in range(2)
    ]
    # Every kept run folder is whole: a workspace with its session.
    for r in doc["runs"]:
        assert Path(r["log"]).is_file()
    assert sorted(p.name for p in runs.iterdir() if p.is_dir()) == sorted(
        k.removesuffix(".json") for k in after
    )


def _agents(eval_dir: bytes = b"/killed-") -> list[int]:
    """pids of running `vtcode exec --session-id eval-vtcode--task-...` children of an eval
    whose temp folder name contains `eval_dir`."""
    return [
        int(p.name)
        for p in Path("/proc").iterdir()
        if p.name.isdigit() and b"eval-vtcode--task-" in (line := _cmdline(p)) and eval_dir in line
    ]


def _cmdline(proc_dir: Path) -> bytes:
    try:
        return (proc_dir / "cmdline").read_bytes()
    except OSError:
        return b""


SLOW_TURN = """
[[turn]]
delay_ms = 30000
text = "too late"
"""


def test_sigint_stops_at_once_records_nothing_half_done_and_resume_finishes(
    tmp_path: Path,
) -> None:
    replay_task(tmp_path / "suite", "task-slow", SLOW_TURN)
    proc = spawn_vtcode(["eval", "suite", "--id", "stopped"], tmp_path)
    deadline = time.monotonic() + 60
    while not _agents(b"/stopped-"):
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else "exited early"
        assert time.monotonic() < deadline, "the agent never started"
        time.sleep(0.02)
    started = time.monotonic()
    os.kill(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=30) == 130
    assert time.monotonic() - started < 15  # not the 30 s the model would take
    runs = tmp_path / ".vtcode" / "evals" / "stopped" / "runs"
    assert _records(runs) == {}  # the killed run is no result: it runs again on resume
    deadline = time.monotonic() + 10
    while _agents(b"/stopped-") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _agents(b"/stopped-") == []


def test_a_damaged_record_runs_again_and_a_held_lock_is_exit_75(tmp_path: Path) -> None:
    from filelock import FileLock

    for i in range(2):
        replay_task(tmp_path / "suite", f"task-{i}", SLOWISH.replace("delay_ms = 400", ""))
    first = vtcode(["eval", "suite", "--id", "torn", "--json"], tmp_path)
    assert first.returncode == 0, first.stderr
    runs = tmp_path / ".vtcode" / "evals" / "torn" / "runs"
    good = (runs / "vtcode--task-1--0.json").read_bytes()
    torn = runs / "vtcode--task-0--0.json"
    torn.write_bytes(torn.read_bytes()[:40])  # a record cut short (a disk that lied)
    again = vtcode(["eval", "--resume", "torn", "--json"], tmp_path)
    assert again.returncode == 0, again.stderr
    assert "[2/2] vtcode--task-0--0: pass" in again.stderr and "[1/2]" not in again.stderr
    assert (runs / "vtcode--task-1--0.json").read_bytes() == good
    assert json.loads(torn.read_bytes())["passed"]
    with FileLock(str(runs.parent / "lock")):
        busy = vtcode(["eval", "--resume", "torn"], tmp_path)
    assert busy.returncode == 75 and "running in another process" in busy.stderr


def test_sigterm_is_an_interrupt_too(tmp_path: Path) -> None:
    replay_task(tmp_path / "suite", "task-slow", SLOW_TURN)
    proc = spawn_vtcode(["eval", "suite", "--id", "termed", "--jobs", "2", "-k", "3"], tmp_path)
    deadline = time.monotonic() + 60
    while len(_agents(b"/termed-")) < 2:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else "exited early"
        assert time.monotonic() < deadline, "the agents never started"
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=30) == 130
    assert _records(tmp_path / ".vtcode" / "evals" / "termed" / "runs") == {}
    deadline = time.monotonic() + 10
    while _agents(b"/termed-") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _agents(b"/termed-") == []
