"""Tool retries (`agent.harness.max_tool_retries`) through the real `vtcode exec --json` CLI.

A real toolbox MCP server whose first calls of each tool stall past `timeout_seconds` (a live
server that gave no answer in time: the one transient failure vtcode knows). `lookup` is
annotated read-only and idempotent, so the harness sends it again after upstream's backoff and
records `tool_retry_attempted` (and `error_recovered` once it answers); `record` has no
annotations, so its timed-out call is never sent twice. The server's call log shows exactly the
attempts it received; the event sequence is snapshot-tested and every line schema-checked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from tests.exec_support import SESSION, canonical_lines, normalise, raw_events, vtcode
from tests.tools.test_mcp_exec import items, run_exec, wait_gone, write_config


def _run(tmp_path: Path, stalls: int, *extra: str) -> tuple[list[dict[str, Any]], list[str]]:
    log = tmp_path / "calls.log"
    pids = write_config(
        tmp_path,
        {"toolbox": ["--stall-calls", str(stalls), "--call-log", str(log)]},
        timeout=1.0,
    )
    proc = run_exec(tmp_path, "mcp-retry", *extra)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    events = raw_events(proc.stdout)  # each validated against thread-event.schema.json
    assert [line["event"] for line in canonical_lines(tmp_path)] == events
    checked = vtcode(
        ["validate", str(tmp_path / ".vtcode" / "sessions" / SESSION / "events.jsonl")], tmp_path
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    wait_gone(pids["toolbox"], timeout=0.5)
    return events, log.read_text().splitlines()


def test_a_timed_out_idempotent_call_is_retried_and_recovers(
    tmp_path: Path, snapshot_json: Any
) -> None:
    events, calls = _run(tmp_path, 1)
    assert calls == ["lookup alpha", "lookup alpha", "record beta"]  # record: never twice
    lookup, record = items(events, "mcp_tool_call")
    assert (lookup["status"], lookup["result"]) == ("completed", "value of alpha")
    assert record["status"] == "failed"
    assert record["result"] == "MCP tool mcp__toolbox__record gave no answer within 1s"
    retry, recovered = items(events, "harness")
    assert retry["event"] == "tool_retry_attempted"
    assert (retry["attempt"], retry["error_category"]) == (1, "timeout")
    assert retry["message"] == (
        "mcp__toolbox__lookup: MCP tool mcp__toolbox__lookup gave no answer within 1s; "
        "retry 1 after 200ms"
    )
    assert recovered["event"] == "error_recovered" and recovered["attempt"] == 1
    assert events[-1]["subtype"] == "success"
    assert [normalise(e, tmp_path) for e in events] == snapshot_json(name="raw")


def test_retries_stop_at_max_tool_retries(tmp_path: Path) -> None:
    events, calls = _run(tmp_path, 5, "-c", "agent.harness.max_tool_retries=1")
    assert calls == ["lookup alpha", "lookup alpha", "record beta"]
    lookup, _ = items(events, "mcp_tool_call")
    assert lookup["status"] == "failed"
    assert lookup["result"] == (
        "MCP tool mcp__toolbox__lookup gave no answer within 1s (tried 2 times)"
    )
    (retry,) = items(events, "harness")  # no error_recovered: it never answered
    assert retry["event"] == "tool_retry_attempted" and retry["attempt"] == 1


def test_zero_retries_sends_every_call_once(tmp_path: Path) -> None:
    events, calls = _run(tmp_path, 1, "-c", "agent.harness.max_tool_retries=0")
    assert calls == ["lookup alpha", "record beta"]
    assert not items(events, "harness")
    lookup, _ = items(events, "mcp_tool_call")
    assert lookup["result"] == "MCP tool mcp__toolbox__lookup gave no answer within 1s"
