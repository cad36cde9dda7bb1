"""No leftovers: SIGKILL vtcode during a command that started a child and a `setsid` daemon.

The command (run by the real CLI through exec_command) starts a background child and a
`setsid` grandchild, each a `sleep` that first writes its pid (read from /proc/self/stat) and
says it has started. In the sandbox that pid is the PID namespace's own (the command has its own
/proc), so the test finds the sleepers' host pids among vtcode's descendants (the setsid daemon
too: it stays below the namespace's init). The test SIGKILLs vtcode, then checks each pid with
its start time, so a recycled pid cannot pass for a survivor. Also: the spool cap
(`tools.max_spool_bytes`) through the CLI.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.exec_support import SESSION, canonical_lines, spawn_vtcode, vtcode, wait_for_path
from vtcode.sandbox import FORCE_UNAVAILABLE_ENV, Sandbox
from vtcode.sandbox.reap import start_time

# Each sleeper writes its own host pid, then becomes `sleep` (same pid, `exec`).
_SLEEPER = (
    "read -r p rest < /proc/self/stat; echo $p > {name}.tmp; mv {name}.tmp {name}; exec sleep 1000"
)
COMMAND = (
    f"sh -c '{_SLEEPER.format(name='child.pid')}' & "
    f"setsid sh -c '{_SLEEPER.format(name='daemon.pid')}' & "
    "echo started; wait"
)


def _script(path: Path) -> Path:
    path.write_text(
        "[[turn]]\n"
        'text = "Starting."\n'
        "[[turn.tool_calls]]\n"
        'name = "exec_command"\n'
        f"arguments = {{ command = {json.dumps(COMMAND)}, yield_time_ms = 300000 }}\n"
        "\n[[turn]]\n"
        'text = "Done."\n'
    )
    return path


def _descendants(pid: int) -> list[int]:
    kids: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            for kid in (int(p) for p in (task / "children").read_text().split()):
                kids += [kid, *_descendants(kid)]
    except OSError:  # it exited meanwhile
        pass
    return kids


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _sleepers_below(pid: int) -> list[int]:
    """The two sleepers' host pids, once both have become `sleep` (bounded)."""
    deadline = time.monotonic() + 30
    while True:
        found = [p for p in _descendants(pid) if _comm(p) == "sleep"]
        if len(found) == 2 or time.monotonic() > deadline:
            return found
        time.sleep(0.02)  # the exec after the pid file has no fd to wait on


def _gone_within(pid: int, started: int, seconds: float) -> bool:
    """Whether the process (pid + start time) is gone, checked until a bound (it dies async)."""
    deadline = time.monotonic() + seconds
    while start_time(pid) == started:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)  # polling /proc: the death of an unrelated process has no fd to wait on
    return True


@pytest.fixture
def sleepers() -> Iterator[list[tuple[int, int]]]:
    """The (pid, start) of every sleeper a test saw; any still running is killed at teardown."""
    seen: list[tuple[int, int]] = []
    yield seen
    for pid, started in seen:
        if start_time(pid) == started:
            os.kill(pid, signal.SIGKILL)


def _start_and_kill(ws: Path, env: dict[str, str], seen: list[tuple[int, int]]) -> None:
    script = _script(ws / "script.toml")
    proc = spawn_vtcode(
        ["exec", "--session-id", SESSION, "--script", str(script), "go"], ws, env=env
    )
    try:
        for name in ("child.pid", "daemon.pid"):
            wait_for_path(ws / name, proc, name)
        written = [int((ws / name).read_text()) for name in ("child.pid", "daemon.pid")]
        host = written if FORCE_UNAVAILABLE_ENV in env else _sleepers_below(proc.pid)
        for pid in host:
            started = start_time(pid)
            assert started is not None
            seen.append((pid, started))
        assert len(seen) == 2
    finally:
        proc.kill()  # SIGKILL: no atexit, no close_all
        proc.communicate(timeout=60)


@pytest.mark.skipif(not Sandbox().available, reason="no Landlock + namespaces on this machine")
def test_sigkill_leaves_no_child_and_no_setsid_daemon(
    tmp_path: Path, sleepers: list[tuple[int, int]]
) -> None:
    _start_and_kill(tmp_path, {}, sleepers)
    survivors = [pid for pid, started in sleepers if not _gone_within(pid, started, 10)]
    assert survivors == []


def test_without_a_sandbox_the_next_run_reaps_the_group(
    tmp_path: Path, sleepers: list[tuple[int, int]]
) -> None:
    # Unsandboxed, the child stays in the command's process group and PDEATHSIG ends only the
    # shell: the recorded group is killed when the next run opens the workspace. (A `setsid`
    # daemon leaves the group; only the PID namespace contains it, see the test above.)
    env = {FORCE_UNAVAILABLE_ENV: "1"}
    _start_and_kill(tmp_path, env, sleepers)
    (child, child_start), _daemon = sleepers
    assert start_time(child) == child_start  # still running under init
    records = list((tmp_path / ".vtcode" / "context" / "procs").iterdir())
    assert len(records) == 1
    done = vtcode(
        ["exec", "--session-id", "second", "--script", "default", "hi"], tmp_path, env=env
    )
    assert done.returncode == 0, done.stderr
    assert _gone_within(child, child_start, 10)
    assert not records[0].exists()


def test_spool_cap_drops_the_rest_and_says_so(tmp_path: Path) -> None:
    script = tmp_path / "script.toml"
    script.write_text(
        "[[turn]]\n"
        'text = "Printing."\n'
        "[[turn.tool_calls]]\n"
        'name = "exec_command"\n'
        'arguments = { command = "seq 1 100000", yield_time_ms = 60000 }\n'
        "\n[[turn]]\n"
        'text = "Done."\n'
    )
    proc = vtcode(
        [
            "exec",
            "--session-id",
            SESSION,
            "--script",
            str(script),
            "-c",
            "tools.max_spool_bytes=4096",
            "go",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    total = sum(len(f"{i}\n") for i in range(1, 100_001))  # what seq prints
    outputs = [
        json.loads(e["event"]["item"]["output"])
        for e in canonical_lines(tmp_path)
        if e["event"]["type"] == "item.completed" and e["event"]["item"]["type"] == "tool_output"
    ]
    (out,) = outputs
    assert out["total_output_bytes"] == total
    assert out["spool_truncated"] is True
    assert out["spool_max_bytes"] == 4096
    assert out["spool_dropped_bytes"] == total - 4096
    spool = (tmp_path / out["spool_path"]).read_bytes()
    kept, note = spool[:4096], spool[4096:].decode()
    assert kept == b"".join(f"{i}\n".encode() for i in range(1, 100_001))[:4096]
    assert note == (
        f"\n[vtcode: spool truncated at 4096 bytes (tools.max_spool_bytes); "
        f"{total - 4096} more bytes of output were dropped]\n"
    )
