"""`vtcode loop run` through the real CLI: resume, budget, failures, busy lock, SIGKILL, cron."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from syrupy.assertion import SnapshotAssertion

from tests import forked_cli
from vtcode.jsontypes import decode
from vtcode.orient.models import LoopRunState
from vtcode.schemas import fast_validator


def vt(ws: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return forked_cli.run(["-q", *args], cwd=ws, env=env, text=True, timeout=timeout)


def run(ws: Path, *args: str, loop: str = "L") -> subprocess.CompletedProcess[str]:
    return vt(ws, "loop", "run", "--id", loop, *args)


def state(ws: Path, loop: str = "L") -> LoopRunState:
    return decode(LoopRunState, orjson.loads((ws / f".vtcode/state/loop-{loop}.json").read_bytes()))


def events(ws: Path, session: str) -> list[dict[str, Any]]:
    validator = fast_validator("versioned-thread-event")
    path = ws / ".vtcode/sessions" / session / "events.jsonl"
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        env = orjson.loads(line)
        assert validator.is_valid(env), f"{path}:{n}"
        out.append(env["event"])
    return out


def steps(st: LoopRunState) -> list[tuple[int, str]]:
    return [(s.index, s.status.value) for s in st.steps]


def test_steps_resume_across_invocations(tmp_path: Path, snapshot_json: SnapshotAssertion) -> None:
    r = run(tmp_path, "--steps", "2", "--script", "loop-step", "improve the docs")
    assert r.returncode == 0, r.stderr
    r = run(tmp_path, "--script", "loop-step")  # the prompt is stored
    assert r.returncode == 0, r.stderr
    st = state(tmp_path)
    assert (st.step_index, st.status.value, st.prompt) == (3, "running", "improve the docs")
    assert steps(st) == [(1, "done"), (2, "done"), (3, "done")]
    sessions = [s.session_id for s in st.steps]
    assert len(set(sessions)) == 3
    assert st.last_session_id == sessions[-1]
    assert st.last_artifact_path == str(tmp_path / ".vtcode/sessions" / sessions[-1])
    u = st.cumulative_tokens
    assert (u.input_tokens, u.output_tokens) == (3000, 300)
    assert u.total_cost_usd == pytest.approx(3 * (1000 * 3 + 100 * 15) / 1e6)
    assert st.version == 7  # create + (started, done) x 3
    # Each step is its own session whose run saw "step k" (the script checks the prompt).
    for k, sid in enumerate(sessions, 1):
        evs = events(tmp_path, sid)
        assert evs[-1]["type"] == "thread.completed" and evs[-1]["subtype"] == "success"
        transcript = (tmp_path / ".vtcode/sessions" / sid / "transcript.jsonl").read_text()
        assert f"improve the docs\\n\\nstep {k}" in transcript
    ids = {sid: f"<session-{k}>" for k, sid in enumerate(sessions, 1)}
    text = orjson.dumps(events(tmp_path, sessions[1])).decode()
    for sid, name in ids.items():
        text = text.replace(sid, name)
    assert orjson.loads(text) == snapshot_json
    r = vt(tmp_path, "loop", "status", "L", "--json")
    data = orjson.loads(r.stdout)
    assert (r.returncode, data["running_now"], data["budget_status"]) == (0, False, "ok")
    r = vt(tmp_path, "loop", "list", "--json")
    assert [d["loop_id"] for d in orjson.loads(r.stdout)["loops"]] == ["L"]


def test_second_step_orients_from_the_first(tmp_path: Path) -> None:
    assert run(tmp_path, "--script", "loop-step", "go").returncode == 0
    assert vt(tmp_path, "notes", "add", "step one found the bug in parse()").returncode == 0
    assert run(tmp_path, "--script", "loop-step").returncode == 0
    st = state(tmp_path)
    second = st.steps[1].session_id
    ledger = orjson.loads(
        (tmp_path / ".vtcode/sessions" / second / "derived/progress.json").read_bytes()
    )
    assert ledger["previous_session_id"] == st.steps[0].session_id
    assert ledger["goal"] == "go step 2"


def test_a_step_session_starts_from_the_orientation(tmp_path: Path) -> None:
    """In process: the system prompt of a real exec run carries `vtcode orient`'s section."""
    from vtcode.config.model import VtcodeConfig
    from vtcode.loop.parts import LoopHooks
    from vtcode.orient.context import gather_orientation
    from vtcode.orient.memory import MemoryKind, append_entry
    from vtcode.runtime.exec_run import ExecContext, ExecRequest, run_exec
    from vtcode.runtime.hooks import default_hooks_factory

    append_entry(tmp_path, MemoryKind.NOTES, "the parser lives in src/parse.py")
    expected = gather_orientation(tmp_path).to_prompt_section()
    seen: list[str | None] = []

    def factory(ctx: ExecContext) -> LoopHooks:
        hooks = default_hooks_factory(ctx)
        real = hooks.orientation

        def orientation() -> str | None:
            seen.append(real())
            return seen[-1]

        hooks.orientation = orientation  # type: ignore[method-assign]
        return hooks

    result = run_exec(
        ExecRequest(
            workspace=tmp_path,
            config=VtcodeConfig(),
            prompt="step 1",
            script="loop-step",
            hooks_factory=factory,
            install_signals=False,
        )
    )
    assert int(result.exit_code) == 0
    assert expected is not None and seen and seen[0] is not None
    assert seen[0].startswith(expected)  # the context layer may add its own sections after


def test_first_run_needs_a_prompt(tmp_path: Path) -> None:
    r = run(tmp_path, "--script", "loop-step")
    assert r.returncode == 2 and "needs a PROMPT" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / ".vtcode/state/loop-L.json").exists()
    r = run(tmp_path, "go", loop="../x")
    assert r.returncode == 2 and "invalid loop id" in r.stderr


def test_step_budget_stops_with_exit_4_and_can_be_raised(tmp_path: Path) -> None:
    assert (
        run(tmp_path, "--max-steps", "2", "--steps", "5", "--script", "loop-step", "p").returncode
        == 4
    )
    st = state(tmp_path)
    assert (st.step_index, st.status.value, st.last_outcome) == (2, "paused", "step_limit_reached")
    assert run(tmp_path, "--script", "loop-step").returncode == 4  # still over budget
    assert state(tmp_path).step_index == 2
    assert run(tmp_path, "--max-steps", "3", "--script", "loop-step").returncode == 0
    assert state(tmp_path).step_index == 3


def test_cost_and_token_budgets(tmp_path: Path) -> None:
    # One step costs $0.0045 and 1100 tokens.
    r = run(tmp_path, "--max-cost", "0.008", "--steps", "5", "--script", "loop-step", "p")
    st = state(tmp_path)
    assert (r.returncode, st.step_index, st.last_outcome) == (4, 2, "cost_limit_reached")
    r = run(
        tmp_path, "--max-tokens", "1100", "--steps", "5", "--script", "loop-step", "p", loop="T"
    )
    st = state(tmp_path, "T")
    assert (r.returncode, st.step_index, st.last_outcome) == (4, 1, "token_limit_reached")
    r = vt(tmp_path, "loop", "run", "--id", "T")  # without -q: says why it stopped
    assert r.returncode == 4 and "token_limit_reached" in r.stderr


def test_a_failed_step_exits_with_its_code_and_the_next_run_goes_on(tmp_path: Path) -> None:
    r = run(tmp_path, "--steps", "3", "--script", "fatal", "p")
    assert r.returncode == 1
    st = state(tmp_path)
    assert (st.step_index, st.status.value) == (1, "failed")
    assert steps(st) == [(1, "failed")]
    assert st.steps[0].outcome == "error_during_execution" and st.steps[0].exit_code == 1
    assert run(tmp_path, "--script", "loop-step").returncode == 0
    assert steps(state(tmp_path)) == [(1, "failed"), (2, "done")]


def test_a_step_that_cannot_start_is_retried(tmp_path: Path) -> None:
    r = run(tmp_path, "--script", "no-such-script", "p")
    assert r.returncode == 2 and "no-such-script" in r.stderr
    st = state(tmp_path)
    assert (st.step_index, st.status.value) == (0, "failed") and steps(st) == [(1, "error")]
    assert run(tmp_path, "--script", "loop-step").returncode == 0
    st = state(tmp_path)
    assert st.step_index == 1 and steps(st) == [(1, "error"), (1, "done")]


def test_completes_when_every_milestone_is_done(tmp_path: Path) -> None:
    tasks = tmp_path / ".vtcode/tasks"
    tasks.mkdir(parents=True)
    (tasks / "current_task.md").write_text("# Tasks\n\n- [ ] one\n- [ ] two\n")
    # The script ticks the list with `sed -i` through exec_command; `.vtcode/` is read-only to
    # sandboxed commands (issue 23), so only danger-full-access lets a command edit the tracker.
    r = run(
        tmp_path, "--steps", "5", "--script", "loop-task-tracker", "--sandbox",
        "danger-full-access", "finish the list",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    st = state(tmp_path)
    assert (st.step_index, st.status.value) == (2, "completed")
    r = run(tmp_path, "--script", "loop-task-tracker")
    assert r.returncode == 0 and state(tmp_path).version == st.version
    assert len(list((tmp_path / ".vtcode/sessions").glob("session-*"))) == 2


HOLDER = """
import sys
from pathlib import Path
from vtcode.orient.loop_state import loop_lock
with loop_lock(Path(sys.argv[1]), "L"):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_busy_loop_exits_75_at_once_and_changes_nothing(tmp_path: Path) -> None:
    assert run(tmp_path, "--script", "loop-step", "p").returncode == 0
    before = (tmp_path / ".vtcode/state/loop-L.json").read_bytes()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        started = time.monotonic()
        r = run(tmp_path, "--script", "loop-step")
        assert r.returncode == 75 and "in use" in r.stderr
        assert time.monotonic() - started < 10
        assert vt(tmp_path, "loop", "reset", "L").returncode == 75
        status = orjson.loads(vt(tmp_path, "loop", "status", "--json").stdout)
        assert status["running_now"] is True
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    assert (tmp_path / ".vtcode/state/loop-L.json").read_bytes() == before


def test_reset_starts_over(tmp_path: Path) -> None:
    assert run(tmp_path, "--script", "loop-step", "p").returncode == 0
    assert vt(tmp_path, "loop", "reset", "L").returncode == 0
    assert vt(tmp_path, "loop", "status", "L").returncode == 2
    assert vt(tmp_path, "loop", "reset", "L").returncode == 2
    r = run(tmp_path, "--json", "--script", "loop-step", "again")
    assert r.returncode == 0
    report = orjson.loads(r.stdout)
    assert report["exit_code"] == 0 and report["state"] == orjson.loads(
        (tmp_path / ".vtcode/state/loop-L.json").read_bytes()
    )
    assert [s["index"] for s in report["steps_run"]] == [1]
    assert state(tmp_path).step_index == 1


def _wait_for(path: Path, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, "loop run exited before the step started its command"
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def _kill_job(ws: Path) -> None:
    """Kill the orphaned `sleep` of a killed step (its pid is in the `job.pid` file)."""
    pid_file = ws / "job.pid"
    if pid_file.exists():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


def test_sigkill_mid_step_is_resumed_as_a_new_session(tmp_path: Path) -> None:
    proc = forked_cli.popen(
        ["-q", "loop", "run", "--id", "L", "--script", "loop-slow-step", "long work"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_for(tmp_path / "job.pid", proc)
        killed = state(tmp_path)
        assert steps(killed) == [(1, "started")] and killed.status.value == "running"
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        _kill_job(tmp_path)
    first = killed.steps[0].session_id
    assert state(tmp_path).version == killed.version  # nothing was written after the kill
    r = run(tmp_path, "--script", "loop-step")
    assert r.returncode == 0, r.stderr
    st = state(tmp_path)
    assert steps(st) == [(1, "interrupted"), (1, "done")]
    assert st.steps[0].session_id == first and st.steps[1].session_id != first
    assert st.step_index == 1
    assert (tmp_path / ".vtcode/sessions" / first / "events.jsonl").exists()
    r = vt(tmp_path, "-q", "loop", "run", "--id", "L", "--script", "loop-step")
    assert r.returncode == 0 and steps(state(tmp_path))[-1] == (2, "done")


def test_sigterm_mid_step_cancels_it_and_pauses_the_loop(tmp_path: Path) -> None:
    proc = forked_cli.popen(
        ["-q", "loop", "run", "--id", "L", "--script", "loop-slow-step", "long work"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_for(tmp_path / "job.pid", proc)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        _kill_job(tmp_path)
    st = state(tmp_path)
    assert (st.status.value, st.step_index, steps(st)) == ("paused", 1, [(1, "failed")])
    assert st.steps[0].outcome == "cancelled" and st.steps[0].exit_code == 130


CRON = """
for i in 1 2; do
  "$PY" -m vtcode -q loop run --id C --script loop-step "cron work" >/dev/null 2>&1
  echo "rc=$?" >> "rcs-$1"
done
"""

READER = """
import sys, time, orjson
from pathlib import Path
from vtcode.jsontypes import decode
from vtcode.orient.models import LoopRunState
path, stop = Path(sys.argv[1]), Path(sys.argv[2])
reads = bad = 0
versions = []
while not stop.exists():
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        time.sleep(0.001)
        continue
    try:
        versions.append(decode(LoopRunState, orjson.loads(data)).version)
        reads += 1
    except Exception:
        bad += 1
    time.sleep(0.001)  # poll politely: the writers share two cores with this reader
print(reads, bad, int(versions == sorted(versions)))
"""


def test_eight_cron_processes_never_lose_or_double_a_step(tmp_path: Path) -> None:
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(tmp_path / ".vtcode/state/loop-C.json"),
         str(tmp_path / "stop")],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    env = {**os.environ, "PY": sys.executable, "NO_COLOR": "1"}
    shells = [
        subprocess.Popen(["bash", "-c", CRON, "cron", str(w)], cwd=tmp_path, env=env)
        for w in range(8)
    ]
    try:
        assert [s.wait(timeout=300) for s in shells] == [0] * 8
    finally:
        (tmp_path / "stop").write_text("")
        out, _ = reader.communicate(timeout=60)
    reads, bad, monotonic = map(int, out.split())
    assert bad == 0 and reads > 0 and monotonic == 1
    rcs = [line for w in range(8) for line in (tmp_path / f"rcs-{w}").read_text().split()]
    assert len(rcs) == 16 and set(rcs) <= {"rc=0", "rc=75"}
    ran = rcs.count("rc=0")
    st = state(tmp_path, "C")
    assert ran >= 1 and st.step_index == ran
    assert steps(st) == [(k, "done") for k in range(1, ran + 1)]
    sessions = {s.session_id for s in st.steps}
    on_disk = {p.name for p in (tmp_path / ".vtcode/sessions").glob("session-*")}
    assert sessions == on_disk and len(sessions) == ran
