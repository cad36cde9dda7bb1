"""OpenTelemetry export: the span tree of real runs, and OTLP/HTTP to a real receiver.

In process, the real loop (replay provider, real tools, the real gate) feeds an `OtelExporter`
whose spans land in the SDK's `InMemorySpanExporter`: names, parent/child links, attributes,
statuses. Over the wire, a real `vtcode exec` subprocess exports to an http.server on 127.0.0.1
that decodes each `POST /v1/traces` body as an `ExportTraceServiceRequest`; an unreachable or
failing collector costs one warning and a bounded wait, never the run.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from tests.exec_support import SCRIPTS, SESSION, raw_events, vtcode
from vtcode.config.load import load_config
from vtcode.config.model import OtelConfig
from vtcode.runtime.exec_run import ExecRequest, run_exec
from vtcode.runtime.hooks import default_hooks_factory
from vtcode.telemetry import make_otel_exporter
from vtcode.telemetry.otel import OtelExporter, resolve_endpoint, resolve_timeout

# ------------------------------------------------------------------ in process


def run_spans(
    ws: Path, script: str, *extra: str, prompt: str = "do the task", max_turns: int | None = None
) -> tuple[list[ReadableSpan], Any]:
    """Run the real loop in process with an in-memory span exporter behind the gate."""
    memory = InMemorySpanExporter()
    exporter = OtelExporter(OtelConfig(enabled=True), SESSION, span_exporter=memory)
    cfg = load_config(workspace=ws, overrides=list(extra)).config
    result = run_exec(
        ExecRequest(
            workspace=ws,
            config=cfg,
            prompt=prompt,
            script=str(SCRIPTS / f"{script}.toml"),
            session_id=SESSION,
            max_turns=max_turns,
            sinks=[exporter],
            hooks_factory=default_hooks_factory,
            install_signals=False,
        )
    )
    return list(memory.get_finished_spans()), result


def by_name(spans: list[ReadableSpan], name: str) -> list[ReadableSpan]:
    return sorted((s for s in spans if s.name == name), key=lambda s: s.start_time or 0)


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def test_span_tree_of_a_tool_loop(tmp_path: Path) -> None:
    spans, result = run_spans(tmp_path, "scenario-tool-loop")
    assert result.exit_code == 0
    (root,) = by_name(spans, "vtcode.session")
    turns = by_name(spans, "vtcode.turn")
    tools = by_name(spans, "vtcode.tool")
    assert len(spans) == 1 + 4 + 3
    assert root.parent is None
    assert {s.context.trace_id for s in spans} == {root.context.trace_id}
    assert [parent_id(t) for t in turns] == [root.context.span_id] * 4
    assert [t.attributes["vtcode.turn.index"] for t in turns] == [1, 2, 3, 4]
    # each tool call is a child of the turn that asked for it
    assert [parent_id(t) for t in tools] == [turns[i].context.span_id for i in range(3)]
    assert [t.attributes["gen_ai.tool.name"] for t in tools] == [
        "write_file",
        "exec_command",
        "read_file",
    ]
    run_cmd = tools[1].attributes
    assert run_cmd["vtcode.tool.kind"] == "builtin"
    assert run_cmd["vtcode.tool.outcome"] == "success"
    assert run_cmd["vtcode.tool.status"] == "completed"
    assert run_cmd["vtcode.tool.exit_code"] == 0
    assert run_cmd["gen_ai.tool.call.id"] == "call_2"  # the replay numbers calls from 1
    # a tool span lies within its turn
    for tool, turn in zip(tools, turns, strict=False):
        assert turn.start_time <= tool.start_time <= tool.end_time <= turn.end_time
    assert turns[0].attributes["gen_ai.usage.input_tokens"] == 1200
    assert turns[1].attributes["vtcode.usage.cached_input_tokens"] == 1200
    attrs = root.attributes
    assert attrs["vtcode.session.id"] == attrs["vtcode.thread.id"] == SESSION
    assert (attrs["vtcode.outcome.subtype"], attrs["vtcode.outcome.code"]) == ("success", "success")
    assert attrs["vtcode.num_turns"] == 4
    assert attrs["gen_ai.usage.input_tokens"] == 6000
    assert attrs["gen_ai.usage.output_tokens"] == 110
    assert attrs["vtcode.cost_usd"] == pytest.approx(0.01965)
    assert root.status.status_code is StatusCode.OK
    assert all(s.status.status_code is not StatusCode.ERROR for s in spans)
    assert root.resource.attributes["service.name"] == "vtcode"


def test_failed_turns_and_refused_tools_are_errors(tmp_path: Path) -> None:
    spans, result = run_spans(tmp_path, "scenario-max-turns", max_turns=2)
    assert result.exit_code == 3
    (root,) = by_name(spans, "vtcode.session")
    assert root.status.status_code is StatusCode.ERROR
    assert root.status.description == "error_max_turns (turn_limit_reached)"
    last = by_name(spans, "vtcode.turn")[-1]
    assert last.status.status_code is StatusCode.ERROR
    assert str(last.attributes["vtcode.turn.failure"]).startswith("Stopped after reaching turn")

    spans, result = run_spans(
        tmp_path / "denied", "scenario-denied-tool", 'permissions.deny=["exec_command(rm *)"]'
    )
    (tool,) = by_name(spans, "vtcode.tool")
    assert tool.attributes["vtcode.tool.outcome"] == "permission_rejected"
    assert tool.status.status_code is StatusCode.ERROR
    # the warning item is an event on the turn
    turn = by_name(spans, "vtcode.turn")[0]
    assert any(e.name == "vtcode.warning" for e in turn.events)


def test_a_compaction_is_a_span_with_its_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VTCODE_TOKENIZER", "bytes")
    spans, result = run_spans(tmp_path, "context-auto", prompt="count the files")
    assert result.exit_code == 0
    (compaction,) = by_name(spans, "vtcode.compaction")
    (root,) = by_name(spans, "vtcode.session")
    assert parent_id(compaction) == root.context.span_id  # between turns
    attrs = compaction.attributes
    assert (attrs["vtcode.compaction.trigger"], attrs["vtcode.compaction.mode"]) == (
        "auto",
        "local",
    )
    assert attrs["vtcode.compaction.original_message_count"] > 0
    assert attrs["vtcode.compaction.compacted_message_count"] > 0
    assert str(attrs["vtcode.compaction.history_artifact_path"]).startswith(".vtcode/")


def test_mcp_calls_are_tool_spans(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    toolbox = Path(__file__).parents[1] / "mcp_servers" / "toolbox.py"
    spans, result = run_spans(
        tmp_path,
        "mcp-tools",
        f'mcp.servers.toolbox.command="{sys.executable}"',
        f'mcp.servers.toolbox.args=["{toolbox}"]',
        'automation.full_auto.allowed_tools=["mcp__*"]',
    )
    assert result.exit_code == 0
    tools = by_name(spans, "vtcode.tool")
    assert [
        (t.attributes["gen_ai.tool.name"], t.attributes["vtcode.tool.kind"]) for t in tools
    ] == [
        ("mcp__toolbox__echo", "mcp"),
        ("mcp__toolbox__add", "mcp"),
        ("mcp__toolbox__boom", "mcp"),
    ]
    assert [t.status.status_code for t in tools] == [
        StatusCode.UNSET,
        StatusCode.UNSET,
        StatusCode.ERROR,
    ]
    assert tools[2].attributes["vtcode.tool.outcome"] == "error"


def test_a_run_cut_short_still_ends_every_span() -> None:
    memory = InMemorySpanExporter()
    exporter = OtelExporter(OtelConfig(enabled=True), "s", span_exporter=memory)
    from vtcode.events.types import ThreadStartedEvent, TurnStartedEvent

    exporter.handle(ThreadStartedEvent(thread_id="s"))
    exporter.handle(TurnStartedEvent())
    exporter.finish()  # no thread.completed: e.g. the canonical log failed
    spans = memory.get_finished_spans()
    assert sorted(s.name for s in spans) == ["vtcode.session", "vtcode.turn"]
    (root,) = [s for s in spans if s.name == "vtcode.session"]
    assert root.status.description == "the run ended without thread.completed"


# ------------------------------------------------------------------ configuration


def test_endpoint_and_timeout_resolution() -> None:
    on = OtelConfig(enabled=True)
    assert resolve_endpoint(on, {}) == "http://localhost:4318/v1/traces"
    base = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"}
    assert resolve_endpoint(on, base) == "http://collector:4318/v1/traces"
    full = {**base, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://x.example/custom"}
    assert resolve_endpoint(on, full) == "https://x.example/custom"
    mine = replace(on, endpoint="http://127.0.0.1:9999")
    assert resolve_endpoint(mine, full) == "http://127.0.0.1:9999/v1/traces"
    already = replace(on, endpoint="http://h:1/v1/traces")
    assert resolve_endpoint(already, {}) == "http://h:1/v1/traces"
    assert resolve_timeout({}) == 5.0
    assert resolve_timeout({"OTEL_EXPORTER_OTLP_TIMEOUT": "2.5"}) == 2.5
    assert (
        resolve_timeout(
            {"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "1", "OTEL_EXPORTER_OTLP_TIMEOUT": "9"}
        )
        == 1
    )
    assert resolve_timeout({"OTEL_EXPORTER_OTLP_TIMEOUT": "soon"}) == 5.0
    assert resolve_timeout({"OTEL_EXPORTER_OTLP_TIMEOUT": "-1"}) == 5.0


def test_unusable_endpoint_or_missing_sdk_is_one_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[str] = []
    bad = OtelConfig(enabled=True, endpoint="localhost:4318")
    assert make_otel_exporter(bad, "s", env={}, warn=said.append) is None
    assert said == [
        "telemetry.otel.endpoint: 'localhost:4318/v1/traces' is not an http(s) URL; "
        "OpenTelemetry export is off for this run"
    ]
    monkeypatch.setitem(sys.modules, "vtcode.telemetry.otel", None)  # as if not installed
    said.clear()
    assert make_otel_exporter(OtelConfig(enabled=True), "s", env={}, warn=said.append) is None
    assert len(said) == 1 and "SDK cannot be imported" in said[0] and "pip install" in said[0]


def test_runs_without_otel_import_neither_sdk(tmp_path: Path) -> None:
    code = (
        "import sys, runpy\n"
        "sys.argv = ['vtcode', 'exec', '-q', '--script', sys.argv[1], 'hi']\n"
        "try:\n"
        "    runpy.run_module('vtcode', run_name='__main__')\n"
        "except SystemExit as e:\n"
        "    assert e.code in (0, None), e.code\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'opentelemetry', 'mcp'})\n"
        "print('heavy:', heavy)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(SCRIPTS / "scenario-success.toml")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "heavy: []"


# ------------------------------------------------------------------ over the wire


class OtlpReceiver:
    """A minimal OTLP/HTTP traces endpoint: decodes every protobuf POST to /v1/traces."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.requests: list[ExportTraceServiceRequest] = []
        self.content_types: list[str] = []
        self.paths: list[str] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                receiver.paths.append(self.path)
                receiver.content_types.append(self.headers.get("content-type", ""))
                if self.path == "/v1/traces" and receiver.status == 200:
                    msg = ExportTraceServiceRequest()
                    msg.ParseFromString(body)
                    receiver.requests.append(msg)
                    reply = b""  # an empty ExportTraceServiceResponse
                else:
                    reply = b"nope"
                self.send_response(receiver.status if self.path == "/v1/traces" else 404)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()

    def spans(self) -> list[tuple[Any, Any]]:
        """(resource, span) for every span received."""
        return [
            (rs.resource, span)
            for req in self.requests
            for rs in req.resource_spans
            for ss in rs.scope_spans
            for span in ss.spans
        ]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(10)


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    r = OtlpReceiver()
    try:
        yield r
    finally:
        r.close()


def exec_with_otel(ws: Path, endpoint: str, script: str, env: dict[str, str] | None = None) -> Any:
    return vtcode(
        [
            "-c",
            "telemetry.otel.enabled=true",
            "-c",
            f"telemetry.otel.endpoint={endpoint}",
            "-c",
            'telemetry.otel.service_name="vtcode-ci"',
            "exec",
            "--json",
            "--session-id",
            SESSION,
            "--script",
            str(SCRIPTS / f"{script}.toml"),
            "do the task",
        ],
        ws,
        env=env,
    )


def _attrs(kvs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in kvs:
        which = kv.value.WhichOneof("value")
        out[kv.key] = getattr(kv.value, which) if which else None
    return out


def test_exec_exports_the_span_tree_over_otlp_http(tmp_path: Path, receiver: OtlpReceiver) -> None:
    proc = exec_with_otel(tmp_path, receiver.url, "scenario-tool-loop")
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr.lower()
    assert raw_events(proc.stdout)[-1]["type"] == "thread.completed"
    assert set(receiver.paths) == {"/v1/traces"}
    assert set(receiver.content_types) == {"application/x-protobuf"}
    got = receiver.spans()
    resource = _attrs(got[0][0].attributes)
    assert resource["service.name"] == "vtcode-ci"
    spans = [s for _, s in got]
    names = sorted(s.name for s in spans)
    assert names == ["vtcode.session"] + ["vtcode.tool"] * 3 + ["vtcode.turn"] * 4
    (root,) = [s for s in spans if s.name == "vtcode.session"]
    assert root.parent_span_id == b""
    turns = {s.span_id for s in spans if s.name == "vtcode.turn"}
    assert all(s.parent_span_id == root.span_id for s in spans if s.name == "vtcode.turn")
    assert all(s.parent_span_id in turns for s in spans if s.name == "vtcode.tool")
    assert {s.trace_id for s in spans} == {root.trace_id}
    attrs = _attrs(root.attributes)
    assert attrs["vtcode.session.id"] == SESSION
    assert attrs["vtcode.outcome.subtype"] == "success"
    assert attrs["gen_ai.usage.input_tokens"] == 6000


def _one_warning(stderr: str) -> str:
    warnings = [line for line in stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1, stderr
    assert "Traceback" not in stderr
    return warnings[0]


def test_an_unreachable_collector_is_one_warning_and_a_bounded_wait(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started = time.monotonic()
    proc = exec_with_otel(
        tmp_path,
        f"http://127.0.0.1:{port}",
        "scenario-tool-loop",
        {"OTEL_EXPORTER_OTLP_TIMEOUT": "1"},
    )
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert raw_events(proc.stdout)[-1]["subtype"] == "success"
    line = _one_warning(proc.stderr)
    assert line.startswith(f"warning: OpenTelemetry export to http://127.0.0.1:{port}/v1/traces")
    assert "8 of 8 spans were not delivered" in line and "Connection refused" in line
    assert elapsed < 30, f"the run waited {elapsed:.1f}s on a dead collector"


def test_a_collector_that_refuses_the_batch_is_one_warning(tmp_path: Path) -> None:
    failing = OtlpReceiver(status=400)
    try:
        proc = exec_with_otel(tmp_path, failing.url, "scenario-success")
    finally:
        failing.close()
    assert proc.returncode == 0, proc.stderr
    line = _one_warning(proc.stderr)
    assert "spans were not delivered" in line and "400" in line
