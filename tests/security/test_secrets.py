"""Secrets never persisted (issue 17, deliverable 4).

Two independent layers (their unit tables are in tests/test_secrets_units.py), here together
through the real CLI:

- `[shell_environment_policy]` (vtcode.tools.child_env) decides what exec_command's children
  inherit; `-c` keys reach a real child.
- the redactor (vtcode.redact) removes provider keys, OTLP header values, secret-named variables
  and URL userinfo from every event before the gate, from the files beside the log (transcript,
  compaction artifacts, progress), `--last-message-file`, error lines and provider error text.

The end-to-end test plants canaries in OPENAI_API_KEY, ANTHROPIC_API_KEY, GITHUB_TOKEN,
MY_SERVICE_PASSWORD, OTEL_EXPORTER_OTLP_HEADERS and a base URL's userinfo, runs `vtcode exec` with
a script whose commands run `env`, `printenv OPENAI_API_KEY`, `echo $GITHUB_TOKEN` and whose text
repeats canaries, then looks for them everywhere a user or a collector can read: stdout, stderr,
every file under the workspace (events.jsonl, transcript, `--events`, `--last-message-file`,
derived exports), `sessions export` in every format, `sessions show --html`, and the OTLP/HTTP
bodies a real receiver on 127.0.0.1 decoded. It runs once with the default policy (the children
never see the secrets) and once with `ignore_default_excludes = true` (they do, and the redactor
alone keeps them out).
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ScriptedReply, SSEServer
from tests.exec_support import SCRIPTS, normalise, raw_events, vtcode
from vtcode.redact import MARKER

# ------------------------------------------------------------------ end to end, through the CLI

CANARIES = {
    "OPENAI_API_KEY": "sk-canary-openai-4f1d2c9a7b",
    "ANTHROPIC_API_KEY": "sk-ant-canary-8e7d6c5b4a",
    "GITHUB_TOKEN": "ghp_canary_0a1b2c3d4e5f",
    "MY_SERVICE_PASSWORD": "pw-canary-service-31415",
}
OTLP_CANARY = "otlp-canary-bearer-27182"
URL_CANARY = "url-canary-pass-16180"
BASE_URL = f"https://robot:{URL_CANARY}@llm.example.invalid/v1"
ALL_CANARIES = [*CANARIES.values(), OTLP_CANARY, URL_CANARY]
SHOWN_NAMES = {*CANARIES, "OPENAI_BASE_URL", "PAGER", "GIT_PAGER", "NO_COLOR", "TERM"}

FINAL_TEXT = (
    f"Your key is {CANARIES['OPENAI_API_KEY']}, the token {CANARIES['GITHUB_TOKEN']}, "
    f"the base {BASE_URL} and {OTLP_CANARY}."
)


def _command_turn(command: str) -> str:
    return (
        '[[turn]]\n[[turn.tool_calls]]\nname = "exec_command"\n[turn.tool_calls.arguments]\n'
        f"command = {json.dumps(command)}\nyield_time_ms = 30000\n\n"
    )


SCRIPT = (
    '[provider]\nmodel = "replay-1"\n\n'
    + _command_turn("env").replace("[[turn]]\n", '[[turn]]\ntext = "Listing the environment."\n')
    + _command_turn('printenv OPENAI_API_KEY; echo "gh=$GITHUB_TOKEN"')
    + _command_turn(f"echo {CANARIES['ANTHROPIC_API_KEY']}")
    + f"[[turn]]\ntext = {json.dumps(FINAL_TEXT)}\n"
)


class Collector:
    """An OTLP/HTTP endpoint on 127.0.0.1 that keeps each request's headers and body bytes."""

    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], bytes]] = []
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                collector.requests.append((headers, body))
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(10)


@pytest.fixture
def collector() -> Iterator[Collector]:
    c = Collector()
    try:
        yield c
    finally:
        c.close()


def _canary_env() -> dict[str, str]:
    return {
        **CANARIES,
        "OPENAI_BASE_URL": BASE_URL,
        "OTEL_EXPORTER_OTLP_HEADERS": f"authorization=Bearer {OTLP_CANARY}",
    }


def _leaks(where: str, data: bytes | str) -> list[str]:
    raw = data.encode() if isinstance(data, str) else data
    return [f"{where}: {c}" for c in ALL_CANARIES if c.encode() in raw]


def _env_lines(output: str) -> str:
    """The lines of `env` output this test controls (the rest is the machine's environment)."""
    lines = output.splitlines()
    return "\n".join(sorted(ln for ln in lines if ln.split("=", 1)[0] in SHOWN_NAMES))


def _snapshot_event(event: dict[str, Any], ws: Path) -> dict[str, Any]:
    ev = normalise(event, ws)
    if isinstance(ev.get("usage"), dict):
        # The replay provider estimates input tokens from the request, which holds the `env`
        # output: its size depends on the machine and the temp path.
        ev["usage"]["input_tokens"] = "<environment-sized>"
    item = ev.get("item")
    if isinstance(item, dict) and item.get("type") == "tool_output":
        data = json.loads(item["output"])
        if data.get("command") == "env":
            data["output"] = _env_lines(data["output"])
            data["total_output_bytes"] = "<machine-dependent>"
            item["output"] = json.dumps(data, sort_keys=True)
    return ev


@pytest.mark.parametrize("policy", ["default", "no-default-excludes"])
def test_no_canary_reaches_any_output(
    tmp_path: Path, collector: Collector, policy: str, snapshot_json: Any
) -> None:
    pytest.importorskip("opentelemetry.sdk")
    ws = tmp_path / "ws"
    ws.mkdir()
    script = tmp_path / "canary.toml"  # outside the workspace: it holds the canaries itself
    script.write_text(SCRIPT)
    base = [
        "-c",
        "telemetry.otel.enabled=true",
        "-c",
        f"telemetry.otel.endpoint={collector.url}",
    ]
    if policy == "no-default-excludes":
        base += ["-c", "shell_environment_policy.ignore_default_excludes=true"]
    env = _canary_env()
    run = [*base, "exec", "--script", str(script), "--session-id"]
    outputs = ["--events", "ev.jsonl", "--last-message-file", "last.txt", "--record", "rec.toml"]
    json_run = vtcode(
        [*run, "s-json", "--json", *outputs, "go"],
        ws,
        env=env,
    )
    assert json_run.returncode == 0, json_run.stderr
    human_run = vtcode([*run, "s-human", "go"], ws, env=env)  # progress on stderr
    assert human_run.returncode == 0, human_run.stderr
    leaks = [
        *_leaks("exec --json stdout", json_run.stdout),
        *_leaks("exec --json stderr", json_run.stderr),
        *_leaks("exec stderr", human_run.stderr),
        *_leaks("exec stdout", human_run.stdout),
    ]
    for fmt in ("raw", "wrapped", "atif", "open-responses"):
        out = vtcode(["sessions", "export", "s-json", "--format", fmt], ws, env=env)
        assert out.returncode == 0, out.stderr
        leaks += _leaks(f"sessions export --format {fmt}", out.stdout + out.stderr)
    page = vtcode(["sessions", "show", "s-json", "--html", "page.html"], ws, env=env)
    assert page.returncode == 0, page.stderr
    files = sorted(p for p in ws.rglob("*") if p.is_file())
    for path in files:
        leaks += _leaks(str(path.relative_to(ws)), path.read_bytes())
    assert collector.requests, "no span reached the collector"
    for headers, body in collector.requests:
        assert headers.get("authorization") == f"Bearer {OTLP_CANARY}"  # the real header is sent
        leaks += _leaks("OTLP span body", body)
    assert leaks == []

    # The paths were really exercised: each output shows the markers where the canaries were.
    stdout = json_run.stdout
    assert "https://***@llm.example.invalid/v1" in stdout  # the `env` line of the base URL
    assert (ws / "last.txt").read_text().startswith(f"Your key is {MARKER}, the token {MARKER}")
    assert {"page.html", "ev.jsonl", "last.txt", "rec.toml"} <= {p.name for p in files}
    assert f"Your key is {MARKER}" in (ws / "rec.toml").read_text()
    assert {"events.jsonl", "transcript.jsonl"} <= {p.name for p in files}
    assert f"Your key is {MARKER}" in human_run.stderr
    events = raw_events(stdout)  # each line valid against the thread-event schema
    # Streamed text snapshots are left out: how often they are emitted is the recorder's choice
    # (the leak scan above covered each of them; cut secrets are in the redactor table).
    kept = [e for e in events if not _streamed_text(e)]
    assert [_snapshot_event(e, ws) for e in kept] == snapshot_json


def _streamed_text(event: dict[str, Any]) -> bool:
    item = event.get("item")
    return event["type"] in ("item.started", "item.updated") and (
        isinstance(item, dict) and item.get("type") in ("agent_message", "reasoning")
    )


def test_provider_errors_and_their_events_carry_no_credential(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    key = "sk-canary-provider-99887766"
    password = "url-canary-provider-5544"
    port = sse_server.url.rsplit(":", 1)[1]
    echo = {"error": {"message": f"bad key {key} for http://bob:{password}@127.0.0.1:{port}/v1"}}
    sse_server.queue(*[ScriptedReply.json(500, echo) for _ in range(4)])
    env = {"OPENAI_API_KEY": key, "OPENAI_BASE_URL": f"http://bob:{password}@127.0.0.1:{port}/v1"}
    args = ["-c", "agent.max_task_retries=0", "exec", "--provider", "openai", "--model", "m"]
    proc = vtcode([*args, "--json", "--session-id", "e1", "hi"], tmp_path, env=env)
    assert proc.returncode == 1, proc.stderr
    assert sse_server.requests, "the server was never asked"
    assert "Traceback" not in proc.stderr
    assert "openai server error (HTTP 500): bad key [REDACTED] for http://***@127.0.0.1" in (
        proc.stderr
    )
    log = (tmp_path / ".vtcode" / "sessions" / "e1" / "events.jsonl").read_text()
    failed = [e for e in raw_events(proc.stdout) if e["type"] == "turn.failed"]
    assert failed and "[REDACTED]" in failed[0]["message"]
    for where, text in (("stdout", proc.stdout), ("stderr", proc.stderr), ("log", log)):
        assert key not in text, where
        assert password not in text, where


def test_a_connection_error_names_the_url_without_its_userinfo(tmp_path: Path) -> None:
    password = "url-canary-closed-port-77"
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {"OPENAI_BASE_URL": f"http://bob:{password}@127.0.0.1:{port}/v1"}
    args = ["-c", "agent.max_task_retries=0", "exec", "--provider", "openai", "--model", "m"]
    proc = vtcode([*args, "--session-id", "e2", "hi"], tmp_path, env=env)
    assert proc.returncode == 1, proc.stderr
    assert f"cannot connect to openai at http://***@127.0.0.1:{port}/v1" in proc.stderr
    assert password not in proc.stderr
    log = (tmp_path / ".vtcode" / "sessions" / "e2" / "events.jsonl").read_text()
    assert password not in log


def test_policy_keys_reach_a_real_child(tmp_path: Path) -> None:
    script = tmp_path / "env.toml"
    script.write_text(
        '[provider]\nmodel = "replay-1"\n\n[[turn]]\n[[turn.tool_calls]]\nname = "exec_command"\n'
        'arguments = { command = "env", yield_time_ms = 30000 }\n\n[[turn]]\ntext = "done"\n'
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    proc = vtcode(
        [
            "-c",
            'shell_environment_policy.include_only=["VT_*", "path"]',
            "-c",
            'shell_environment_policy.set={VT_SET="from-set", API_TOKEN="set-by-user"}',
            "exec",
            "--json",
            "--script",
            str(script),
            "go",
        ],
        ws,
        env={"VT_KEEP": "kept", "VT_DROP_SECRET": "dropped-by-default", "OTHER": "other"},
    )
    assert proc.returncode == 0, proc.stderr
    (output,) = [
        json.loads(e["item"]["output"])["output"]
        for e in raw_events(proc.stdout)
        if e["type"] == "item.completed" and e["item"]["type"] == "tool_output"
    ]
    names = {ln.split("=", 1)[0] for ln in output.splitlines() if "=" in ln}
    # bash adds PWD, SHLVL and _; the harness its no-pager/no-colour settings; the sandbox
    # the command's private TMPDIR.
    assert names - {"PWD", "SHLVL", "_", "TMPDIR"} == {
        "PATH",
        "VT_KEEP",
        "VT_SET",
        "API_TOKEN",
        "PAGER",
        "GIT_PAGER",
        "NO_COLOR",
        "CARGO_TERM_COLOR",
        "TERM",
    }
    assert "VT_SET=from-set" in output.splitlines()


def test_secrets_set_by_the_configuration_are_redacted_too(tmp_path: Path) -> None:
    """`[shell_environment_policy] set` hands a command a token vtcode's environment never had."""
    token = "cfg-canary-deploy-60221"
    script = tmp_path / "echo.toml"
    script.write_text(
        '[provider]\nmodel = "replay-1"\n\n[[turn]]\n[[turn.tool_calls]]\nname = "exec_command"\n'
        'arguments = { command = "echo \\"deploy=$DEPLOY_TOKEN\\"", yield_time_ms = 30000 }\n\n'
        '[[turn]]\ntext = "done"\n'
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    proc = vtcode(
        [
            "-c",
            f'shell_environment_policy.set={{DEPLOY_TOKEN="{token}"}}',
            "exec",
            "--json",
            "--session-id",
            "cfg",
            "--script",
            str(script),
            "go",
        ],
        ws,
    )
    assert proc.returncode == 0, proc.stderr
    (output,) = [
        json.loads(e["item"]["output"])["output"]
        for e in raw_events(proc.stdout)
        if e["type"] == "item.completed" and e["item"]["type"] == "tool_output"
    ]
    assert output == f"deploy={MARKER}\n"  # the child got it; no output keeps it
    for path in (ws / ".vtcode").rglob("*"):
        if path.is_file():
            assert token.encode() not in path.read_bytes(), path


def test_compaction_artifacts_keep_no_secret(tmp_path: Path) -> None:
    """History archive, envelope, summary and previews are written beside the log: redacted."""
    key = CANARIES["OPENAI_API_KEY"]
    proc = vtcode(
        [
            "exec",
            "--json",
            "--session-id",
            "cmp",
            "--script",
            str(SCRIPTS / "context-auto.toml"),
            f"count the files; the key is {key}",
        ],
        tmp_path,
        env={"VTCODE_TOKENIZER": "bytes", "OPENAI_API_KEY": key},
    )
    assert proc.returncode == 0, proc.stderr
    (boundary,) = [e for e in raw_events(proc.stdout) if e["type"] == "thread.compact_boundary"]
    archive = tmp_path / boundary["history_artifact_path"]
    first = json.loads(archive.read_text().splitlines()[1])
    assert first == {"role": "user", "content": f"count the files; the key is {MARKER}"}
    leaks = [
        str(p.relative_to(tmp_path))
        for p in tmp_path.rglob("*")
        if p.is_file() and key.encode() in p.read_bytes()
    ]
    assert leaks == []
