"""exec_command / write_stdin against real processes: output, spool, waits, stdin, shutdown.

Synchronisation is always on a real signal (output text, a file the test creates, process exit)
with a bounded timeout; the `sleep`s below run inside the child commands, never in the test.
"""

from __future__ import annotations

import os
import signal
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from syrupy.assertion import SnapshotAssertion

from vtcode.sandbox import FORCE_UNAVAILABLE_ENV
from vtcode.tools.base import ToolContext, ToolError, ToolResult
from vtcode.tools.exec_sessions import (
    SPOOLED_PREVIEW_CAP,
    TRUNCATION_MARKER,
    ExecSessionManager,
    Preview,
    build_preview,
    group_alive,
    is_inspection_command,
)
from vtcode.tools.registry import ToolRegistry, default_registry

# A command that ticks until the test creates `release`, then exits 0.
TICKER = "i=0; while [ ! -e release ]; do i=$((i+1)); echo tick $i; sleep 0.05; done; echo done"


def pid_alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie (PID 1 here may not reap orphans)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return text[text.rfind(")") + 2 :].split()[0] not in ("Z", "X")


def exec_(reg: ToolRegistry, ctx: ToolContext, **args: Any) -> dict[str, Any]:
    res = reg.run("exec_command", args, ctx)
    assert res.data is not None
    assert orjson.loads(res.output) == res.data  # the model sees exactly the response JSON
    return res.data


def stdin_(reg: ToolRegistry, ctx: ToolContext, **args: Any) -> ToolResult:
    return reg.run("write_stdin", args, ctx)


def poll_until(
    reg: ToolRegistry,
    ctx: ToolContext,
    sid: str,
    done: Callable[[str, dict[str, Any]], bool],
    timeout: float = 10.0,
    initial: str = "",
) -> tuple[str, dict[str, Any]]:
    """Poll a session until `done(accumulated_output, last_response)`; fail after `timeout`.

    `initial` is what the starting call already returned: output is handed out once, so
    anything the first response carried is not seen again by a poll.
    """
    seen = initial
    deadline = time.monotonic() + timeout
    while True:
        data = stdin_(reg, ctx, session_id=sid, chars="", yield_time_ms=100).data
        assert data is not None
        seen += data["output"]
        if done(seen, data):
            return seen, data
        assert time.monotonic() < deadline, f"timed out; output so far: {seen[-500:]!r}"


@pytest.fixture
def reg() -> Iterator[ToolRegistry]:
    registry = default_registry()
    yield registry
    registry.close()
    assert registry.exec_sessions is not None
    for s in registry.exec_sessions.sessions():
        assert not group_alive(s.pgid), f"process group of {s.session_id} survived close()"


def test_fast_command_returns_on_exit_with_merged_output(
    reg: ToolRegistry, tool_ctx: ToolContext
) -> None:
    started = time.monotonic()
    data = exec_(reg, tool_ctx, command="echo out; echo err >&2; exit 3", yield_time_ms=20_000)
    assert time.monotonic() - started < 10  # returned on exit, not after the 20 s yield
    assert data["output"] == "out\nerr\n"
    assert data["is_exited"] is True and data["exit_code"] == 3
    assert "process_id" not in data and "next_wait_args" not in data and "truncated" not in data
    assert data["session_id"] == "run-1" and data["backend"] == "pipe"
    assert data["working_directory"] == "." and data["command"].startswith("echo out")
    assert data["total_output_bytes"] == 8 and data["output_truncated"] is False
    assert "spool_path" not in data and "output_spooled" not in data
    res = reg.run("exec_command", {"command": "exit 3"}, tool_ctx)
    assert res.success is False and res.exit_code == 3


def test_argv_list_runs_without_a_shell(reg: ToolRegistry, tool_ctx: ToolContext) -> None:
    data = exec_(reg, tool_ctx, command=["printf", "%s|", "a b", "$HOME"])
    assert data["output"] == "a b|$HOME|"
    assert data["command"] == "printf '%s|' 'a b' '$HOME'"
    with pytest.raises(ToolError, match="command not found"):
        exec_(reg, tool_ctx, command=["definitely-not-a-command-xyz"])


def test_ansi_sequences_are_stripped(reg: ToolRegistry, tool_ctx: ToolContext) -> None:
    data = exec_(reg, tool_ctx, command=r"printf '\033[31mred\033[0m \033]0;title\007plain\n'")
    assert data["output"] == "red plain\n"


def test_signal_exit_code_is_128_plus_signal(reg: ToolRegistry, tool_ctx: ToolContext) -> None:
    data = exec_(reg, tool_ctx, command=["sh", "-c", "kill -9 $$"])
    assert data["exit_code"] == 128 + signal.SIGKILL


def test_workdir_is_confined_to_the_workspace(reg: ToolRegistry, tool_ctx: ToolContext) -> None:
    (tool_ctx.workspace / "sub").mkdir()
    data = exec_(reg, tool_ctx, command=["pwd"], workdir="sub")
    assert data["working_directory"] == "sub"
    assert data["output"].strip() == str((tool_ctx.workspace / "sub").resolve())
    for bad in ("..", "/tmp", "sub/../.."):
        with pytest.raises(ToolError, match="outside the workspace"):
            exec_(reg, tool_ctx, command="true", workdir=bad)


def test_large_output_is_truncated_and_spooled_completely(
    reg: ToolRegistry, tool_ctx: ToolContext
) -> None:
    expected = "".join(f"{i}\n" for i in range(1, 200_001)).encode()
    data = exec_(reg, tool_ctx, command="seq 1 200000", yield_time_ms=30_000)
    assert data["is_exited"] and data["exit_code"] == 0
    assert data["total_output_bytes"] == len(expected)
    assert data["truncated"] is True and data["output_truncated"] is True
    # spooled previews are capped at 6 KiB (plus the short markers); a non-inspection
    # command keeps the tail, where errors would be
    out = data["output"]
    assert len(out.encode()) <= SPOOLED_PREVIEW_CAP + 200
    assert out.endswith("199999\n200000\n" + TRUNCATION_MARKER)
    assert "\n1\n2\n" not in out
    assert data["output_spooled"] is True and data["spool_complete"] is True
    rel = data["spool_path"]
    assert rel == ".vtcode/context/tool_outputs/run-1.txt"
    spool = tool_ctx.workspace / rel
    assert spool.read_bytes() == expected
    assert stat.S_IMODE(spool.stat().st_mode) == 0o600
    assert stat.S_IMODE(spool.parent.stat().st_mode) == 0o700


def test_inspection_commands_keep_head_and_tail(reg: ToolRegistry, tool_ctx: ToolContext) -> None:
    big = tool_ctx.workspace / "big.txt"
    big.write_text("".join(f"line {i}\n" for i in range(1, 50_001)))
    data = exec_(reg, tool_ctx, command="cat big.txt", max_output_tokens=500, yield_time_ms=30_000)
    out = data["output"]
    assert out.startswith("line 1\nline 2\n")
    assert "line 50000\n" in out and out.endswith(TRUNCATION_MARKER)
    assert len(out.encode()) <= 500 * 4 + 200  # min(budget, 6 KiB) = the 2000-byte budget
    assert (tool_ctx.workspace / data["spool_path"]).read_bytes() == big.read_bytes()


def test_small_output_over_budget_is_spooled_too(reg: ToolRegistry, tool_ctx: ToolContext) -> None:
    data = exec_(reg, tool_ctx, command="seq 1 100", max_output_tokens=10)
    assert data["truncated"] is True and data["total_output_bytes"] == 292
    assert data["spool_complete"] is True
    spooled = (tool_ctx.workspace / data["spool_path"]).read_text()
    assert spooled == "".join(f"{i}\n" for i in range(1, 101))


def test_without_spooling_output_is_cut_at_the_budget(tool_ctx: ToolContext) -> None:
    registry = default_registry(exec_sessions=ExecSessionManager(spool_enabled=False))
    try:
        data = exec_(registry, tool_ctx, command="seq 1 1000", max_output_tokens=5)
    finally:
        registry.close()
    assert data["output"] == "1\n2\n3\n4\n5\n6\n7\n8\n9\n10" + TRUNCATION_MARKER  # 20 bytes
    assert data["truncated"] is True and "spool_path" not in data
    assert not (tool_ctx.workspace / ".vtcode").exists()


def test_wait_with_short_deadline_then_wait_until_exit(
    reg: ToolRegistry, tool_ctx: ToolContext
) -> None:
    first = exec_(reg, tool_ctx, command=TICKER, yield_time_ms=100)
    sid = first["session_id"]
    assert first["is_exited"] is False
    pid = first["process_id"]
    assert first["next_wait_args"] == {
        "session_id": sid,
        "action": "wait",
        "wait_timeout_seconds": 600,
    }
    assert reg.validate("write_stdin", first["next_wait_args"])
    assert reg.validate("write_stdin", first["next_continue_args"])
    assert sid in first["next_action_hint"]

    res = stdin_(reg, tool_ctx, session_id=sid, action="wait", wait_timeout_seconds=1)
    w1 = res.data
    assert w1 is not None
    assert w1["is_exited"] is False and w1["session_id"] == sid and w1["process_id"] == pid
    assert w1["wait_deadline_seconds"] == 1
    assert 0.9 <= w1["waited_seconds"] < 5 and res.wait_seconds == w1["waited_seconds"]
    assert "tick" in w1["output"]
    assert pid_alive(pid)  # the deadline did not kill it

    (tool_ctx.workspace / "release").touch()
    res = stdin_(reg, tool_ctx, session_id=sid, action="wait", timeout_seconds=60)
    w2 = res.data
    assert w2 is not None
    assert w2["is_exited"] is True and w2["exit_code"] == 0 and w2["session_id"] == sid
    assert w2["output"].endswith("done\n")
    assert w2["wait_deadline_seconds"] == 60 and w2["waited_seconds"] < 30
    assert "next_wait_args" not in w2
    assert res.wait_seconds > 0


def test_wait_deadline_is_capped_by_the_ceiling(reg: ToolRegistry, tool_ctx: ToolContext) -> None:
    tool_ctx.long_running_ceiling_secs = 1.0
    sid = exec_(reg, tool_ctx, command=TICKER, yield_time_ms=0)["session_id"]
    data = stdin_(reg, tool_ctx, session_id=sid, action="wait", wait_timeout_seconds=600).data
    assert data is not None
    assert data["wait_deadline_seconds"] == 1 and data["is_exited"] is False
    assert data["waited_seconds"] < 5


def test_interactive_stdin_with_cat(reg: ToolRegistry, tool_ctx: ToolContext) -> None:
    sid = exec_(reg, tool_ctx, command="cat", yield_time_ms=0)["session_id"]
    wrote = stdin_(reg, tool_ctx, session_id=sid, chars="hello\n", yield_time_ms=0).data
    assert wrote is not None
    seen, _ = poll_until(
        reg, tool_ctx, sid, lambda out, _d: "hello\n" in out, initial=wrote["output"]
    )
    assert seen == "hello\n"
    # a trailing Ctrl-D closes stdin, so cat exits
    stdin_(reg, tool_ctx, session_id=sid, chars="bye\x04", yield_time_ms=0)
    done = stdin_(reg, tool_ctx, session_id=sid, action="wait", wait_timeout_seconds=30).data
    assert done is not None
    assert done["is_exited"] is True and done["exit_code"] == 0
    with pytest.raises(ToolError, match="has exited"):
        stdin_(reg, tool_ctx, session_id=sid, chars="more\n")


def test_interactive_read_in_a_shell(reg: ToolRegistry, tool_ctx: ToolContext) -> None:
    first = exec_(reg, tool_ctx, command='read -r name; echo "hi $name"', yield_time_ms=50)
    assert first["is_exited"] is False
    sid = first["session_id"]
    data = stdin_(reg, tool_ctx, session_id=sid, action="wait", chars="bob\n").data
    assert data is not None
    assert data["output"] == "hi bob\n" and data["exit_code"] == 0


def test_unknown_session_is_a_clear_error(reg: ToolRegistry, tool_ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="unknown exec session 'run-99'"):
        stdin_(reg, tool_ctx, session_id="run-99", action="wait")


def test_cancellation_ends_a_wait_promptly_without_killing(
    reg: ToolRegistry, tool_ctx: ToolContext
) -> None:
    first = exec_(reg, tool_ctx, command=TICKER, yield_time_ms=0)
    timer = threading.Timer(0.2, tool_ctx.cancel.set)  # fires mid-wait (or before: same result)
    timer.start()
    started = time.monotonic()
    try:
        res = stdin_(
            reg, tool_ctx, session_id=first["session_id"], action="wait", wait_timeout_seconds=120
        )
    finally:
        timer.cancel()
    assert time.monotonic() - started < 10
    assert res.data is not None
    assert res.data["cancelled"] is True and res.data["is_exited"] is False
    assert pid_alive(first["process_id"])  # cancellation returns; close_all kills


def test_close_all_kills_groups_including_children_and_term_ignorers(
    tool_ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The unsandboxed path: `$!` is a host pid only outside the sandbox's PID namespace (the
    # contained path is tests/test_leftovers.py).
    monkeypatch.setenv(FORCE_UNAVAILABLE_ENV, "1")
    manager = ExecSessionManager()
    registry = default_registry(exec_sessions=manager)
    a = exec_(registry, tool_ctx, command="sleep 1000 & echo child=$!; wait", yield_time_ms=0)
    b = exec_(
        registry,
        tool_ctx,
        command="trap '' TERM; echo armed; while :; do sleep 0.05; done",
        yield_time_ms=0,
    )
    seen_a, _ = poll_until(
        registry, tool_ctx, a["session_id"], lambda o, _d: "child=" in o, initial=a["output"]
    )
    poll_until(registry, tool_ctx, b["session_id"], lambda o, _d: "armed" in o, initial=b["output"])
    child = int(seen_a.split("child=")[1].split()[0])
    pids = [a["process_id"], b["process_id"], child]
    assert all(pid_alive(p) for p in pids)
    started = time.monotonic()
    manager.close_all(grace=0.5)
    assert time.monotonic() - started < 10
    assert [p for p in pids if pid_alive(p)] == []
    for s in manager.sessions():
        assert not group_alive(s.pgid)
        assert s.is_exited
    with pytest.raises(ToolError, match="shut down"):
        exec_(registry, tool_ctx, command="true")


def test_timeout_kills_the_process_group(
    reg: ToolRegistry, tool_ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FORCE_UNAVAILABLE_ENV, "1")  # `$!` is a host pid only unsandboxed
    data = exec_(
        reg,
        tool_ctx,
        command="sleep 1000 & echo child=$!; wait",
        timeout=0.5,
        yield_time_ms=30_000,
    )
    assert data["is_exited"] is True and data["timed_out"] is True
    assert data["exit_code"] == 128 + signal.SIGTERM
    child = int(data["output"].split("child=")[1].split()[0])
    assert not pid_alive(child)


def test_exited_session_with_draining_spool_withholds_the_path(
    reg: ToolRegistry, tool_ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The shell exits, but a background child keeps the output pipe open: exited, not drained.
    # Only unsandboxed: in the sandbox's PID namespace the child ends with the shell.
    monkeypatch.setenv(FORCE_UNAVAILABLE_ENV, "1")  # read when the first command starts
    cmd = "seq 1 30000; sleep 1000 & echo child=$!"
    data = exec_(reg, tool_ctx, command=cmd, yield_time_ms=30_000, max_output_tokens=100)
    assert data["is_exited"] is True and data["exit_code"] == 0
    assert data["spool_complete"] is False and data["spool_pending"] is True
    assert "spool_path" not in data and "output_spooled" not in data
    session = reg.exec_sessions.get(data["session_id"]) if reg.exec_sessions else None
    assert session is not None
    child = int(data["output"].split("child=")[1].split()[0])
    os.kill(child, signal.SIGKILL)  # the pipe closes, the pump drains, the spool completes
    later = stdin_(reg, tool_ctx, session_id=data["session_id"], action="wait").data
    assert later is not None
    assert later["spool_complete"] is True and later["output_spooled"] is True
    text = (tool_ctx.workspace / later["spool_path"]).read_text()
    assert text.startswith("1\n2\n") and "30000\nchild=" in text


def test_running_session_exposes_a_partial_spool_snapshot(
    reg: ToolRegistry, tool_ctx: ToolContext
) -> None:
    cmd = "seq 1 40000; while [ ! -e release ]; do sleep 0.05; done; echo end"
    first = exec_(reg, tool_ctx, command=cmd, yield_time_ms=0)
    sid = first["session_id"]
    _, data = poll_until(
        reg, tool_ctx, sid, lambda _o, d: d["total_output_bytes"] >= 228_894 and "spool_path" in d
    )
    assert data["is_exited"] is False and data["spool_complete"] is False
    partial = (tool_ctx.workspace / data["spool_path"]).read_bytes()
    assert partial.startswith(b"1\n2\n3\n")  # a readable snapshot while it runs
    (tool_ctx.workspace / "release").touch()
    done = stdin_(reg, tool_ctx, session_id=sid, action="wait").data
    assert done is not None
    assert done["spool_complete"] is True and done["output"].endswith("end\n")
    assert (tool_ctx.workspace / done["spool_path"]).read_bytes().endswith(b"40000\nend\n")


def test_spool_names_continue_after_existing_files(tool_ctx: ToolContext) -> None:
    tool_ctx.spool_dir.mkdir(parents=True)
    (tool_ctx.spool_dir / "run-7.txt").write_text("old")
    registry = default_registry()
    try:
        data = exec_(registry, tool_ctx, command="seq 1 100", max_output_tokens=1)
    finally:
        registry.close()
    assert data["session_id"] == "run-8"
    assert data["spool_path"].endswith("run-8.txt")
    assert (tool_ctx.spool_dir / "run-7.txt").read_text() == "old"


# -- preview rule (pure) -------------------------------------------------------------------


def test_preview_unspooled_keeps_the_first_budget_bytes() -> None:
    p = build_preview(b"abcdefghij", 0, b"", budget=4, spooled=False, inspection=False)
    assert p == Preview("abcd" + TRUNCATION_MARKER, True, 10)
    p = build_preview(b"abc", 0, b"", budget=4, spooled=False, inspection=False)
    assert p == Preview("abc", False, 3)


def test_preview_never_splits_utf8_and_strips_ansi_first() -> None:
    data = "\x1b[1m" + "é" * 10 + "\x1b[0m"  # 20 bytes of text once stripped
    p = build_preview(data.encode(), 0, b"", budget=5, spooled=False, inspection=False)
    assert p.text == "éé" + TRUNCATION_MARKER
    p = build_preview(data.encode(), 0, b"", budget=20, spooled=False, inspection=False)
    assert p == Preview("é" * 10, False, len(data.encode()))


def test_preview_spooled_is_capped_at_6kib_and_line_aligned() -> None:
    lines = b"".join(b"line %d\n" % i for i in range(1, 10_001))
    tail = build_preview(lines, 0, b"", budget=40_000, spooled=True, inspection=False)
    body = tail.text.split("\n", 1)[1].removesuffix(TRUNCATION_MARKER)
    assert len(body.encode()) <= SPOOLED_PREVIEW_CAP
    assert body.startswith("line ") and body.endswith("line 10000\n")
    both = build_preview(lines, 0, b"", budget=40_000, spooled=True, inspection=True)
    first, _, last = both.text.partition(
        "\n[... output omitted; full output in the spool file ...]\n"
    )
    assert first.startswith("line 1\nline 2\n") and first.endswith("\n")
    assert last.startswith("line ") and last.endswith("line 10000\n" + TRUNCATION_MARKER)
    small = build_preview(lines, 0, b"", budget=400, spooled=True, inspection=False)
    assert len(small.text.encode()) <= 400 + 100  # min(budget, 6 KiB)


def test_preview_counts_dropped_bytes() -> None:
    p = build_preview(b"a\n" * 10, 1000, b"z\n" * 10, budget=100, spooled=True, inspection=True)
    assert p.window_bytes == 1040 and p.truncated
    assert p.text.startswith("a\n") and p.text.endswith("z\n" + TRUNCATION_MARKER)


@pytest.mark.parametrize(
    ("command", "inspection"),
    [
        ("ls -la", True),
        ("cat a | head", True),
        ("git log -5", True),
        ("git -C x status", True),
        ("LC_ALL=C grep -r x .", True),
        ("/usr/bin/find . -name x", True),
        ("pytest -q", False),
        ("cargo build", False),
        ("git commit -m x", False),
        ("", False),
    ],
)
def test_inspection_classification(command: str, inspection: bool) -> None:
    assert is_inspection_command(command) is inspection


# -- response shapes (snapshot) ------------------------------------------------------------

_VOLATILE = {"wall_time", "waited_seconds", "process_id", "output", "total_output_bytes"}


def _shape(data: dict[str, Any]) -> dict[str, Any]:
    """The response with run-dependent values replaced by their JSON type."""
    return {k: (type(v).__name__ if k in _VOLATILE else v) for k, v in sorted(data.items())}


def test_response_shapes(
    reg: ToolRegistry, tool_ctx: ToolContext, snapshot_json: SnapshotAssertion
) -> None:
    shapes: dict[str, Any] = {}
    shapes["exited"] = exec_(reg, tool_ctx, command="echo hi")
    running = exec_(reg, tool_ctx, command=TICKER, yield_time_ms=0)
    shapes["running"] = running
    sid = running["session_id"]
    shapes["wait_deadline"] = stdin_(
        reg, tool_ctx, session_id=sid, action="wait", wait_timeout_seconds=1
    ).data
    (tool_ctx.workspace / "release").touch()
    shapes["wait_exit"] = stdin_(reg, tool_ctx, session_id=sid, action="wait").data
    shapes["spooled"] = exec_(reg, tool_ctx, command="seq 1 100000", yield_time_ms=30_000)
    normalised = {name: _shape(d) for name, d in shapes.items() if d is not None}
    assert normalised == snapshot_json


_ORPHAN_SCRIPT = """
import sys, time
from pathlib import Path
from vtcode.tools.exec_sessions import ExecSessionManager

ws = Path(sys.argv[1])
manager = ExecSessionManager()
s = manager.start(argv=["sh", "-c", "sleep 1000 & echo child=$!; wait"], display="x",
                  cwd=ws, workspace=ws, spool_dir=ws / "spool")
seen, deadline = "", time.monotonic() + 20
while "child=" not in seen and time.monotonic() < deadline:
    s.block(time.monotonic() + 0.1, __import__("threading").Event(), drain_grace=0)
    seen += s.respond(max_output_tokens=100, wall_started=time.monotonic())["output"]
print(s.pid, seen.split("child=")[1].split()[0], flush=True)
raise SystemExit(0)  # no close_all(): the atexit hook has to reap
"""


def test_interpreter_exit_kills_sessions_left_open(tmp_path: Path) -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", _ORPHAN_SCRIPT, str(tmp_path)],
        env={**os.environ, FORCE_UNAVAILABLE_ENV: "1"},  # `$!` is a host pid only unsandboxed
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    leader, child = (int(x) for x in proc.stdout.split())
    assert not pid_alive(leader) and not pid_alive(child)


def test_writing_to_a_process_that_does_not_read_cannot_hang(
    reg: ToolRegistry, tool_ctx: ToolContext
) -> None:
    first = exec_(reg, tool_ctx, command=TICKER, yield_time_ms=0)  # never reads stdin
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"wrote \d+ of 4000000 bytes; the process is not reading"):
        stdin_(
            reg, tool_ctx, session_id=first["session_id"], chars="x" * 4_000_000, yield_time_ms=0
        )
    assert time.monotonic() - started < 10
    assert pid_alive(first["process_id"])
