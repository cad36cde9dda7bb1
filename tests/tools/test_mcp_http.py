"""MCP over streamable HTTP through the real `vtcode exec --json` CLI, against the SDK's own
FastMCP server (tests/mcp_servers/toolbox.py --http) listening on 127.0.0.1.

What a user relies on: the tools are called end to end with the bearer token from the named
variable; a server that dies mid-call fails that call at once (not at the call timeout) and is
reported once; a hung call times out and the server still answers; a server that never answers
is given up at its startup timeout; an untrusted workspace cannot add a URL server (no request
reaches it); a missing token or a bad definition is reported without the run, or the token,
leaking anywhere.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from tests.exec_support import SCRIPTS, SESSION, canonical_lines, normalise, raw_events, vtcode
from tests.tools.test_mcp_exec import ALLOW_MCP, TOOLBOX, TRUST, items
from vtcode.config.load import load_config
from vtcode.errors import ConfigError
from vtcode.mcp.plan import plan_servers

TOKEN = "tok-4f9c2e7a51d8b3c6"  # what the server requires; must never be written by vtcode
TOKEN_VAR = "TOOLBOX_CRED"  # a name the redactor would not guess is a secret


class HttpServer:
    def __init__(self, proc: subprocess.Popen[str], url: str, log: Path) -> None:
        self.proc = proc
        self.url = url
        self.log = log

    def requests(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


def start_server(tmp: Path, *flags: str) -> HttpServer:
    port_file = tmp / "port"
    log = tmp / "requests.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            str(TOOLBOX),
            "--http",
            str(port_file),
            "--request-log",
            str(log),
            "--require-bearer-env",
            TOKEN_VAR,
            *flags,
        ],
        env={"PATH": "/usr/bin:/bin", TOKEN_VAR: TOKEN},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not port_file.exists():
        assert proc.poll() is None, "the MCP HTTP server exited before listening"
        assert time.monotonic() < deadline, "the MCP HTTP server never listened"
        time.sleep(0.02)
    return HttpServer(proc, f"http://127.0.0.1:{port_file.read_text()}/mcp", log)


@pytest.fixture
def server_dir(tmp_path: Path) -> Path:
    d = tmp_path / "server"
    d.mkdir()
    return d


@pytest.fixture
def servers() -> Iterator[list[HttpServer]]:
    started: list[HttpServer] = []
    yield started
    for s in started:
        if s.proc.poll() is None:
            s.proc.kill()
        s.proc.wait(timeout=30)


def write_config(
    ws: Path, url: str, *, timeout: float = 30.0, startup: float = 30.0, extra: str = ""
) -> None:
    (ws / "vtcode.toml").write_text(
        "[automation.full_auto]\n"
        f"allowed_tools = {json.dumps(ALLOW_MCP)}\n\n"
        "[mcp.servers.toolbox]\n"
        f"url = {json.dumps(url)}\n"
        f'bearer_token_env_var = "{TOKEN_VAR}"\n'
        f"timeout_seconds = {timeout}\n"
        f"startup_timeout_seconds = {startup}\n" + extra
    )


def run_exec(
    ws: Path, script: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return vtcode(
        [
            "exec",
            "--json",
            "--session-id",
            SESSION,
            "--script",
            str(SCRIPTS / f"{script}.toml"),
            "use the tools",
        ],
        ws,
        env={**TRUST, TOKEN_VAR: TOKEN} if env is None else env,
    )


def assert_no_token(ws: Path, proc: subprocess.CompletedProcess[str]) -> None:
    assert TOKEN not in proc.stdout and TOKEN not in proc.stderr
    for path in (ws / ".vtcode").rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path


def _neutral(events: list[dict[str, Any]], ws: Path, url: str) -> list[dict[str, Any]]:
    text = json.dumps(events).replace(url, "<url>")
    return [normalise(e, ws) for e in json.loads(text)]


def test_http_tools_end_to_end_with_the_bearer_token(
    tmp_path: Path, server_dir: Path, servers: list[HttpServer], snapshot_json: Any
) -> None:
    server = start_server(server_dir, "--resources")
    servers.append(server)
    write_config(tmp_path, server.url)
    proc = run_exec(tmp_path, "mcp-http-tools")
    assert proc.returncode == 0, proc.stderr
    events = raw_events(proc.stdout)  # each validated against thread-event.schema.json
    assert events[-1]["subtype"] == "success"
    calls = items(events, "mcp_tool_call")
    assert [(c["tool_name"], c["status"]) for c in calls] == [
        ("mcp__toolbox__echo", "completed"),
        ("mcp__toolbox__add", "completed"),
        ("mcp__toolbox__whoami", "completed"),
        ("mcp__list_resources", "completed"),
        ("mcp__read_resource", "completed"),
    ]
    assert calls[2]["result"] == "Bearer [REDACTED]"  # the server echoed the token back
    assert calls[3]["result"] == (
        "toolbox notes://readme (text/markdown) readme - The toolbox's notes."
    )
    assert calls[4]["result"] == "# Toolbox\nfour tools and this note"
    assert items(events, "error") == []
    sent = server.requests()
    assert sent and all(r["headers"]["authorization"] == f"Bearer {TOKEN}" for r in sent)
    assert {r["method"] for r in sent} >= {"POST", "DELETE"}  # the session is ended on exit
    assert [line["event"] for line in canonical_lines(tmp_path)] == events
    log = tmp_path / ".vtcode" / "sessions" / SESSION / "events.jsonl"
    checked = vtcode(["validate", str(log)], tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert _neutral(events, tmp_path, server.url) == snapshot_json(name="raw")
    assert_no_token(tmp_path, proc)


def test_a_server_that_dies_mid_call_fails_that_call_at_once(
    tmp_path: Path, server_dir: Path, servers: list[HttpServer], snapshot_json: Any
) -> None:
    server = start_server(server_dir, "--exit-after", "1")
    servers.append(server)
    write_config(tmp_path, server.url, timeout=60.0)
    started = time.monotonic()
    proc = run_exec(tmp_path, "mcp-server-dies")
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert elapsed < 30, f"the dead server's call waited for its timeout ({elapsed:.1f}s)"
    events = raw_events(proc.stdout)
    assert events[-1]["subtype"] == "success"
    calls = items(events, "mcp_tool_call")
    assert [c["status"] for c in calls] == ["completed", "failed", "failed"]
    (warning,) = items(events, "error")  # reported once
    assert warning["message"].startswith("MCP server 'toolbox' is unavailable: ")
    assert "unavailable" in calls[1]["result"] and "unavailable" in calls[2]["result"]
    assert _neutral(events, tmp_path, server.url) == snapshot_json(name="raw")
    assert_no_token(tmp_path, proc)


def test_a_hung_call_times_out_and_the_server_still_answers(
    tmp_path: Path, server_dir: Path, servers: list[HttpServer]
) -> None:
    server = start_server(server_dir)
    servers.append(server)
    write_config(tmp_path, server.url, timeout=1.0)
    proc = run_exec(tmp_path, "mcp-slow")
    assert proc.returncode == 0, proc.stderr
    events = raw_events(proc.stdout)
    slow, echo = items(events, "mcp_tool_call")
    assert slow["status"] == "failed"
    assert slow["result"] == "MCP tool mcp__toolbox__slow gave no answer within 1s"
    assert echo["result"] == "still here"
    assert items(events, "error") == []


def test_a_hung_and_a_refused_server_are_each_reported_once_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    """`toolbox` accepts connections (backlog) but never answers: given up at its 1 s startup
    timeout; `gone` is a port nothing listens on: connection refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    gone = f"http://127.0.0.1:{port}/mcp"
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
        write_config(
            tmp_path, url, startup=1.0, extra=f"\n[mcp.servers.gone]\nurl = {json.dumps(gone)}\n"
        )
        proc = run_exec(tmp_path, "mcp-unavailable-http")
    assert proc.returncode == 0, proc.stderr
    events = raw_events(proc.stdout)
    assert events[-1]["subtype"] == "success"
    refused, hung = (e["message"] for e in items(events, "error"))
    assert refused.startswith(f"MCP server 'gone' failed to start: cannot reach {gone}")
    assert hung == "MCP server 'toolbox' failed to start: no answer to initialize within 1s"
    (call,) = items(events, "mcp_tool_call")
    assert call["status"] == "failed" and "'toolbox' is unavailable" in call["result"]


def test_a_missing_or_wrong_token_is_reported_without_the_token(
    tmp_path: Path, server_dir: Path, servers: list[HttpServer]
) -> None:
    """`toolbox` names an unset variable (nothing is sent), `other` one holding a wrong token
    (the server answers 401)."""
    server = start_server(server_dir)
    servers.append(server)
    other = f'\n[mcp.servers.other]\nurl = "{server.url}"\nbearer_token_env_var = "OTHER_CRED"\n'
    write_config(tmp_path, server.url, extra=other)
    wrong = "wrong-" + TOKEN
    proc = run_exec(tmp_path, "mcp-unavailable-http", env={**TRUST, "OTHER_CRED": wrong})
    assert proc.returncode == 0, proc.stderr
    rejected, missing = (e["message"] for e in items(raw_events(proc.stdout), "error"))
    assert missing == (
        f"MCP server 'toolbox' failed to start: the variable {TOKEN_VAR} "
        "(bearer_token_env_var) is not set or empty"
    )
    assert (
        rejected
        == f"MCP server 'other' failed to start: {server.url} answered HTTP 401 Unauthorized"
    )
    sent = server.requests()
    assert sent and all(r["headers"]["authorization"] == f"Bearer {wrong}" for r in sent)
    assert wrong not in proc.stdout and wrong not in proc.stderr


def test_an_untrusted_workspace_cannot_add_a_url_server(
    tmp_path: Path, server_dir: Path, servers: list[HttpServer]
) -> None:
    server = start_server(server_dir)
    servers.append(server)
    write_config(tmp_path, server.url)
    proc = run_exec(tmp_path, "mcp-unavailable-http", env={TOKEN_VAR: TOKEN})
    assert proc.returncode == 0, proc.stderr
    events = raw_events(proc.stdout)
    notice = items(events, "error")[0]["message"]
    assert "were not started ('toolbox')" in notice and "VTCODE_TRUST_WORKSPACE=1" in notice
    (call,) = items(events, "mcp_tool_call")
    assert call["result"] == (
        "MCP server 'toolbox' is unavailable: not started: the workspace is not trusted"
    )
    assert server.requests() == [], "no request may reach a server an untrusted workspace named"


@pytest.mark.parametrize(
    ("server", "where", "message"),
    [
        (
            'url = "http://127.0.0.1:9/mcp"\nheaders = { Authorization = "Bearer abcdefgh123" }',
            "mcp.servers.toolbox.headers.Authorization",
            "credentials do not belong in a file",
        ),
        (
            'url = "https://me:hunter2hunter2@example.com/mcp"',
            "mcp.servers.toolbox.url",
            "must not carry user:password@",
        ),
        ('url = "ftp://example.com/mcp"', "mcp.servers.toolbox.url", "http:// or https://"),
        (
            'url = "http://127.0.0.1:9/mcp"\ncommand = "x"',
            "mcp.servers.toolbox.url",
            "not both",
        ),
        (
            'command = "x"\nbearer_token_env_var = "T"',
            "mcp.servers.toolbox.bearer_token_env_var",
            "applies only to a `url` server",
        ),
        (
            'url = "http://127.0.0.1:9/mcp"\nbearer_token_env_var = "A-B"',
            "mcp.servers.toolbox.bearer_token_env_var",
            "is not an environment variable name",
        ),
    ],
    ids=["authorization-header", "userinfo", "scheme", "both", "bearer-on-stdio", "var-name"],
)
def test_a_bad_url_server_is_refused_by_location(
    tmp_path: Path, server: str, where: str, message: str
) -> None:
    (tmp_path / "vtcode.toml").write_text(f"[mcp.servers.toolbox]\n{server}\n")
    config = load_config(workspace=tmp_path, env={}).config
    with pytest.raises(ConfigError) as exc:
        plan_servers(config, tmp_path, env={})
    assert exc.value.location == where and message in exc.value.message
    assert "abcdefgh123" not in str(exc.value) and "hunter2hunter2" not in str(exc.value)


def test_a_bad_url_server_is_exit_2_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "vtcode.toml").write_text(
        '[mcp.servers.toolbox]\nurl = "http://127.0.0.1:9/mcp"\n'
        'headers = { Authorization = "Bearer abcdefgh123" }\n'
    )
    proc = run_exec(tmp_path, "mcp-unavailable-http")
    assert proc.returncode == 2, proc.stderr
    assert "mcp.servers.toolbox.headers.Authorization" in proc.stderr
    assert "credentials do not belong in a file" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert "abcdefgh123" not in proc.stderr
    assert not (tmp_path / ".vtcode" / "sessions").exists()


def test_a_command_the_model_runs_does_not_inherit_the_token_variable(tmp_path: Path) -> None:
    with socket.socket() as s:  # no server needed: the token is withheld from the start
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    write_config(tmp_path, f"http://127.0.0.1:{port}/mcp", startup=1.0)
    proc = run_exec(tmp_path, "mcp-http-env")
    assert proc.returncode == 0, proc.stderr
    events = raw_events(proc.stdout)
    assert events[-1]["subtype"] == "success", proc.stdout
    assert_no_token(tmp_path, proc)
