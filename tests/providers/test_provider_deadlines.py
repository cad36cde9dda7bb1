"""Provider deadlines through the real CLI (issue 11, deliverable 5, provider part).

A real HTTP server on 127.0.0.1 speaks the OpenAI chat-completions and Anthropic messages SSE
formats and never finishes: endless deltas, endless keep-alives (`: ping` comments, Anthropic
`event: ping`), or headers and then silence. `vtcode exec --json` runs against it with small
`agent.request_timeout_secs` / `agent.stream_idle_timeout_secs`; each run must end by itself
with exit 1, a valid log whose `thread.completed` is `error_during_execution` (stop reason
`error`) with an error item naming the limit and its configured value, and a partial answer
marked torn by an error item, never a finished answer. The only clock in the tests is a
generous outer timeout.
"""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from tests.exec_support import SESSION, canonical_lines, raw_events, spawn_vtcode, vtcode
from vtcode.providers.deadline import Deadlines, RequestClock

OUTER_TIMEOUT = 120  # seconds: only a hung run gets near this

Body = Callable[["Stream"], None]


class Stream:
    """What a handler writes: raw SSE bytes, until the client hangs up or the server stops."""

    def __init__(self, handler: BaseHTTPRequestHandler, stop: threading.Event) -> None:
        self._h = handler
        self.stop = stop

    def send(self, data: str) -> bool:
        """False once the client is gone."""
        try:
            self._h.wfile.write(data.encode())
            self._h.wfile.flush()
        except OSError:
            return False
        return True

    def forever(self, data: str, pace: float) -> None:
        """Send `data` every `pace` seconds until the client hangs up (the server's own pace)."""
        while not self.stop.is_set() and self.send(data):
            self.stop.wait(pace)


class EndlessServer:
    """POST answers: 200 text/event-stream, then `body(stream)`; counts the requests."""

    def __init__(self, body: Body) -> None:
        self.requests = 0
        self.stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                server.requests += 1
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                self.wfile.flush()
                body(Stream(self, server.stop))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(10)


def _openai_delta(text: str) -> str:
    chunk = {"id": "c1", "choices": [{"index": 0, "delta": {"content": text}}]}
    return f"data: {json.dumps(chunk)}\n\n"


def _anthropic(kind: str, data: dict[str, Any]) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"


ANTHROPIC_START = _anthropic(
    "message_start",
    {"message": {"id": "m1", "role": "assistant", "usage": {"input_tokens": 5}}},
) + _anthropic("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}})


def _anthropic_text(text: str) -> str:
    return _anthropic(
        "content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": text}}
    )


def openai_endless_deltas(s: Stream) -> None:
    s.forever(_openai_delta("never ending "), 0.002)


def openai_text_then_pings(s: Stream) -> None:
    if s.send(_openai_delta("Let me think about that.")):
        s.forever(": ping\n\n", 0.05)


def silent_after_headers(s: Stream) -> None:
    s.stop.wait(60)


def anthropic_endless_deltas(s: Stream) -> None:
    if s.send(ANTHROPIC_START):
        s.forever(_anthropic_text("never ending "), 0.002)


def anthropic_text_then_pings(s: Stream) -> None:
    if s.send(ANTHROPIC_START + _anthropic_text("Let me think about that.")):
        s.forever(_anthropic("ping", {}), 0.05)


CASES: dict[str, tuple[str, Body, list[str], str]] = {
    # name: (provider, server body, -c settings, the error line naming the limit)
    "openai-endless-deltas": (
        "openai",
        openai_endless_deltas,
        ["agent.request_timeout_secs=1.5", "agent.stream_idle_timeout_secs=30"],
        "openai request timed out: no complete response within 1.5 s (agent.request_timeout_secs)",
    ),
    "openai-endless-pings": (
        "openai",
        openai_text_then_pings,
        ["agent.request_timeout_secs=60", "agent.stream_idle_timeout_secs=1"],
        "openai stream stalled: nothing received for 1 s "
        "(agent.stream_idle_timeout_secs; keep-alive pings do not count)",
    ),
    "openai-headers-then-nothing": (
        "openai",
        silent_after_headers,
        ["agent.request_timeout_secs=60", "agent.stream_idle_timeout_secs=1"],
        "openai stream stalled: nothing received for 1 s "
        "(agent.stream_idle_timeout_secs; keep-alive pings do not count)",
    ),
    "anthropic-endless-deltas": (
        "anthropic",
        anthropic_endless_deltas,
        ["agent.request_timeout_secs=1.5", "agent.stream_idle_timeout_secs=30"],
        "anthropic request timed out: no complete response within 1.5 s "
        "(agent.request_timeout_secs)",
    ),
    "anthropic-endless-pings": (
        "anthropic",
        anthropic_text_then_pings,
        ["agent.request_timeout_secs=60", "agent.stream_idle_timeout_secs=1"],
        "anthropic stream stalled: nothing received for 1 s "
        "(agent.stream_idle_timeout_secs; keep-alive pings do not count)",
    ),
    "anthropic-headers-then-nothing": (
        "anthropic",
        silent_after_headers,
        ["agent.request_timeout_secs=1", "agent.stream_idle_timeout_secs=0"],
        "anthropic request timed out: no complete response within 1 s (agent.request_timeout_secs)",
    ),
}


@pytest.fixture
def endless() -> Iterator[Callable[[Body], EndlessServer]]:
    servers: list[EndlessServer] = []

    def start(body: Body) -> EndlessServer:
        servers.append(EndlessServer(body))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def run_exec(
    tmp_path: Path, provider: str, server: EndlessServer, settings: list[str]
) -> tuple[int, list[dict[str, Any]], str]:
    env_var = "OPENAI_BASE_URL" if provider == "openai" else "ANTHROPIC_BASE_URL"
    base = f"{server.url}/v1" if provider == "openai" else server.url
    args = ["exec", "--json", "--provider", provider, "--model", "m", "--session-id", SESSION]
    for kv in settings:
        args += ["-c", kv]
    proc = vtcode(
        [*args, "Answer the question."],
        tmp_path,
        env={env_var: base, "OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""},
        timeout=OUTER_TIMEOUT,
    )
    return proc.returncode, raw_events(proc.stdout), proc.stderr


def shape(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The event sequence without what timing decides (how much text, how many updates)."""
    out: list[dict[str, Any]] = []
    for ev in events:
        kind = ev["type"]
        item = ev.get("item") or {}
        entry: dict[str, Any] = {"type": kind}
        if item:
            entry["item_type"] = item["type"]
            if item["type"] in ("agent_message", "reasoning") and kind == "item.completed":
                # How much of an endless stream arrived (even which words) is timing; that
                # some text arrived and was kept as sent is not.
                entry["has_text"] = bool(item["text"].strip())
            elif item["type"] == "error":
                entry["message"] = item["message"]
        if kind in ("turn.failed", "error"):
            entry["message"] = ev["message"]
        if kind == "thread.completed":
            for k in ("subtype", "outcome_code", "stop_reason", "num_turns"):
                entry[k] = ev.get(k)
        if kind == "item.updated":
            continue  # how many updates a timed stream gets is timing (the validator checks them)
        out.append(entry)
    return out


def assert_log_valid(tmp_path: Path, events: list[dict[str, Any]]) -> None:
    lines = canonical_lines(tmp_path)  # every line schema-valid, seq 1..n
    assert [line["event"] for line in lines] == events  # stdout showed exactly the log
    log = tmp_path / ".vtcode" / "sessions" / SESSION / "events.jsonl"
    check = vtcode(["validate", str(log)], tmp_path, timeout=OUTER_TIMEOUT)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize("case", list(CASES))
def test_endless_stream_ends_at_its_deadline(
    tmp_path: Path,
    endless: Callable[[Body], EndlessServer],
    case: str,
    snapshot_json: SnapshotAssertion,
) -> None:
    provider, body, settings, why = CASES[case]
    server = endless(body)
    settings = [*settings, "agent.max_task_retries=0"]
    rc, events, stderr = run_exec(tmp_path, provider, server, settings)
    assert rc == 1, stderr
    done = events[-1]
    assert done["type"] == "thread.completed"
    assert done["subtype"] == "error_during_execution"
    assert done["stop_reason"] == "error"  # a stop reason; the why is in the error items
    assert why in stderr
    assert server.requests == 1  # no retries were allowed
    texts = [
        e["item"]["text"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "agent_message"
    ]
    errors = [
        e["item"]["message"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "error"
    ]
    # The harness says why the run ended in the thread-level error event, never as the
    # model's message.
    assert [e["message"] for e in events if e["type"] == "error"] == [f"provider error: {why}"]
    assert "result" not in done
    if "nothing" not in case:  # text arrived before the deadline: kept as sent, marked torn
        assert len(texts) == 1 and "cut short" not in texts[0]
        assert errors[0] == f"response cut short: {why}; the message above is incomplete"
    else:
        assert texts == [] and errors == []
    assert_log_valid(tmp_path, events)
    assert shape(events) == snapshot_json


def test_sigint_mid_stream_closes_the_text_as_cut_short(
    tmp_path: Path, endless: Callable[[Body], EndlessServer], snapshot_json: SnapshotAssertion
) -> None:
    """A cancelled stream's partial answer is not reported as a finished message either."""
    server = endless(openai_text_then_pings)
    args = ["exec", "--json", "--provider", "openai", "--model", "m", "--session-id", SESSION]
    proc = spawn_vtcode(
        [*args, "Answer the question."],
        tmp_path,
        env={"OPENAI_BASE_URL": f"{server.url}/v1", "OPENAI_API_KEY": ""},
    )
    assert proc.stdout is not None
    shown: list[str] = []
    for line in proc.stdout:  # the answer has started streaming: interrupt it
        shown.append(line)
        if json.loads(line).get("item", {}).get("type") == "agent_message":
            break
    proc.send_signal(signal.SIGINT)
    shown.append(proc.stdout.read())
    proc.wait(timeout=OUTER_TIMEOUT)
    assert proc.returncode == 130, proc.stderr.read() if proc.stderr else ""
    events = raw_events("".join(shown))
    assert events[-1]["subtype"] == "cancelled"
    texts = [
        e["item"]["text"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "agent_message"
    ]
    assert texts[0] == "Let me think about that."  # only what the model sent
    errors = [
        e["item"]["message"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "error"
    ]
    assert errors[0] == "response cut short: cancelled; the message above is incomplete"
    # The server never reported usage, yet tokens were spent: an estimate is counted and said.
    [estimate] = [m for m in errors if m.startswith("usage estimated: ")]
    done = events[-1]["usage"]
    assert done["input_tokens"] > 0 and done["output_tokens"] > 0
    assert f"about {done['input_tokens']} input and {done['output_tokens']} output" in estimate
    assert_log_valid(tmp_path, events)
    shaped = [
        {**e, "message": "usage estimated: …"}
        if e.get("message", "").startswith("usage estimated: ")
        else e
        for e in shape(events)
    ]  # the figures depend on how much arrived before the signal
    assert shaped == snapshot_json


def test_retries_of_a_timed_out_stream_are_bounded(
    tmp_path: Path, endless: Callable[[Body], EndlessServer]
) -> None:
    """Each attempt has its own deadline; `agent.max_task_retries` bounds how many there are."""
    server = endless(openai_text_then_pings)
    settings = [
        "agent.request_timeout_secs=60",
        "agent.stream_idle_timeout_secs=0.5",
        "agent.max_task_retries=2",
        "agent.task_retry_backoff_secs=0.01",
    ]
    rc, events, stderr = run_exec(tmp_path, "openai", server, settings)
    assert rc == 1, stderr
    assert server.requests == 3
    cut = [
        e for e in events if e["type"] == "item.completed" and e["item"]["type"] == "agent_message"
    ]
    assert len(cut) == 3  # three partial answers, each marked torn by the error item after it
    errors = [
        e["item"]["message"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "error"
    ]
    assert sum(m.startswith("response cut short: ") for m in errors) == 3
    stalled = "provider error: openai stream stalled: nothing received for 0.5 s"
    [thread_error] = [e["message"] for e in events if e["type"] == "error"]
    assert thread_error.startswith(stalled)
    assert events[-1]["stop_reason"] == "error"
    assert_log_valid(tmp_path, events)


@pytest.mark.parametrize(
    ("setting", "shown"),
    [
        (
            "agent.request_timeout_secs=-1",
            "agent.request_timeout_secs: -1.0 is below the minimum 0",
        ),
        (
            "agent.stream_idle_timeout_secs=-0.5",
            "agent.stream_idle_timeout_secs: -0.5 is below the minimum 0",
        ),
        ("agent.stream_idle_timeout_secs=nan", "agent.stream_idle_timeout_secs: expected a finite"),
    ],
)
def test_a_bad_deadline_is_exit_2(
    tmp_path: Path, endless: Callable[[Body], EndlessServer], setting: str, shown: str
) -> None:
    server = endless(silent_after_headers)
    proc = vtcode(
        ["exec", "--provider", "openai", "--model", "m", "-c", setting, "hi"],
        tmp_path,
        env={"OPENAI_BASE_URL": f"{server.url}/v1"},
        timeout=OUTER_TIMEOUT,
    )
    assert proc.returncode == 2, proc.stderr
    assert shown in proc.stderr
    assert "Traceback" not in proc.stderr
    assert server.requests == 0


def test_zero_means_no_limit() -> None:
    assert not Deadlines().any
    assert Deadlines(total=0, idle=0).read_timeout(120.0) == 120.0
    assert Deadlines(total=600, idle=120).read_timeout(120.0) == 120.0
    assert Deadlines(total=1, idle=300).read_timeout(120.0) == 1
    assert Deadlines(total=0, idle=300).read_timeout(120.0) == 300


def test_the_watchdog_fires_at_the_deadline_and_stops_with_the_request() -> None:
    fired = threading.Event()
    clock = RequestClock("openai", Deadlines(idle=0.2), fired.set).start()
    assert fired.wait(OUTER_TIMEOUT)  # no read in progress: the watchdog alone noticed
    assert clock.expired() == "idle"
    assert clock.error().message.startswith("openai stream stalled: nothing received for 0.2 s")
    clock.stop()
    calm = threading.Event()
    clock = RequestClock("anthropic", Deadlines(total=3600, idle=3600), calm.set).start()
    clock.progress()
    clock.stop()
    assert not [t for t in threading.enumerate() if t.name.endswith("-deadline")]
    assert not calm.is_set() and clock.expired() is None
