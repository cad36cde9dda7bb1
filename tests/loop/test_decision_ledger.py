"""The decision ledger (`[context.ledger]`) through the real CLI and a recording 127.0.0.1 server.

What the model is sent: once the run has made a tool call, every request ends with the ledger
(a user message named `decision_ledger`, after the history): upstream's "Decision Ledger (most
recent first)" with one line per call (turn, tool, arguments, outcome), at most `max_entries`.
`include_in_prompt = false` or `enabled = false` send none; `preserve_in_compression` decides
whether the entries survive a compaction. The ledger is never part of the history: the
transcript and the events do not hold it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from tests.conftest import SSEServer
from tests.exec_support import SESSION
from tests.loop.harness_support import configure, run_exec, text_sse, tool_calls_sse
from vtcode.messages import LEDGER_NAME


def _queue(server: SSEServer) -> None:
    server.queue(
        tool_calls_sse(("list_files", {"path": "."}), prefix="l"),
        tool_calls_sse(("write_file", {"path": "a.txt", "content": "alpha\n"}), prefix="w"),
        tool_calls_sse(("read_file", {"path": "missing.txt"}), prefix="r"),
        text_sse("Done."),
    )


def _ledgers(server: SSEServer) -> list[str | None]:
    """Per request: the ledger it ended with (None: none)."""
    out: list[str | None] = []
    for request in server.requests:
        body: dict[str, Any] = request.json()
        last = body["messages"][-1]
        if last.get("name") == LEDGER_NAME:
            assert last["role"] == "user"
            assert sum(m.get("name") == LEDGER_NAME for m in body["messages"]) == 1
            out.append(last["content"])
        else:
            out.append(None)
    return out


def test_every_request_after_a_call_carries_the_ledger(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    configure(tmp_path, sse_server)  # the defaults: enabled, in the prompt, 12 entries
    _queue(sse_server)
    code, _, stderr = run_exec(tmp_path, "write a.txt")
    assert code == 0, stderr
    ledgers = _ledgers(sse_server)
    assert ledgers[0] is None  # nothing decided yet
    assert all(ledger is not None for ledger in ledgers[1:])
    last = ledgers[3]
    assert last is not None
    lines = last.splitlines()
    assert lines[1] == "Decision Ledger (most recent first)"
    assert lines[2:] == [
        '- [turn 3] tool:read_file args={"path":"missing.txt"} -> failed: '
        "'missing.txt' does not exist",
        '- [turn 2] tool:write_file args={"content":"alpha\\n","path":"a.txt"} -> ok',
        '- [turn 1] tool:list_files args={"path":"."} -> ok',
    ]
    assert ledgers == snapshot_json
    transcript = (tmp_path / ".vtcode" / "sessions" / SESSION / "transcript.jsonl").read_text()
    events = (tmp_path / ".vtcode" / "sessions" / SESSION / "events.jsonl").read_text()
    assert "Decision Ledger" not in transcript and "Decision Ledger" not in events


def test_max_entries_bounds_it(tmp_path: Path, sse_server: SSEServer) -> None:
    configure(tmp_path, sse_server, "[context.ledger]\nmax_entries = 2\n")
    _queue(sse_server)
    code, _, stderr = run_exec(tmp_path, "write a.txt")
    assert code == 0, stderr
    last = _ledgers(sse_server)[3]
    assert last is not None
    assert [ln.split("]")[0] for ln in last.splitlines()[2:]] == ["- [turn 3", "- [turn 2"]


@pytest.mark.parametrize("toml", ["include_in_prompt = false", "enabled = false"])
def test_not_in_the_prompt_or_disabled_sends_none(
    tmp_path: Path, sse_server: SSEServer, toml: str
) -> None:
    configure(tmp_path, sse_server, f"[context.ledger]\n{toml}\n")
    _queue(sse_server)
    code, _, stderr = run_exec(tmp_path, "write a.txt")
    assert code == 0, stderr
    assert _ledgers(sse_server) == [None] * 4


def test_the_compact_harness_sends_none(tmp_path: Path, sse_server: SSEServer) -> None:
    configure(tmp_path, sse_server, '[agent.harness]\nprofile = "compact"\n')
    _queue(sse_server)
    code, _, stderr = run_exec(tmp_path, "write a.txt")
    assert code == 0, stderr
    assert _ledgers(sse_server) == [None] * 4


def _compacting_run(tmp_path: Path, server: SSEServer, preserve: bool) -> list[str | None]:
    big = (("b" * 79) + "\n") * 300  # about 6,000 estimated tokens
    (tmp_path / "big.txt").write_text(big)
    configure(
        tmp_path,
        server,
        "[agent.harness]\nauto_compaction_threshold_tokens = 5000\n"
        f"[context.ledger]\npreserve_in_compression = {str(preserve).lower()}\n",
    )
    server.queue(
        tool_calls_sse(("read_file", {"path": "big.txt"}), prefix="r"),
        tool_calls_sse(("list_files", {"path": "."}), prefix="l"),  # past the threshold now
        text_sse("The big file holds b's."),  # the compaction's summary
        text_sse("Read it."),
    )
    code, events, stderr = run_exec(tmp_path, "read big.txt")
    assert code == 0, stderr
    assert [e for e in events if e["type"] == "thread.compact_boundary"]
    return _ledgers(server)


def test_the_ledger_survives_a_compaction(tmp_path: Path, sse_server: SSEServer) -> None:
    ledgers = _compacting_run(tmp_path, sse_server, preserve=True)
    assert ledgers[-1] is not None
    assert ledgers[-1].splitlines()[2:] == [
        '- [turn 2] tool:list_files args={"path":"."} -> ok',
        '- [turn 1] tool:read_file args={"path":"big.txt"} -> ok',
    ]


def test_without_preserve_a_compaction_empties_it(tmp_path: Path, sse_server: SSEServer) -> None:
    ledgers = _compacting_run(tmp_path, sse_server, preserve=False)
    assert ledgers[-1] is None
