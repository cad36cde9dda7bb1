"""`agent.harness.tool_result_clearing` through the real CLI and a recording 127.0.0.1 server.

What a user relies on: past `trigger_tokens`, the request the model receives has the oldest
tool results replaced by a placeholder, the last `keep_tool_uses` intact, and the run says so
(a local `thread.compact_boundary` with equal message counts: a new request segment, nothing
removed). Disabled, or under the trigger, every result goes out verbatim.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from syrupy.assertion import SnapshotAssertion

from tests.conftest import SSEServer
from tests.exec_support import normalise
from tests.loop.harness_support import configure, run_exec, text_sse, tool_calls_sse
from vtcode.context.clearing import CLEARED_PLACEHOLDER

FILES = ("a.txt", "b.txt", "c.txt")


def _workspace(tmp_path: Path) -> None:
    for name in FILES:  # about 6,000 estimated tokens each
        line = (name[0] * 79) + "\n"
        (tmp_path / name).write_text(line * 300)


def _queue(server: SSEServer) -> None:
    for i, name in enumerate(FILES):
        server.queue(tool_calls_sse(("read_file", {"path": name}), prefix=f"r{i}_"))
    server.queue(text_sse("read all three"))


def _tool_messages(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_old_tool_results_are_cleared_past_the_trigger(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    _workspace(tmp_path)
    configure(
        tmp_path,
        sse_server,
        "[agent.harness.tool_result_clearing]\nenabled = true\ntrigger_tokens = 9000\n"
        "keep_tool_uses = 1\nclear_at_least_tokens = 1\nclear_tool_inputs = true\n",
    )
    _queue(sse_server)
    code, events, stderr = run_exec(tmp_path, "read the three files")
    assert code == 0, stderr
    bodies = [r.json() for r in sse_server.requests]
    assert len(bodies) == 4
    # request 2 holds one result (under the trigger): verbatim
    assert CLEARED_PLACEHOLDER not in _tool_messages(bodies[1])
    # the last request: a and b cleared, c (the kept last one) whole
    last = _tool_messages(bodies[3])
    assert last[:2] == [CLEARED_PLACEHOLDER, CLEARED_PLACEHOLDER]
    assert last[2].count("c" * 79) == 300
    # cleared inputs: the calls' arguments are `{}`, the kept call's are not
    calls = [c for m in bodies[3]["messages"] for c in m.get("tool_calls") or []]
    assert [c["function"]["arguments"] for c in calls][:2] == ["{}", "{}"]
    assert "c.txt" in calls[2]["function"]["arguments"]
    # raw_events validated every event against schemas/thread-event.schema.json
    boundaries = [e for e in events if e["type"] == "thread.compact_boundary"]
    assert len(boundaries) == 2
    for b in boundaries:
        assert b["mode"] == "local"
        assert b["original_message_count"] == b["compacted_message_count"]
        assert b["previous_segment_id"] != b["new_segment_id"]
    assert [_path_free(normalise(e, tmp_path)) for e in events] == snapshot_json


def _path_free(event: dict[str, Any]) -> dict[str, Any]:
    """The prefix hash covers the system prompt, which names the workspace folder; outputs are
    cut (the assertions above read them whole)."""
    out = dict(event)
    item = out.get("item")
    if isinstance(item, dict) and isinstance(item.get("output"), str):
        out["item"] = {**item, "output": item["output"][:40]}
    for key in ("previous_prefix_hash", "new_prefix_hash"):
        if key in out:
            out[key] = "<prefix-hash>"
    for key in ("previous_segment_id", "new_segment_id"):
        if key in out:
            out[key] = out[key][: len("seg-000")]
    return out


def test_disabled_clearing_sends_every_result(tmp_path: Path, sse_server: SSEServer) -> None:
    _workspace(tmp_path)
    configure(
        tmp_path,
        sse_server,
        "[agent.harness.tool_result_clearing]\nenabled = false\ntrigger_tokens = 9000\n",
    )
    _queue(sse_server)
    code, events, stderr = run_exec(tmp_path, "read the three files")
    assert code == 0, stderr
    assert CLEARED_PLACEHOLDER not in _tool_messages(sse_server.requests[3].json())
    assert not [e for e in events if e["type"] == "thread.compact_boundary"]
