"""The decision ledger's own rules, in process: outcomes, the bound, call order, compaction."""

from __future__ import annotations

import threading

from vtcode.context.ledger import DecisionLedger, outcome_of
from vtcode.events.types import Usage
from vtcode.messages import LEDGER_NAME, Message, ModelRequest, ToolCall
from vtcode.runtime.ledger_part import LedgerPart


def test_outcomes_say_ok_exit_or_the_first_line_of_a_failure() -> None:
    assert outcome_of({"status": "completed", "exit_code": 0, "output": "x"}) == "ok"
    assert outcome_of({"status": "completed", "exit_code": 2, "output": "x"}) == "exit 2"
    failed = {"status": "failed", "exit_code": None, "output": "\nno such file\nmore"}
    assert outcome_of(failed) == "failed: no such file"


def test_the_newest_entries_are_kept_and_arguments_are_cut() -> None:
    ledger = DecisionLedger(max_entries=0)  # at least one, as upstream renders it
    ok = {"status": "completed", "exit_code": None, "output": ""}
    ledger.record(1, "read_file", {"path": "a"}, ok)
    ledger.record(2, "write_file", {"path": "b", "content": "x" * 500}, ok)
    (line,) = ledger.render().splitlines()[1:]
    assert line.startswith('- [turn 2] tool:write_file args={"content":"xxx')
    assert line.endswith("… -> ok")
    assert len(line.encode()) < 200


def _request(*calls: ToolCall) -> ModelRequest:
    messages = (Message(role="user", content="go"), Message(role="assistant", tool_calls=calls))
    return ModelRequest(model="m", messages=messages)


def test_concurrent_reads_are_entered_in_the_order_they_were_asked() -> None:
    part = LedgerPart(max_entries=12, include_in_prompt=True, preserve_in_compression=True)
    calls = [ToolCall(id=f"c{i}", name="read_file", arguments=f'{{"path": "{i}"}}') for i in "abc"]
    part.after_response(Usage())
    done = {"status": "completed", "exit_code": None, "output": ""}
    threads = [  # reported in the order they finished: c, a, b
        threading.Thread(target=part.post_tool, args=("read_file", {"path": p}, done))
        for p in "cab"
    ]
    for t in threads:
        t.start()
        t.join()
    sent = part.finish_request(_request(*calls))
    note = sent.messages[-1]
    assert note.name == LEDGER_NAME and note.role == "user"
    paths = [ln.split('"path":"')[1][0] for ln in note.content.splitlines()[2:]]
    assert paths == ["c", "b", "a"]  # most recent first: asked a, b, c


def test_a_compaction_empties_it_unless_preserved() -> None:
    for preserve in (True, False):
        part = LedgerPart(max_entries=12, include_in_prompt=True, preserve_in_compression=preserve)
        part.post_tool("list_files", {"path": "."}, {"status": "completed", "output": ""})
        part.finish_request(_request())
        part.compacted()
        kept = part.finish_request(_request()).messages[-1].name == LEDGER_NAME
        assert kept is preserve
