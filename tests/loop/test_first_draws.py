"""A compact run's first reply is drawn again when it could not change the folder.

qwen0.5b's first replies to one request vary: on the public suite's first requests it wrote the
shown file back unchanged in some draws and the change in others, and once a reply is in the
history it copies it (loop/first_draws.py). Through the real CLI against a llama.cpp-shaped
server that answers its queued replies in order; the folder's files are real.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from tests.conftest import ScriptedReply, SSEServer
from tests.exec_support import SESSION, canonical_snapshot, raw_events, vtcode
from tests.loop.test_text_tool_calls_cli import _config, _exec, chat_sse
from vtcode.loop import first_draws
from vtcode.loop.first_draws import first_reply_faults
from vtcode.loop.lead_in import LeadIn

F = "```"
TASK = "Fix the typo in notes.txt: recieve should be receive."
NOTES = "Please recieve the parcel.\n"
FIXED = "Please receive the parcel.\n"
COPY = f"notes.txt\n{F}\n{NOTES}{F}"  # the shown file written back as it is
FIX = f"notes.txt\n{F}\n{FIXED}{F}"
DONE = "The file is written."


def _run(
    tmp_path: Path,
    server: SSEServer,
    replies: list[str],
    *,
    draws: int = 4,
    task: str = TASK,
    extra: tuple[str, ...] = (),
) -> tuple[int, list[dict[str, Any]], str]:
    _config(tmp_path, server, "qwen0.5b", draws=draws)
    (tmp_path / "notes.txt").write_text(NOTES)
    for n, reply in enumerate(replies):
        server.queue(ScriptedReply.sse_bytes(chat_sse(reply, prompt_tokens=300 + n)))
    return _exec(tmp_path, task, *extra)


def _harness(events: list[dict[str, Any]], kind: str) -> list[str]:
    return [
        e["item"]["message"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "harness"
        and e["item"]["event"] == kind
    ]  # fmt: skip


def _replies(events: list[dict[str, Any]]) -> list[str]:
    return [
        e["item"]["text"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "agent_message"
    ]


def test_a_copy_of_the_shown_file_is_drawn_again_and_the_change_kept(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    code, events, err = _run(tmp_path, sse_server, [COPY, COPY, FIX, DONE])
    assert code == 0, err
    assert (tmp_path / "notes.txt").read_text() == FIXED
    bodies = [r.json() for r in sse_server.requests]
    assert len(bodies) == 4
    assert bodies[0]["messages"] == bodies[1]["messages"] == bodies[2]["messages"]
    # the run's own temperature first; the draws after it warmer, or they repeat the first
    assert [b["temperature"] for b in bodies] == [0.2, 0.7, 0.7, 0.2]
    (note,) = _harness(events, "error_recovered")[:1]
    assert note == (
        "first reply drawn 3 times (draw 1 changed no file; draw 2 changed no file; "
        "draw 3 could change the folder); kept draw 3"
    )
    # Only the kept draw is the model's reply; the others are in no history and no item.
    assert COPY not in _replies(events)
    assert all(COPY not in m["content"] for m in bodies[3]["messages"] if m["role"] == "assistant")
    # Each draw was a request: the first turn's usage is the three together.
    first_turn = next(e for e in events if e["type"] == "turn.completed")
    assert first_turn["usage"]["input_tokens"] == 300 + 301 + 302
    assert events[-1]["subtype"] == "success"
    assert canonical_snapshot(tmp_path) == snapshot_json


def test_when_every_draw_changes_nothing_the_first_is_kept_and_the_run_goes_on(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _code, events, err = _run(tmp_path, sse_server, [COPY, COPY, FIX, DONE], draws=2)
    assert len(sse_server.requests) >= 3, err
    (note, *_) = _harness(events, "error_recovered")
    assert note.startswith("first reply drawn 2 times (draw 1 changed no file; draw 2 changed")
    assert note.endswith("kept draw 1")
    # The run goes on as before: the copy was written back (nothing changed), the model told.
    assert (tmp_path / "notes.txt").read_text() in {NOTES, FIXED}


@pytest.mark.parametrize(
    ("draws", "task", "first", "requests_before_second_turn"),
    [
        (1, TASK, COPY, 1),  # first_reply_draws = 1: off
        (4, "What does notes.txt say?", "It asks to receive a parcel.", 1),  # only a question
        (4, TASK, f"{F}sh\nsed -i s/recieve/receive/ notes.txt\n{F}", 1),  # a command: kept
        (4, TASK, FIX, 1),  # a change at once
    ],
    ids=["off", "question", "command", "change"],
)
def test_a_reply_that_can_change_the_folder_or_a_run_without_draws_draws_once(
    tmp_path: Path, sse_server: SSEServer, draws: int, task: str, first: str,
    requests_before_second_turn: int,
) -> None:  # fmt: skip
    _code, events, err = _run(
        tmp_path, sse_server, [first, FIX, DONE, DONE], draws=draws, task=task
    )
    assert not [m for m in _harness(events, "error_recovered") if "drawn" in m], err
    assert _replies(events)[0] == first
    assert sse_server.requests[0].json()["messages"][-1]["role"] == "user"
    second = [r.json() for r in sse_server.requests][requests_before_second_turn:]
    # The second request (if any) already carries the first reply: it was not a draw.
    assert all(any(m["role"] == "assistant" and m["content"] == first for m in b["messages"])
               for b in second)  # fmt: skip


def test_a_resumed_run_never_draws(tmp_path: Path, sse_server: SSEServer) -> None:
    """Its first request carries the earlier turns: what the model copies is already there."""
    code, _events, err = _run(tmp_path, sse_server, [FIX, DONE])
    assert code == 0, err
    for reply in [COPY, DONE]:
        sse_server.queue(ScriptedReply.sse_bytes(chat_sse(reply)))
    proc = vtcode(
        ["exec", "--json", "--provider", "local", "resume", SESSION, "Fix it again."],
        tmp_path,
        env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""},
    )
    events = raw_events(proc.stdout)
    assert _replies(events)[0] == COPY, proc.stderr
    assert not [m for m in _harness(events, "error_recovered") if "drawn" in m]


CATALOG = {"read_file", "write_file", "exec_command", "list_files"}
BIG = "x = 1\n" * 2000  # too big to be shown whole


@pytest.mark.parametrize(
    ("reply", "task", "expected", "faults"),
    [
        ("I would fix the typo.", TASK, [], ["wrote no file and ran no command"]),
        (COPY, TASK, [], ["changed no file"]),
        (FIX, TASK, [], []),
        (FIX, "Count the words of notes.txt into count.txt. Do not change notes.txt.",
         ["count.txt"], ["changed no file", "left out count.txt"]),
        (f"{FIX}\n\ncount.txt\n{F}\n4\n{F}", "Write count.txt.", ["count.txt"], []),
        (f"greeting.txt\n{F}\nHello, world\n{F}", TASK, [], ["changed no file"]),
        (f"big.py\n{F}\nx = 2\n{F}", TASK, [], ["changed no file"]),  # never shown: refused
        (f"tool.py\n{F}\nimport os\\nimport sys\\n\\ndef f():\\n    return 1\\n\n{F}", TASK, [],
         ["changed no file"]),  # line breaks written as \n escapes: refused
        (f"{F}sh\nsed -i s/recieve/receive/ notes.txt\n{F}", TASK, [], []),
        (f"tool.py\n{F}\nimport os\n{F}", TASK, [],
         ["changed no file", "dropped a third or more of the lines of tool.py"]),
        (f"tool.py\n{F}\nimport os\n{F}", "Remove the function f from tool.py.", [], []),
        (f"tool.py\n{F}\nimport os\nimport sys\n\ndef f():\n    return 2\n{F}", TASK, [], []),
        ('{"name": "write_file", "arguments": {"path": "notes.txt", "content": "x"}}', TASK,
         [], []),
    ],
    ids=["prose", "copy", "change", "forbidden-and-missing", "both", "example", "unseen",
         "escaped", "command", "dropped-lines", "asked-to-remove", "shorter-change", "json-call"],
)  # fmt: skip
def test_what_a_first_reply_is_faulted_for(
    tmp_path: Path, reply: str, task: str, expected: list[str], faults: list[str]
) -> None:
    (tmp_path / "notes.txt").write_text(NOTES)
    (tmp_path / "big.py").write_text(BIG)
    (tmp_path / "tool.py").write_text("import os\nimport sys\n\n\ndef f():\n    return 1\n")

    def read(rel: str) -> str | None:
        return (tmp_path / rel).read_text() if (tmp_path / rel).is_file() else None

    lead = LeadIn(
        files="", shown=frozenset({"notes.txt", "tool.py"}), unseen=("big.py",), read=read,
        expected=list(expected),
    )  # fmt: skip
    got = first_reply_faults(reply, lead, tmp_path, task, CATALOG)
    assert list(got) == faults


def test_a_recorded_run_replays_with_the_same_draws(tmp_path: Path, sse_server: SSEServer) -> None:
    """`--record` keeps every draw as a turn; the replay draws them again the same way."""
    record = tmp_path / "run.toml"
    code, events, err = _run(
        tmp_path, sse_server, [COPY, FIX, DONE], extra=("--record", str(record))
    )
    assert code == 0, err
    drawn = _harness(events, "error_recovered")[0]
    (tmp_path / "notes.txt").write_text(NOTES)
    proc = vtcode(
        ["exec", "--json", "--session-id", "replayed", "--script", str(record),
         "-c", 'agent.harness.profile="compact"', "-c", "agent.harness.first_reply_draws=4",
         TASK],
        tmp_path,
    )  # fmt: skip
    replayed = raw_events(proc.stdout)
    assert proc.returncode == 0, proc.stderr
    assert _harness(replayed, "error_recovered")[0] == drawn
    assert _replies(replayed) == _replies(events)
    assert (tmp_path / "notes.txt").read_text() == FIXED


@pytest.mark.skipif(os.environ.get("VTCODE_TEST_EXEC") == "1", reason="patches the forked CLI")
def test_no_draw_starts_once_drawing_took_its_time(
    tmp_path: Path, sse_server: SSEServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a loaded CPU four draws used up an eval task's 300 s; past `DRAW_SECONDS` (here 0:
    every draw is past it) the first reply is kept as it was."""
    monkeypatch.setattr(first_draws, "DRAW_SECONDS", 0.0)
    _code, events, err = _run(tmp_path, sse_server, [COPY, FIX, DONE, DONE])
    assert not [m for m in _harness(events, "error_recovered") if "drawn" in m], err
    assert _replies(events)[0] == COPY


def test_a_reply_with_reasoning_is_judged_like_any_other(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """Reasoning before the text is no native tool call: the copy is still drawn again."""
    _config(tmp_path, sse_server, "qwen0.5b", draws=4)
    (tmp_path / "notes.txt").write_text(NOTES)
    thought = chat_sse(COPY).replace(
        b'"content": "', b'"reasoning_content": "thinking", "content": "', 1
    )
    sse_server.queue(ScriptedReply.sse_bytes(thought))
    for reply in [FIX, DONE]:
        sse_server.queue(ScriptedReply.sse_bytes(chat_sse(reply)))
    code, events, err = _exec(tmp_path, TASK)
    assert code == 0, err
    assert _harness(events, "error_recovered")[0].endswith("kept draw 2")
    assert (tmp_path / "notes.txt").read_text() == FIXED
