"""MCP through the real `vtcode exec --json` CLI: a real server process, a workspace vtcode.toml.

Each scenario checks what users rely on (exit code, `mcp_tool_call` items instead of
`tool_invocation`/`tool_output`, one warning per server problem, stdout == the canonical log,
`vtcode validate` passes, every event valid against the published schema) plus a reviewed
snapshot of the normalised events, and that no server process outlives the run.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from tests.exec_support import (
    SCRIPTS,
    SESSION,
    canonical_lines,
    normalise,
    process_running,
    raw_events,
    spawn_vtcode,
    vtcode,
    wait_for_path,
)
from vtcode.config.model import DEFAULT_ALLOWED_TOOLS

TOOLBOX = Path(__file__).parents[1] / "mcp_servers" / "toolbox.py"
ALLOW_MCP = [*DEFAULT_ALLOWED_TOOLS, "mcp__*"]
TRUST = {"VTCODE_TRUST_WORKSPACE": "1"}


def _toml(value: Any) -> str:
    return json.dumps(value)  # JSON strings and arrays are valid TOML basic strings / arrays


def write_config(
    ws: Path,
    servers: dict[str, list[str]],
    *,
    allowed: list[str] | None = ALLOW_MCP,
    timeout: float = 30.0,
    startup: float = 60.0,
    path: Path | None = None,
) -> dict[str, Path]:
    """A vtcode.toml with one toolbox server per entry; returns each server's pid file."""
    lines: list[str] = []
    if allowed is not None:
        lines += ["[automation.full_auto]", f"allowed_tools = {_toml(allowed)}", ""]
    pids: dict[str, Path] = {}
    for name, flags in servers.items():
        pids[name] = ws / f"{name}.pid"
        args = [str(TOOLBOX), "--pid-file", str(pids[name]), *flags]
        lines += [
            f"[mcp.servers.{name}]",
            f"command = {_toml(sys.executable)}",
            f"args = {_toml(args)}",
            f"timeout_seconds = {timeout}",
            f"startup_timeout_seconds = {startup}",
            "",
        ]
    (path or ws / "vtcode.toml").write_text("\n".join(lines))
    return pids


def run_exec(
    ws: Path, script: str, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return vtcode(
        [
            *extra,
            "exec",
            "--json",
            "--session-id",
            SESSION,
            "--script",
            str(SCRIPTS / f"{script}.toml"),
            "use the tools",
        ],
        ws,
        env=TRUST if env is None else env,
    )


def wait_gone(pid_file: Path, timeout: float = 30.0) -> None:
    """The server process of `pid_file` has exited (waits on the process, bounded)."""
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + timeout
    while process_running(pid):
        assert time.monotonic() < deadline, f"MCP server {pid} outlived vtcode"
        time.sleep(0.02)


def items(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    done = [e["item"] for e in events if e["type"] == "item.completed"]
    return [item for item in done if item["type"] == kind]


def _tools_ok(events: list[dict[str, Any]]) -> None:
    calls = items(events, "mcp_tool_call")
    assert [(c["tool_name"], c["status"]) for c in calls] == [
        ("mcp__toolbox__echo", "completed"),
        ("mcp__toolbox__add", "completed"),
        ("mcp__toolbox__boom", "failed"),
    ]
    assert [c["result"] for c in calls[:2]] == ["hello over MCP", "5"]
    assert calls[1]["arguments"] == {"a": 2, "b": 3}
    assert not any(e.get("item", {}).get("type", "").startswith("tool_") for e in events)
    assert items(events, "error") == []


def _server_dies(events: list[dict[str, Any]]) -> None:
    calls = items(events, "mcp_tool_call")
    assert [c["status"] for c in calls] == ["completed", "failed", "failed"]
    (warning,) = items(events, "error")
    assert warning["message"].startswith("MCP server 'toolbox' is unavailable: the server closed")
    assert "toolbox: exiting on call 2" in warning["message"]
    assert "unavailable" in calls[2]["result"]


def _unavailable(events: list[dict[str, Any]]) -> None:
    (warning,) = items(events, "error")
    assert "MCP server 'broken' failed to start" in warning["message"]
    assert "simulated start failure" in warning["message"]  # the server's own stderr
    (call,) = items(events, "mcp_tool_call")
    assert call["status"] == "failed" and "'broken' is unavailable" in call["result"]


def _denied(events: list[dict[str, Any]]) -> None:
    add, echo = items(events, "mcp_tool_call")
    assert add["status"] == "failed" and "permission denied" in add["result"]
    assert "mcp__toolbox__add" in add["result"]
    assert echo["status"] == "completed"


def _timeout(events: list[dict[str, Any]]) -> None:
    slow, echo = items(events, "mcp_tool_call")
    assert slow["status"] == "failed"
    assert slow["result"] == "MCP tool mcp__toolbox__slow gave no answer within 1s"
    assert echo["result"] == "still here"


def _hidden(events: list[dict[str, Any]]) -> None:
    notice, refused = items(events, "error")
    assert "4 of 4 tools are not in automation.full_auto.allowed_tools" in notice["message"]
    (call,) = items(events, "mcp_tool_call")
    assert call["status"] == "failed" and call["result"].startswith("unknown tool")
    assert refused["message"] == call["result"]


SCENARIOS: list[tuple[str, str, dict[str, list[str]], dict[str, Any], Callable[..., None]]] = [
    ("tools", "mcp-tools", {"toolbox": []}, {}, _tools_ok),
    ("server-dies", "mcp-server-dies", {"toolbox": ["--exit-after", "1"]}, {}, _server_dies),
    ("unavailable", "mcp-unavailable", {"broken": ["--fail-on-start"]}, {}, _unavailable),
    ("denied", "mcp-denied", {"toolbox": []}, {"deny": "mcp__toolbox__add"}, _denied),
    ("timeout", "mcp-slow", {"toolbox": []}, {"timeout": 1.0}, _timeout),
    ("hidden", "mcp-hidden", {"toolbox": []}, {"allowed": None}, _hidden),
]


@pytest.mark.parametrize(
    ("script", "servers", "opts", "check"),
    [s[1:] for s in SCENARIOS],
    ids=[s[0] for s in SCENARIOS],
)
def test_mcp_scenario(
    tmp_path: Path,
    snapshot_json: Any,
    script: str,
    servers: dict[str, list[str]],
    opts: dict[str, Any],
    check: Callable[[list[dict[str, Any]]], None],
) -> None:
    pids = write_config(
        tmp_path,
        servers,
        allowed=opts.get("allowed", ALLOW_MCP),
        timeout=opts.get("timeout", 30.0),
    )
    extra = ["-c", f"permissions.deny=[{_toml(opts['deny'])}]"] if "deny" in opts else []
    proc = run_exec(tmp_path, script, *extra)
    assert proc.returncode == 0, proc.stderr
    events = raw_events(proc.stdout)  # each validated against thread-event.schema.json
    assert events[-1]["type"] == "thread.completed" and events[-1]["subtype"] == "success"
    check(events)
    assert [line["event"] for line in canonical_lines(tmp_path)] == events
    log = tmp_path / ".vtcode" / "sessions" / SESSION / "events.jsonl"
    checked = vtcode(["validate", str(log)], tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert [normalise(e, tmp_path) for e in events] == snapshot_json(name="raw")
    for pid_file in pids.values():
        wait_gone(pid_file, timeout=0.5)  # ended by vtcode itself, before it exited
    assert "Traceback" not in proc.stderr


def test_a_slow_start_is_bounded_by_its_own_timeout_not_the_call_timeout(tmp_path: Path) -> None:
    """A 1 s per-call timeout no longer races start-up: a server that takes 1.5 s to start is
    used normally, and its slow tool still times out after 1 s."""
    pids = write_config(tmp_path, {"toolbox": ["--start-delay", "1.5"]}, timeout=1.0)
    proc = run_exec(tmp_path, "mcp-slow")
    assert proc.returncode == 0, proc.stderr
    events = raw_events(proc.stdout)
    assert not [e for e in items(events, "error") if "failed to start" in e["message"]]
    _timeout(events)
    wait_gone(pids["toolbox"], timeout=0.5)


def test_startup_timeout_must_be_positive(tmp_path: Path) -> None:
    write_config(tmp_path, {"toolbox": []}, startup=0.0)
    proc = run_exec(tmp_path, "mcp-tools")
    assert proc.returncode == 2
    assert "mcp.servers.toolbox.startup_timeout_seconds" in proc.stderr
    assert "must be a positive number of seconds, got 0.0" in proc.stderr
    assert not (tmp_path / ".vtcode" / "sessions" / SESSION).exists()


# ------------------------------------------------------------------ trust


def test_workspace_servers_do_not_start_in_an_untrusted_workspace(tmp_path: Path) -> None:
    pids = write_config(tmp_path, {"broken": []})
    proc = run_exec(tmp_path, "mcp-unavailable", env={})
    assert proc.returncode == 0, proc.stderr
    events = raw_events(proc.stdout)
    notice = items(events, "error")[0]["message"]
    assert "were not started ('broken')" in notice and "VTCODE_TRUST_WORKSPACE=1" in notice
    (call,) = items(events, "mcp_tool_call")
    assert call["result"] == (
        "MCP server 'broken' is unavailable: not started: the workspace is not trusted"
    )
    assert not pids["broken"].exists(), "the server command never ran"


def test_servers_from_the_users_own_config_file_start(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    own = tmp_path / "mine.toml"
    pids = write_config(ws, {"toolbox": []}, path=own)
    proc = run_exec(ws, "mcp-tools", "--config", str(own), env={})
    assert proc.returncode == 0, proc.stderr
    _tools_ok(raw_events(proc.stdout))
    wait_gone(pids["toolbox"], timeout=0.5)


# ------------------------------------------------------------------ bad config


@pytest.mark.parametrize(
    ("toml", "where"),
    [
        ('[mcp.servers."a__b"]\ncommand = "x"\n', "mcp.servers.a__b"),
        ('[mcp.servers.ok]\ncommand = ""\n', "mcp.servers.ok.command"),
    ],
)
def test_a_bad_server_definition_is_exit_2_and_writes_nothing(
    tmp_path: Path, toml: str, where: str
) -> None:
    (tmp_path / "vtcode.toml").write_text(toml)
    proc = run_exec(tmp_path, "mcp-tools")
    assert proc.returncode == 2
    assert where in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == ""
    assert not (tmp_path / ".vtcode" / "sessions").exists()


# ------------------------------------------------------------------ signals and orphans


def _start(tmp_path: Path, started: Path) -> tuple[subprocess.Popen[str], dict[str, Path]]:
    pids = write_config(tmp_path, {"toolbox": ["--started-file", str(started)]})
    proc = spawn_vtcode(
        [
            "exec",
            "--json",
            "--session-id",
            SESSION,
            "--script",
            str(SCRIPTS / "mcp-cancel.toml"),
            "wait for it",
        ],
        tmp_path,
        env=TRUST,
    )
    wait_for_path(started, proc, "the MCP call")  # the server says the slow call is running
    return proc, pids


def test_sigint_during_an_mcp_call_cancels_it_and_ends_the_server(tmp_path: Path) -> None:
    proc, pids = _start(tmp_path, tmp_path / "started.flag")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    events = raw_events(out)
    assert events[-1]["subtype"] == "cancelled"
    (call,) = items(events, "mcp_tool_call")
    assert call["status"] == "failed"
    assert call["result"] == "cancelled while the MCP call was running"
    assert [line["event"] for line in canonical_lines(tmp_path)] == events
    wait_gone(pids["toolbox"], timeout=0.5)


def test_a_killed_vtcode_leaves_no_server_behind(tmp_path: Path) -> None:
    proc, pids = _start(tmp_path, tmp_path / "started.flag")
    proc.kill()  # SIGKILL: no cleanup code runs; the server sees its stdin close
    proc.communicate(timeout=60)
    wait_gone(pids["toolbox"], timeout=30)


def test_a_server_that_never_answers_is_killed_at_start(tmp_path: Path) -> None:
    pids = write_config(tmp_path, {"broken": ["--hang-on-start"]}, startup=1.0)
    proc = run_exec(tmp_path, "mcp-unavailable")
    assert proc.returncode == 0, proc.stderr
    events = raw_events(proc.stdout)
    assert items(events, "error")[0]["message"] == (
        "MCP server 'broken' failed to start: no answer to initialize within 1s"
    )
    wait_gone(pids["broken"], timeout=0.5)


def _start_with_a_hung_server(
    tmp_path: Path,
) -> tuple[subprocess.Popen[str], dict[str, Path], int]:
    """vtcode exec with one server that never answers `initialize` (nor reads its stdin),
    returned once that server runs: vtcode is then waiting in the servers' start."""
    pids = write_config(tmp_path, {"broken": ["--hang-on-start"]}, startup=60.0)
    proc = spawn_vtcode(
        ["exec", "--json", "--session-id", SESSION, "--script",
         str(SCRIPTS / "mcp-unavailable.toml"), "use the tools"],
        tmp_path,
        env=TRUST,
    )  # fmt: skip
    wait_for_path(pids["broken"], proc, "the MCP server")
    while not pids["broken"].read_text().strip():  # written, maybe not yet filled
        assert proc.poll() is None
    return proc, pids, int(pids["broken"].read_text())


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_a_signal_while_a_server_starts_closes_the_session_cancelled(
    tmp_path: Path, sig: signal.Signals
) -> None:
    """The session log exists before the servers start; a signal then (an eval's timeout on a
    slow start) must close it `cancelled` at once, exit 130, the server ended — not kill the
    process with an empty log, nor wait out the 60 s start-up timeout."""
    proc, pids, server = _start_with_a_hung_server(tmp_path)
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=30)
    finally:  # a server that never reads stdin outlives a vtcode that failed to end it
        if process_running(server):
            os.kill(server, signal.SIGKILL)
    assert proc.returncode == 130, err
    events = raw_events(out)
    assert [e["type"] for e in events] == ["thread.started", "item.completed", "thread.completed"]
    assert events[1]["item"] == {"id": "item_0", "type": "error", "message": "turn cancelled"}
    assert events[-1]["subtype"] == "cancelled" and events[-1]["num_turns"] == 0
    assert [line["event"] for line in canonical_lines(tmp_path)] == events
    log = tmp_path / ".vtcode" / "sessions" / SESSION / "events.jsonl"
    checked = vtcode(["validate", str(log)], tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    wait_gone(pids["broken"], timeout=5)
    assert "Traceback" not in err


def test_a_killed_vtcode_takes_along_a_server_that_never_reads_its_stdin(tmp_path: Path) -> None:
    """A server ends on its own when its stdin closes, if it reads it; one hung at start never
    does, and lived on after a SIGKILL of vtcode (an eval's timeout, the OOM killer). The
    parent-death signal ends it."""
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    proc, pids, server = _start_with_a_hung_server(tmp_path)
    proc.kill()
    proc.communicate(timeout=60)
    try:
        wait_gone(pids["broken"], timeout=10)
    finally:
        if process_running(server):
            os.kill(server, signal.SIGKILL)


def test_a_server_is_born_with_sigterm_and_sigint_deliverable(tmp_path: Path) -> None:
    """vtcode's MCP thread blocks SIGINT/SIGTERM (so the main thread gets them) and a child
    inherits the mask: the server could not be ended by SIGTERM, the SDK's own way of ending
    it, nor by a user's `kill`. Four servers lived on after this session's first tests."""
    proc, pids = _start(tmp_path, tmp_path / "started.flag")
    try:
        status = Path(f"/proc/{int(pids['toolbox'].read_text())}/status").read_text()
        blocked = int(
            next(x for x in status.splitlines() if x.startswith("SigBlk:")).split()[1], 16
        )
        assert not blocked & (1 << (signal.SIGTERM - 1)), f"SIGTERM blocked: {blocked:#x}"
        assert not blocked & (1 << (signal.SIGINT - 1)), f"SIGINT blocked: {blocked:#x}"
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    wait_gone(pids["toolbox"], timeout=5)
