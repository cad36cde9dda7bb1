"""The codex and claude adapters through the real runner, with stand-in programs on PATH that
check the command line and environment the adapters build and answer with each peer's event
stream (the format `codex exec --json` and `claude -p --output-format stream-json` print)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.eval.support import hello_task
from tests.exec_support import vtcode
from vtcode.sandbox.launch import Sandbox

FAKE_CODEX = r"""
import json, os, pathlib, sys
args = sys.argv[1:]
assert args[:2] == ["exec", "--json"], args
for flag in ("--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--ephemeral"):
    assert flag in args, flag
ws = pathlib.Path(args[args.index("-C") + 1])
assert args[args.index("-m") + 1] == "tiny-model"
config = [args[i + 1] for i, a in enumerate(args) if a == "-c"]
assert 'model_provider="vtcode-eval"' in config, config
assert 'model_providers.vtcode-eval.base_url="http://127.0.0.1:9/v1"' in config, config
assert sys.stdin.read() == ""  # stdin closed: codex never waits on it
prompt = args[args.index("--") + 1]
home = pathlib.Path(os.environ["CODEX_HOME"])
(home / "seen.json").write_text(json.dumps({"argv": args, "pid": os.getpid()}))
(ws / "hello.txt").write_text("hello\n" if "hello" in prompt else "?")
for ev in (
    {"type": "thread.started", "thread_id": "codex-thread-1"},
    {"type": "turn.started"},
    {"type": "item.completed", "item": {"id": "item_0", "type": "command_execution",
     "command": "echo hello > hello.txt", "aggregated_output": "", "exit_code": 0,
     "status": "completed"}},
    {"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": "Done."}},
    {"type": "turn.completed", "usage": {"input_tokens": 6100, "cached_input_tokens": 100,
     "output_tokens": 30}},
):
    print(json.dumps(ev), flush=True)
"""

FAKE_CLAUDE = r"""
import json, os, pathlib, sys
args = sys.argv[1:]
for flag in ("-p", "--verbose", "--dangerously-skip-permissions"):
    assert flag in args, flag
assert args[args.index("--output-format") + 1] == "stream-json"
assert args[args.index("--model") + 1] == "tiny-model"
assert "--disallowed-tools=Workflow" in args
assert os.environ["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"
assert os.environ["IS_SANDBOX"] == "1"
assert sys.stdin.read() == ""
home = pathlib.Path(os.environ["CLAUDE_CONFIG_DIR"])
(home / "seen.json").write_text(json.dumps({"argv": args, "pid": os.getpid()}))
pathlib.Path("hello.txt").write_text("hello\n")
usage1 = {"input_tokens": 13000, "cache_creation_input_tokens": 0,
          "cache_read_input_tokens": 700, "output_tokens": 20}
for ev in (
    {"type": "system", "subtype": "init", "session_id": "claude-session-1", "tools": ["Bash"]},
    {"type": "assistant", "message": {"id": "msg_1", "role": "assistant", "usage": usage1,
     "content": [{"type": "text", "text": "Writing."}]}},
    {"type": "assistant", "message": {"id": "msg_1", "role": "assistant", "usage": usage1,
     "content": [{"type": "tool_use", "id": "tu_1", "name": "Bash",
                  "input": {"command": "echo hello > hello.txt"}}]}},
    {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "tu_1", "content": ""}]}},
    {"type": "assistant", "message": {"id": "msg_2", "role": "assistant", "usage": usage1,
     "content": [{"type": "text", "text": "Done."}]}},
    {"type": "result", "subtype": "success", "is_error": False, "num_turns": 2,
     "result": "Done.", "total_cost_usd": 0.0123,
     "usage": {"input_tokens": 100, "cache_creation_input_tokens": 50,
               "cache_read_input_tokens": 13700, "output_tokens": 25}},
):
    print(json.dumps(ev), flush=True)
"""


@pytest.fixture
def peers(tmp_path: Path) -> dict[str, str]:
    """A PATH with stand-in `codex` and `claude`, and the endpoints they must be given."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in (("codex", FAKE_CODEX), ("claude", FAKE_CLAUDE)):
        exe = bin_dir / name
        exe.write_text(f"#!{sys.executable}\n{body}")
        exe.chmod(0o755)
    return {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
    }


def test_codex_and_claude_side_by_side(tmp_path: Path, peers: dict[str, str]) -> None:
    hello_task(tmp_path / "suite")
    args = ["eval", "suite", "--agent", "codex", "--agent", "claude", "--model", "tiny-model"]
    proc = vtcode([*args, "--json"], tmp_path, env=peers)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    runs = {r["agent"]: r for r in doc["runs"]}
    codex, claude = runs["codex"], runs["claude"]
    assert codex["passed"] and claude["passed"], (codex, claude)
    assert codex["session_id"] == "codex-thread-1"
    assert (codex["tool_calls"], codex["turns"], codex["model_requests"]) == (1, 2, 2)
    assert (codex["prompt_tokens"], codex["completion_tokens"]) == (6100, 30)
    assert claude["session_id"] == "claude-session-1"
    assert (claude["tool_calls"], claude["turns"], claude["model_requests"]) == (1, 2, 2)
    assert claude["prompt_tokens"] == 100 + 50 + 13700
    assert claude["first_prompt_tokens"] == 13700 and claude["cost_usd"] == 0.0123
    assert [s["agent"] for s in doc["summary"]] == ["codex", "claude"]
    for run in (codex, claude):
        assert Path(run["log"]).name == "agent.stdout"
        seen = json.loads((Path(run["workspace"]).parent / "home" / "seen.json").read_text())
        if Sandbox().available:  # confined: a PID namespace of its own
            assert seen["pid"] < 100, seen


def test_a_peer_without_an_endpoint_or_model_is_a_usage_error(
    tmp_path: Path, peers: dict[str, str]
) -> None:
    hello_task(tmp_path / "suite")
    proc = vtcode(["eval", "suite", "--agent", "claude"], tmp_path, env=peers)
    assert proc.returncode == 2 and "needs --model" in proc.stderr
    env = {**peers, "OPENAI_BASE_URL": ""}
    proc = vtcode(["eval", "suite", "--agent", "codex", "--model", "m"], tmp_path, env=env)
    assert proc.returncode == 2 and "OPENAI_BASE_URL" in proc.stderr
    assert not (tmp_path / ".vtcode" / "evals").exists()  # refused before anything was written


def test_the_endpoint_can_come_from_the_provider_table(
    tmp_path: Path, peers: dict[str, str]
) -> None:
    hello_task(tmp_path / "suite")
    env = {**peers, "OPENAI_BASE_URL": ""}
    table = 'providers.openai.base_url="http://127.0.0.1:9/v1"'
    args = ["eval", "suite", "--agent", "codex", "--model", "tiny-model", "-c", table, "--json"]
    proc = vtcode(args, tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    [run] = json.loads(proc.stdout)["runs"]
    assert run["passed"], run


class _Refusing(BaseHTTPRequestHandler):
    """Every request: HTTP 400 with an Anthropic/OpenAI-style error body (not retried)."""

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        body = json.dumps(
            {"type": "error", "error": {"type": "invalid_request_error", "message": "no model"}}
        ).encode()
        self.send_response(400)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.mark.skipif(
    not (shutil.which("codex") and shutil.which("claude")),
    reason="not installed: npm install -g @openai/codex @anthropic-ai/claude-code",
)
def test_the_real_peers_accept_the_command_line_and_report_a_provider_error(
    tmp_path: Path,
) -> None:
    """The installed codex and claude, in vtcode's sandbox, against a 127.0.0.1 server that
    refuses every request: both start (their flags are right), and their own streams say the
    request failed, which the runner reads as provider_error."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
    )
    thread.start()
    try:
        port = server.server_address[1]
        hello_task(tmp_path / "suite")
        env = {
            "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        }
        args = ["eval", "suite", "--agent", "codex", "--agent", "claude", "--model", "tiny"]
        proc = vtcode([*args, "--jobs", "2", "--json"], tmp_path, env=env, timeout=180)
    finally:
        server.shutdown()
        server.server_close()
    assert proc.returncode == 0, proc.stderr
    runs = {r["agent"]: r for r in json.loads(proc.stdout)["runs"]}
    for agent in ("codex", "claude"):
        run = runs[agent]
        assert (run["failure"], run["exit_code"], run["timed_out"]) == (
            "provider_error",
            1,
            False,
        ), run
        assert run["outcome_subtype"] == "error_during_execution"
        assert run["wall_seconds"] < 60
        events = [json.loads(x) for x in Path(run["log"]).read_text().splitlines() if x]
        assert events, agent
    assert runs["claude"]["outcome_code"] == "api_error_400"
    assert runs["claude"]["model_requests"] == 0  # claude's synthetic error message is no request
