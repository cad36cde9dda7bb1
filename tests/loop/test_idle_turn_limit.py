"""`agent.idle_turn_limit` through the real CLI: an idle model (replies with no tool call that
the harness answers by asking again) ends the run as `stalled` instead of spending every retry.
"""

from __future__ import annotations

import json
from pathlib import Path

from syrupy.assertion import SnapshotAssertion

from tests.conftest import SSEServer
from tests.exec_support import normalise
from tests.loop.harness_support import configure, run_exec, text_sse


def _schema(tmp_path: Path) -> Path:
    path = tmp_path.parent / f"{tmp_path.name}.schema.json"
    path.write_text(json.dumps({"type": "object", "required": ["n"]}))
    return path


def test_an_idle_model_stalls_at_the_limit(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    configure(tmp_path, sse_server, "[agent]\nidle_turn_limit = 2\noutput_schema_retries = 5\n")
    for _ in range(6):
        sse_server.queue(text_sse("I am thinking about it."))
    code, events, stderr = run_exec(tmp_path, "--output-schema", str(_schema(tmp_path)), "go")
    assert code == 1, stderr
    assert len(sse_server.requests) == 2  # asked again once, then stalled before a third
    done = events[-1]
    assert done["type"] == "thread.completed"
    assert done["subtype"] == "error_during_execution"
    assert done["outcome_code"] == "stalled"
    assert "agent.idle_turn_limit = 2" in json.dumps(events)
    assert [normalise(e, tmp_path) for e in events] == snapshot_json


def test_under_the_limit_the_retries_run_out_first(tmp_path: Path, sse_server: SSEServer) -> None:
    configure(tmp_path, sse_server, "[agent]\nidle_turn_limit = 4\noutput_schema_retries = 1\n")
    for _ in range(3):
        sse_server.queue(text_sse("still thinking"))
    code, events, _ = run_exec(tmp_path, "--output-schema", str(_schema(tmp_path)), "go")
    assert code == 1
    assert len(sse_server.requests) == 2
    assert events[-1]["outcome_code"] == "output_schema_invalid"
