"""Linear streaming (issue 11, deliverable 4) through the real CLI.

Every streamed snapshot repeats the whole text, so one `item.updated` per delta made the log
quadratic: a 64 KiB answer wrote 90 MB or filled the drain queue. Now text and reasoning update
only after doubling and tool arguments after 512 new bytes, at most 8 times. These tests stream
1 MiB answers (replay, and a real OpenAI-compatible SSE server on 127.0.0.1) and 1 MiB of tool
arguments, and check what a user sees: exit 0, `thread.completed` success (the queue never
saturated), a log under 4 bytes per answer byte that validates in full, stdout equal to the log,
the whole text in the completion. The snapshots record the update schedule as text sizes (the
texts themselves are megabytes), which is deterministic: replay and the test server chunk the
answer the same way every run.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from syrupy.assertion import SnapshotAssertion

from tests.conftest import ScriptedReply, SSEServer
from tests.exec_support import SESSION, canonical_lines, raw_events, vtcode
from vtcode.loop.recorder import MAX_TOOL_ARG_UPDATE_EVENTS

MIB = 1 << 20
OUTER_TIMEOUT = 300  # seconds: only a hung or quadratic run gets near this


def answer(size: int, seed: str = "") -> str:
    """`size` ASCII characters of prose (no escapes, so JSON bytes = text bytes + quotes)."""
    line = f"{seed}The quick brown fox jumps over the lazy dog, line "
    out: list[str] = []
    n = 0
    i = 0
    while n < size:
        piece = f"{line}{i}.\n"
        out.append(piece)
        n += len(piece)
        i += 1
    return "".join(out)[:size]


def toml_str(text: str) -> str:
    return json.dumps(text)  # a JSON string of ASCII is a valid TOML basic string


def shape(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events with texts and arguments replaced by their sizes (the update schedule)."""
    out: list[dict[str, Any]] = []
    for ev in events:
        entry: dict[str, Any] = {"type": ev["type"]}
        item = ev.get("item")
        if isinstance(item, dict):
            entry["item"] = item["type"]
            if isinstance(item.get("text"), str):
                entry["text_bytes"] = len(item["text"].encode())
            args = item.get("arguments")
            if args is not None:
                raw = args if isinstance(args, str) else json.dumps(args)
                entry["arguments_bytes"] = len(raw.encode())
            if "status" in item:
                entry["status"] = item["status"]
        if ev["type"] == "thread.completed":
            entry["subtype"] = ev["subtype"]
        out.append(entry)
    return out


def run(tmp_path: Path, args: list[str], env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """`vtcode exec --json ARGS`: exit 0, stdout = the log, the log valid in full."""
    proc = vtcode(
        ["exec", "--json", "--session-id", SESSION, *args, "Write it."],
        tmp_path,
        env=env,
        timeout=OUTER_TIMEOUT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "drain queue" not in proc.stderr
    events = raw_events(proc.stdout)
    assert [line["event"] for line in canonical_lines(tmp_path)] == events
    check = vtcode(["validate", str(log_path(tmp_path))], tmp_path, timeout=OUTER_TIMEOUT)
    assert check.returncode == 0, check.stdout + check.stderr
    assert events[-1]["type"] == "thread.completed"
    assert events[-1]["subtype"] == "success"
    return events


def log_path(workspace: Path) -> Path:
    return workspace / ".vtcode" / "sessions" / SESSION / "events.jsonl"


def completed_text(events: list[dict[str, Any]], kind: str) -> str:
    texts: list[str] = [
        e["item"]["text"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == kind
    ]
    assert len(texts) == 1
    return texts[0]


def assert_doubling(events: list[dict[str, Any]], kind: str) -> None:
    """Each update of a streamed text is at least twice the previous one (or +1 KiB)."""
    sizes = [
        len(e["item"]["text"].encode())
        for e in events
        if e["type"] in ("item.started", "item.updated") and e["item"]["type"] == kind
    ]
    assert sizes, kind
    for before, after in itertools.pairwise(sizes):
        assert after - before >= max(1024, before), sizes


def test_a_1_mib_replay_answer_keeps_the_log_linear(
    tmp_path: Path, snapshot_json: SnapshotAssertion
) -> None:
    text = answer(MIB)
    thinking = answer(64 * 1024, "Thinking: ")
    (tmp_path / "big.toml").write_text(
        f"[[turn]]\nreasoning = {toml_str(thinking)}\ntext = {toml_str(text)}\n"
    )
    events = run(tmp_path, ["--script", "big.toml"])
    assert completed_text(events, "agent_message") == text
    assert completed_text(events, "reasoning") == thinking
    assert events[-1]["result"] == text
    assert_doubling(events, "agent_message")
    assert_doubling(events, "reasoning")
    size = log_path(tmp_path).stat().st_size
    assert size < 4 * len(text), f"{size} log bytes for a {len(text)}-byte answer"
    assert shape(events) == snapshot_json


def test_a_1_mib_answer_from_an_openai_sse_server(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    text = answer(MIB)
    pieces = [text[i : i + 48] for i in range(0, len(text), 48)]
    body = "".join(
        "data: "
        + json.dumps({"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]})
        + "\n\n"
        for p in pieces
    )
    body += 'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n'
    body += "data: [DONE]\n\n"
    sse_server.queue(ScriptedReply.sse_bytes(body.encode(), chunk_size=16 * 1024))
    events = run(
        tmp_path,
        ["--provider", "openai", "--model", "m"],
        env={"OPENAI_BASE_URL": f"{sse_server.url}/v1", "OPENAI_API_KEY": ""},
    )
    assert completed_text(events, "agent_message") == text
    assert_doubling(events, "agent_message")
    size = log_path(tmp_path).stat().st_size
    assert size < 4 * len(text), f"{size} log bytes for a {len(text)}-byte answer"
    assert shape(events) == snapshot_json


def test_1_mib_of_streamed_tool_arguments(tmp_path: Path, snapshot_json: SnapshotAssertion) -> None:
    content = answer(MIB)
    (tmp_path / "big.toml").write_text(
        '[[turn]]\ntext = "Writing it."\nchunk_size = 32\n[[turn.tool_calls]]\n'
        'name = "write_file"\n'
        f'arguments = {{ path = "big.txt", content = {toml_str(content)} }}\n\n'
        '[[turn]]\ntext = "Done."\n'
    )
    events = run(tmp_path, ["--script", "big.toml"])
    assert (tmp_path / "big.txt").read_text() == content
    invocation = [e for e in events if e.get("item", {}).get("type") == "tool_invocation"]
    updates = [e for e in invocation if e["type"] == "item.updated"]
    assert 0 < len(updates) <= MAX_TOOL_ARG_UPDATE_EVENTS
    assert invocation[-1]["item"]["arguments"]["content"] == content
    assert shape(events) == snapshot_json
