"""Red team of the fast validator, part 2: hostile input through the real CLI (see
test_validate_redteam.py for the screen and the split). No traceback, no hang, no orphan process
and bounded memory: signals during a split, the path swapped between open and fork, an endless
stdin line, a FIFO, a growing file, a directory.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from exec_support import process_running, vtcode
from test_validate_redteam import END, START, TURN, needs_split

# --- 3. hostile input through the CLI -------------------------------------------------------


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _wait(what: str, cond: Any, timeout: float = 30) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := cond()):
        assert time.monotonic() < deadline, what
        time.sleep(0.005)
    return value


def _slow_second_half(path: Path, slow_lines: int = 9000) -> None:
    """A small file whose split child has seconds of work (lines that need the explaining
    validator) while the first half is quick."""
    good = b"".join(
        b'{"type":"item.completed","item":{"id":"g%d","type":"agent_message","text":"%s"}}\n'
        % (i, b"x" * 2500)
        for i in range(600)
    )
    bad = (
        b'{"type":"item.completed","item":{"id":"b","type":"tool_invocation","tool_name":"t",'
        b'"status":"nope"}}\n'
    )
    path.write_bytes(START + good + b'{"type":"turn.started"}\n' + bad * slow_lines)


def _spawn_split(path: Path) -> tuple[subprocess.Popen[bytes], int]:
    """`vtcode validate --jobs 2 PATH` in its own process group; returns it and its child."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vtcode",
            "validate",
            "--profile",
            "vtcode",
            "--jobs",
            "2",
            "--max-problems",
            "3",
            str(path),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env={**os.environ, "NO_COLOR": "1"},
    )
    child = _wait("the split child never started", lambda: _children(proc.pid))[0]
    return proc, child


def _waiting_for_child(pid: int) -> bool:
    """The parent is done with its half and blocked reading the child's pipe."""
    try:
        wchan = Path(f"/proc/{pid}/wchan").read_text()
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state == "S" and ("pipe" in wchan or wchan in ("", "0"))


def _reap(proc: subprocess.Popen[bytes], child: int) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait(timeout=30)
    if process_running(child):
        os.kill(child, signal.SIGKILL)


@needs_split
def test_ctrl_c_during_a_split_stops_both_processes(tmp_path: Path) -> None:
    """Ctrl-C signals the whole foreground group: the parent exits 130, the child is gone."""
    log = tmp_path / "slow.jsonl"
    _slow_second_half(log)
    proc, child = _spawn_split(log)
    try:
        _wait("parent never waited for the child", lambda: _waiting_for_child(proc.pid))
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=30) == 130
        assert b"Traceback" not in proc.stderr.read()  # type: ignore[union-attr]
        _wait("the split child outlived the interrupted run", lambda: not process_running(child), 5)
    finally:
        _reap(proc, child)


@needs_split
def test_sigint_to_the_parent_during_its_own_half_kills_the_child(tmp_path: Path) -> None:
    """Both halves slow: the interrupt lands in the parent's scan, which SIGKILLs the child."""
    bad = (
        b'{"type":"item.completed","item":{"id":"b","type":"tool_invocation","tool_name":"t",'
        b'"status":"nope"}}\n'
    )
    log = tmp_path / "slow.jsonl"
    log.write_bytes(START + bad * 6000 + b'{"type":"turn.started"}\n' + bad * 5000)
    proc, child = _spawn_split(log)
    try:
        os.kill(proc.pid, signal.SIGINT)
        sent = time.monotonic()
        assert proc.wait(timeout=30) == 130
        assert time.monotonic() - sent < 1.5
        _wait("the split child outlived the interrupted run", lambda: not process_running(child), 5)
    finally:
        _reap(proc, child)


@needs_split
def test_sigint_to_the_parent_waiting_for_its_child_exits_promptly(tmp_path: Path) -> None:
    log = tmp_path / "slow.jsonl"
    _slow_second_half(log)
    proc, child = _spawn_split(log)
    try:
        _wait("parent never waited for the child", lambda: _waiting_for_child(proc.pid))
        os.kill(proc.pid, signal.SIGINT)
        sent = time.monotonic()
        assert proc.wait(timeout=60) == 130
        assert time.monotonic() - sent < 1.5
        assert not process_running(child)
    finally:
        _reap(proc, child)


@needs_split
def test_sigterm_during_a_split_leaves_no_orphan(tmp_path: Path) -> None:
    log = tmp_path / "slow.jsonl"
    _slow_second_half(log)
    proc, child = _spawn_split(log)
    try:
        _wait("parent never waited for the child", lambda: _waiting_for_child(proc.pid))
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        _wait("the split child outlived its parent", lambda: not process_running(child), 1.0)
    finally:
        _reap(proc, child)


_SWAP = """
import os, sys
from pathlib import Path
import vtcode.validate.split as split
from vtcode.validate import Profile, ValidateOptions, validate_path

log, other = Path(sys.argv[1]), Path(sys.argv[2])
fork = split._fork_second_half

def swap_then_fork(*args):  # another file takes the path between open and fork
    os.replace(other, log)
    return fork(*args)

split._fork_second_half = swap_then_fork
report = validate_path(log, ValidateOptions(profile=Profile.VTCODE), jobs=2)
print(report.status.value, report.lines)
"""


def _run_swap(tmp_path: Path, make_other: Any) -> subprocess.Popen[str]:
    log = tmp_path / "log.jsonl"
    log.write_bytes(START + TURN * 40 + END)
    other = tmp_path / "other"
    make_other(other)
    proc = subprocess.Popen(
        [sys.executable, "-c", _SWAP, str(log), str(other)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return proc


@needs_split
def test_path_swapped_for_another_file_between_open_and_fork(tmp_path: Path) -> None:
    """The child reads the opened file through its descriptor: the report is that file's."""
    proc = _run_swap(tmp_path, lambda p: p.write_bytes(b"garbage\n" * 5))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.split() == ["valid", "82"]


@needs_split
def test_path_swapped_for_a_fifo_between_open_and_fork_does_not_hang(tmp_path: Path) -> None:
    proc = _run_swap(tmp_path, os.mkfifo)
    children: list[int] = []
    try:
        deadline = time.monotonic() + 8
        while proc.poll() is None and time.monotonic() < deadline:
            children = _children(proc.pid) or children
            time.sleep(0.01)
        assert proc.poll() == 0
    finally:
        if proc.poll() is None:
            children = _children(proc.pid) or children
            proc.kill()
            proc.wait(timeout=30)
        for pid in children:
            if process_running(pid):
                os.kill(pid, signal.SIGKILL)


def _rss_peak_kb(pid: int) -> int:
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith("VmHWM:"):
            return int(row.split()[1])
    raise AssertionError("no VmHWM")


def _bytes_read(pid: int) -> int:
    for row in Path(f"/proc/{pid}/io").read_text().splitlines():
        if row.startswith("rchar:"):
            return int(row.split()[1])
    return 0


@pytest.mark.parametrize(
    ("chunk", "early_mib", "late_mib"),
    [(b"x" * 65536, 32, 320), (b"y" * 4095 + b"\n", 8, 64)],
    ids=["one-endless-line", "endless-garbage-lines"],
)
def test_an_endless_stdin_keeps_memory_flat_and_stops_on_ctrl_c(
    chunk: bytes, early_mib: int, late_mib: int
) -> None:
    writer = subprocess.Popen(
        [sys.executable, "-c", f"import sys\nb={chunk!r}\nwhile True: sys.stdout.buffer.write(b)"],
        stdout=subprocess.PIPE,
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vtcode",
            "validate",
            "--profile",
            "vtcode",
            "--max-line-bytes",
            "1048576",
            "-",
        ],
        stdin=writer.stdout,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert writer.stdout is not None
    writer.stdout.close()
    try:
        _wait("validate never read the start", lambda: _bytes_read(proc.pid) > early_mib << 20)
        early = _rss_peak_kb(proc.pid)
        _wait("validate never read on", lambda: _bytes_read(proc.pid) > late_mib << 20, 60)
        late = _rss_peak_kb(proc.pid)
        assert late - early < 8 * 1024, (early, late)  # flat: no growth with the stream
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 130
        assert b"Traceback" not in proc.stderr.read()  # type: ignore[union-attr]
    finally:
        for p in (proc, writer):
            if p.poll() is None:
                p.kill()
                p.wait(timeout=30)


def test_jobs_2_on_a_fifo_a_directory_and_a_missing_file(tmp_path: Path) -> None:
    fifo = tmp_path / "events.fifo"
    os.mkfifo(fifo)
    (tmp_path / "dir").mkdir()

    def write() -> None:
        with fifo.open("wb") as f:
            f.write(START + TURN + END)

    t = threading.Thread(target=write)
    t.start()
    out = vtcode(
        ["validate", "--profile", "vtcode", "--json", "--jobs", "2", str(fifo), "dir", "missing"],
        tmp_path,
    )
    t.join(timeout=30)
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    files = orjson.loads(out.stdout)["files"]
    assert [(f["status"], f["lines"]) for f in files[:1]] == [("valid", 4)]
    assert [f["problems"][0]["message"] for f in files[1:]] == [
        "is a directory, not a log file",
        "no such file",
    ]


@needs_split
def test_jobs_2_on_a_log_that_grows_while_it_is_validated(tmp_path: Path) -> None:
    log = tmp_path / "live.jsonl"
    _slow_second_half(log, slow_lines=300)
    lines_before = log.read_bytes().count(b"\n")
    stop = threading.Event()
    appended = 0

    def append() -> None:
        nonlocal appended
        fd = os.open(log, os.O_WRONLY | os.O_APPEND)
        try:
            while not stop.is_set() and appended < 20_000:
                os.write(
                    fd,
                    b'{"type":"item.completed","item":{"id":"n%d","type":"agent_message",'
                    b'"text":"x"}}\n' % appended,
                )
                appended += 1
        finally:
            os.close(fd)

    t = threading.Thread(target=append)
    t.start()
    try:
        out = vtcode(
            ["validate", "--profile", "vtcode", "--json", "--partial", "--jobs", "2", str(log)],
            tmp_path,
        )
    finally:
        stop.set()
        t.join(timeout=30)
    assert "Traceback" not in out.stderr and out.returncode == 1, out.stderr
    report = orjson.loads(out.stdout)["files"][0]
    assert lines_before <= report["lines"] <= lines_before + appended
    allowed = {"bad-value", "item-after-completed", "torn-line", "missing-newline"}
    assert {p["code"] for p in report["problems"]} <= allowed
