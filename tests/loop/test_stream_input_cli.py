"""`exec --input-format stream-json` through the real CLI against a recording 127.0.0.1 server
(issue 24.3).

What a script driving vtcode relies on: each JSON line is the next user turn of the same
session (the server sees the whole conversation grow), events stream on stdout as each turn
ends (the next line can wait for them), the end of input ends the run with one
`thread.completed`, and a bad line is exit 2 naming it, with everything before it kept.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from tests.conftest import ScriptedReply, SSEServer
from tests.exec_support import (
    SESSION,
    _env,
    canonical_lines,
    canonical_snapshot,
    raw_events,
    vtcode,
)
from tests.loop.test_text_tool_calls_cli import chat_sse
from tests.sdk_judge import judge_openai

ENV = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}
ARGS = ["exec", "--json", "--session-id", SESSION, "--provider", "local"]
STREAM = ["--input-format", "stream-json"]


def _setup(tmp_path: Path, server: SSEServer, answers: int) -> None:
    home = tmp_path / ".home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        f'[providers.local]\nkind = "openai"\nbase_url = "{server.url}/v1"\nmodel = "m"\n'
    )
    server.queue(*(ScriptedReply.sse_bytes(chat_sse(f"answer {n}")) for n in range(1, answers + 1)))


def _user_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


def test_three_streamed_turns_are_one_session(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    _setup(tmp_path, sse_server, 3)
    lines = [
        json.dumps({"type": "user", "message": {"role": "user", "content": "first"}}),
        "",  # blank lines are skipped
        json.dumps(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [{"type": "text", "text": "sec"}, {"type": "text", "text": "ond"}],
                },
            }
        ),
        json.dumps({"type": "user", "text": "third"}),
    ]
    proc = vtcode([*ARGS, *STREAM], tmp_path, env=ENV, input="\n".join(lines) + "\n")
    assert proc.returncode == 0, proc.stderr
    events = raw_events(proc.stdout)
    kinds = [e["type"] for e in events]
    assert kinds.count("turn.started") == kinds.count("turn.completed") == 3
    assert kinds.count("thread.completed") == 1 and kinds[-1] == "thread.completed"
    done = events[-1]
    assert (done["subtype"], done["outcome_code"], done["result"]) == (
        "success",
        "success",
        "answer 3",
    )
    assert done["num_turns"] == 3
    bodies = [r.json() for r in sse_server.requests]
    for body in bodies:
        judge_openai(body)
    assert [_user_texts(b) for b in bodies] == [
        ["first"],
        ["first", "sec\n\nond"],
        ["first", "sec\n\nond", "third"],
    ]
    assert bodies[2]["messages"][-2] == {"role": "assistant", "content": "answer 2"}
    assert canonical_snapshot(tmp_path) == snapshot_json


class _StdoutEvents:
    """The events of a running process's stdout, read by a thread as they come.

    Never `select` on the pipe and then `readline`: a readline can pull two lines into the
    text wrapper's buffer, and select then waits for bytes that were already read (this test
    once hung for 240 s on a `turn.completed` sitting in that buffer).
    """

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        self._lines: queue.Queue[str | None] = queue.Queue()
        stdout = proc.stdout

        def pump() -> None:
            for line in stdout:
                self._lines.put(line)
            self._lines.put(None)

        threading.Thread(target=pump, daemon=True).start()

    def until(self, kind: str, deadline: float) -> list[dict[str, Any]]:
        """Events up to the first of `kind` (bounded: fails past `deadline`)."""
        got: list[dict[str, Any]] = []
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"no {kind} in time; got {[e['type'] for e in got]}"
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                continue
            assert line is not None, f"stdout closed before {kind}"
            got.append(json.loads(line))
            if got[-1]["type"] == kind:
                return got


def test_each_turn_streams_before_the_next_line_is_read(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _setup(tmp_path, sse_server, 2)
    proc = subprocess.Popen(
        [sys.executable, "-m", "vtcode", *ARGS, *STREAM],
        cwd=tmp_path,
        env=_env(tmp_path, ENV),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    assert proc.stdin is not None
    events = _StdoutEvents(proc)
    try:
        deadline = time.monotonic() + 240  # a hang guard only: a loaded CI host is slow
        proc.stdin.write('{"type":"user","text":"one"}\n')
        proc.stdin.flush()
        first = events.until("turn.completed", deadline)
        assert first[-2]["item"]["text"] == "answer 1"
        assert len(sse_server.requests) == 1  # the second line is not written yet
        proc.stdin.write('{"type":"user","text":"two"}\n')
        proc.stdin.close()
        rest = events.until("thread.completed", deadline)
        assert rest[-1]["result"] == "answer 2"
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _spawn(tmp_path: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "vtcode", *ARGS, *STREAM, *extra],
        cwd=tmp_path,
        env=_env(tmp_path, ENV),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
    )


def test_sigint_while_waiting_for_the_next_line_ends_the_session(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _setup(tmp_path, sse_server, 1)
    proc = _spawn(tmp_path)
    assert proc.stdin is not None
    events = _StdoutEvents(proc)
    try:
        proc.stdin.write('{"type":"user","text":"one"}\n')
        proc.stdin.flush()
        events.until("turn.completed", time.monotonic() + 180)
        proc.send_signal(signal.SIGINT)  # stdin stays open: vtcode is waiting for a line
        rest = events.until("thread.completed", time.monotonic() + 100)
        assert (rest[-1]["subtype"], rest[-1]["outcome_code"]) == ("cancelled", "cancelled")
        assert proc.wait(30) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_output_schema_applies_to_each_streamed_turn(tmp_path: Path, sse_server: SSEServer) -> None:
    _setup(tmp_path, sse_server, 0)
    schema = tmp_path / "s.json"
    schema.write_text('{"type": "object", "required": ["ok"]}')
    sse_server.queue(
        ScriptedReply.sse_bytes(chat_sse('{"ok": 1}')),
        ScriptedReply.sse_bytes(chat_sse("no")),
        ScriptedReply.sse_bytes(chat_sse('{"ok": 2}')),
        ScriptedReply.sse_bytes(chat_sse("no")),
        ScriptedReply.sse_bytes(chat_sse("still no")),
    )
    stdin = "".join(f'{{"type":"user","text":"q{n}"}}\n' for n in range(3))
    proc = vtcode(
        [*ARGS, *STREAM, "--output-schema", str(schema), "-c", "agent.output_schema_retries=1"],
        tmp_path,
        env=ENV,
        input=stdin,
    )
    events = raw_events(proc.stdout)
    kinds = [e["type"] for e in events]
    # turn 1 valid; turn 2 valid after one retry; turn 3 never: the session ends with it
    assert kinds.count("turn.completed") == 2 and kinds.count("turn.failed") == 1
    assert len(sse_server.requests) == 5
    assert (events[-1]["outcome_code"], proc.returncode) == ("output_schema_invalid", 1)


def test_a_malformed_line_is_exit_2_naming_it_and_keeps_the_turns_before(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    _setup(tmp_path, sse_server, 3)
    stdin = '{"type":"user","text":"one"}\n{"type":"user","text":"two"}\n{"type":"user",\n'
    stdin += '{"type":"user","text":"never read"}\n'
    proc = vtcode([*ARGS, *STREAM], tmp_path, env=ENV, input=stdin)
    assert proc.returncode == 2, proc.stderr
    assert "<stdin>:3" in proc.stderr and "line 3 is not JSON" in proc.stderr
    assert "Traceback" not in proc.stderr
    events = raw_events(proc.stdout)
    done = events[-1]
    assert (done["type"], done["subtype"], done["outcome_code"]) == (
        "thread.completed",
        "error_during_execution",
        "input_error",
    )
    assert [e["type"] for e in events].count("turn.completed") == 2
    assert len(sse_server.requests) == 2
    # The log holds both turns and the end: nothing written is lost.
    logged = [e["event"] for e in canonical_lines(tmp_path)]
    assert logged[-1]["outcome_code"] == "input_error"
    assert logged[-2]["type"] == "error" and "<stdin>:3" in logged[-2]["message"]
    assert canonical_snapshot(tmp_path) == snapshot_json


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ("not json\n", "<stdin>:1: line 1 is not JSON"),
        ('{"type":"assistant","text":"x"}\n', "line 1 is not a user message"),
        ('{"type":"user"}\n', "line 1 has no message text"),
        (
            '\n{"type":"user","message":{"role":"user","content":[{"type":"image"}]}}\n',
            "<stdin>:2: line 2: content block 0 is not a text block ('image')",
        ),
        ('{"type":"user","message":{"role":"assistant","content":"x"}}\n', '"role": "user"'),
        ('{"type":"user","text":"  "}\n', "the message is empty"),
        ("\n\n", "stdin holds no user message"),
        (b"\xff\n", "line 1 is not UTF-8"),
    ],
)
def test_a_bad_first_line_is_exit_2_before_any_session(
    tmp_path: Path, sse_server: SSEServer, stdin: str | bytes, message: str
) -> None:
    _setup(tmp_path, sse_server, 0)
    proc = subprocess.run(
        [sys.executable, "-m", "vtcode", *ARGS, *STREAM],
        cwd=tmp_path,
        env=_env(tmp_path, ENV),
        input=stdin if isinstance(stdin, bytes) else stdin.encode(),
        capture_output=True,
        timeout=60,
        check=False,
    )
    stderr = proc.stderr.decode()
    assert proc.returncode == 2, stderr
    assert message in stderr and "Traceback" not in stderr
    assert proc.stdout == b""
    assert not sse_server.requests
    assert not (tmp_path / ".vtcode" / "sessions" / SESSION).exists()


def test_input_is_bounded_and_a_prompt_argument_is_refused(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _setup(tmp_path, sse_server, 1)
    big = '{"type":"user","text":"' + "x" * 200 + '"}\n'
    proc = vtcode(
        [*ARGS, *STREAM], tmp_path, env={**ENV, "VTCODE_MAX_STDIN_BYTES": "100"}, input=big
    )
    assert proc.returncode == 2
    assert "standard input is larger than 100 bytes" in proc.stderr
    assert not sse_server.requests
    proc = vtcode([*ARGS, *STREAM, "a prompt"], tmp_path, env=ENV, input=big)
    assert proc.returncode == 2 and "give no PROMPT" in proc.stderr


def test_resume_continues_a_session_from_streamed_lines(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _setup(tmp_path, sse_server, 2)
    first = vtcode([*ARGS, "hello"], tmp_path, env=ENV)
    assert first.returncode == 0, first.stderr
    proc = vtcode(
        ["exec", "resume", SESSION, "--json", "--provider", "local", *STREAM],
        tmp_path,
        env=ENV,
        input='{"type":"user","text":"and then"}\n',
    )
    assert proc.returncode == 0, proc.stderr
    assert raw_events(proc.stdout)[-1]["result"] == "answer 2"
    assert _user_texts(sse_server.requests[1].json()) == ["hello", "and then"]
