"""A compact run whose task asks for a change never ends `success` with the folder unchanged.

qwen0.5b on rename-symbol (2026-12-07) ran only the task's own check commands, which pass on the
untouched project, then said the function was renamed: the run was a success with nothing
renamed. The harness now takes the folder's fingerprint when the task is given
(`loop/folder_state.py`) and compares it when the model stops (`text_turn._ends_unchanged`).
Through the real CLI against a llama.cpp-shaped server; the folder's files are real.
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
from vtcode.loop import folder_state
from vtcode.loop.folder_state import fingerprint
from vtcode.loop.task_text import asks_for_a_change

F = "```"
TASK = "Rename the function calc_total to compute_total in cart.py and in main.py."
CART = "def calc_total(xs):\n    return sum(xs)\n"
MAIN = "from cart import calc_total\n\nprint(calc_total([1, 2]))\n"
RENAMED = "def compute_total(xs):\n    return sum(xs)\n"
MAIN_RENAMED = "from cart import compute_total\n\nprint(compute_total([1, 2]))\n"
RUN_MAIN = f"{F}sh\npython3 main.py\n{F}"  # a check: it passes on the untouched project
CLAIM = "The tests passed, so calc_total has been renamed to compute_total."


def _workspace(tmp_path: Path, server: SSEServer, extra: str = "") -> None:
    _config(tmp_path, server, "qwen0.5b", extra)
    (tmp_path / "cart.py").write_text(CART)
    (tmp_path / "main.py").write_text(MAIN)


def _queue(server: SSEServer, *replies: str) -> None:
    for reply in replies:
        server.queue(ScriptedReply.sse_bytes(chat_sse(reply)))


def _nudges(events: list[dict[str, Any]]) -> list[str]:
    return [
        e["item"]["error_category"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "harness"
        and e["item"]["event"] == "continuation_started"
    ]  # fmt: skip


def test_a_run_that_only_ran_checks_is_told_then_ends_unfinished(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    _workspace(tmp_path, sse_server)
    _queue(sse_server, RUN_MAIN, CLAIM, RUN_MAIN, CLAIM)
    code, events, err = _exec(tmp_path, TASK)
    assert code == 1, err
    done = events[-1]
    assert done["outcome_code"] == "unfinished_no_action" and done["subtype"] != "success"
    assert _nudges(events) == ["unchanged"]
    told = sse_server.requests[2].json()["messages"][-1]["content"]
    assert told.startswith("No file in the folder has changed since the task was given")
    assert "```sh" in told  # the form the compact run teaches, not JSON
    assert len(sse_server.requests) == 4
    assert (tmp_path / "cart.py").read_text() == CART  # nothing was changed by the harness
    assert canonical_snapshot(tmp_path) == snapshot_json


def test_after_the_nudge_a_change_makes_the_run_a_success(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _workspace(tmp_path, sse_server)
    blocks = f"cart.py\n{F}\n{RENAMED}{F}\n\nmain.py\n{F}\n{MAIN_RENAMED}{F}"
    _queue(sse_server, RUN_MAIN, CLAIM, blocks, "Both files are written.")
    code, events, err = _exec(tmp_path, TASK)
    assert code == 0 and events[-1]["outcome_code"] == "success", err
    assert _nudges(events) == ["unchanged"]
    assert (tmp_path / "main.py").read_text() == MAIN_RENAMED


def test_writing_a_file_back_as_it_was_is_no_change(tmp_path: Path, sse_server: SSEServer) -> None:
    """qwen0.5b rewrites the files it is shown; the same bytes written again change nothing."""
    _workspace(tmp_path, sse_server)
    same = f"cart.py\n{F}\n{CART}{F}"
    _queue(sse_server, same, CLAIM, same, "Renamed.")
    code, events, err = _exec(tmp_path, TASK)
    assert code == 1 and events[-1]["outcome_code"] == "unfinished_no_action", err
    assert _nudges(events)  # told once that nothing changed (the no-action nudge here)
    assert (tmp_path / "cart.py").read_text() == CART


def test_a_command_that_changes_a_file_is_a_change(tmp_path: Path, sse_server: SSEServer) -> None:
    """Not only the model's writes count: a `sed -i` that renames is the work."""
    _workspace(tmp_path, sse_server)
    sed = f"{F}sh\nsed -i 's/calc_total/compute_total/g' cart.py main.py\n{F}"
    _queue(sse_server, sed, "Renamed in both files.")
    code, events, err = _exec(tmp_path, TASK)
    assert code == 0 and events[-1]["outcome_code"] == "success", err
    assert _nudges(events) == []
    assert (tmp_path / "cart.py").read_text() == RENAMED


def test_a_task_that_asks_for_no_change_may_end_with_nothing_changed(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _workspace(tmp_path, sse_server)
    _queue(sse_server, RUN_MAIN, "It prints 3.")
    code, events, err = _exec(tmp_path, "Run main.py and tell me what it prints.")
    assert code == 0 and events[-1]["outcome_code"] == "success", err
    assert _nudges(events) == []


def test_with_nudges_off_the_run_ends_unfinished_at_once(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _workspace(tmp_path, sse_server, '[agent.harness]\ncontinuation_policy = "off"\n')
    _queue(sse_server, RUN_MAIN, CLAIM)
    code, events, err = _exec(tmp_path, TASK)
    assert code == 1 and events[-1]["outcome_code"] == "unfinished_no_action", err
    assert _nudges(events) == [] and len(sse_server.requests) == 2


def test_a_resumed_run_is_not_judged_by_what_it_changed(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """The first run did the work; a resumed run that only checks it changed nothing itself."""
    _workspace(tmp_path, sse_server)
    sed = f"{F}sh\nsed -i 's/calc_total/compute_total/g' cart.py main.py\n{F}"
    _queue(sse_server, sed, "Renamed in both files.")
    code, _events, err = _exec(tmp_path, TASK)
    assert code == 0, err
    _queue(sse_server, RUN_MAIN, "main.py still prints 3.")
    proc = vtcode(
        ["exec", "--json", "--provider", "local", "resume", SESSION, "Check that it still runs."],
        tmp_path,
        env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""},
    )
    events = raw_events(proc.stdout)
    assert proc.returncode == 0 and events[-1]["outcome_code"] == "success", proc.stderr
    assert _nudges(events) == []


@pytest.mark.parametrize(
    ("task", "change"),
    [
        (TASK, True),
        ("Fix the typo in README.md.", True),
        ("Could you please fix the failing test?", True),
        ("Read config.ini and write the port into a new file answer.txt.", True),
        ("Explain the code, then fix the bug.", True),
        ("Make the failing test pass.", True),
        ("Run the tests and tell me which fail.", False),
        ("What does main.py do?", False),
        ("Add up the amounts in sales.csv and tell me the total.", False),
        ("Run `make` and make sure it passes.", False),
        ("Do not change anything; list the files.", False),
        ("Find the commit that changed DEFAULT_PORT.", False),
        ("Explain how the cache works.", False),
        # a wish or a need, as users write it
        ("tally.py needs a `--min N` option.", True),
        ("I'd like the `Reading` class to be called `Measurement`.", True),
        ("I want the report to show the median too.", True),
        ("python3 main.py crashes. Can you get it working again?", True),
        ("Bump the version in VERSION to 2.0.", True),
        ("I want a summary of main.py.", False),
        ("I want you to explain the cache.", False),
    ],
)
def test_which_tasks_ask_for_a_change(task: str, change: bool) -> None:
    assert asks_for_a_change(task) is change


def test_the_fingerprint_sees_content_not_writes(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.txt").write_text("b\n")
    before = fingerprint(tmp_path)
    assert before is not None
    (tmp_path / "a.py").write_text("x = 1\n")  # the same bytes again
    os.utime(tmp_path / "a.py", ns=(1, 1))
    (tmp_path / "__pycache__").mkdir()  # what running the tests leaves
    (tmp_path / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    (tmp_path / ".vtcode").mkdir()
    (tmp_path / ".vtcode" / "log").write_text("session\n")
    assert fingerprint(tmp_path) == before
    (tmp_path / "sub" / "b.txt").write_text("c\n")  # same size, other bytes
    assert fingerprint(tmp_path) != before


@pytest.mark.parametrize("change", ["new file", "empty folder", "symlink", "removed", "mode"])
def test_every_kind_of_change_is_seen(tmp_path: Path, change: str) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    os.symlink("a.txt", tmp_path / "link")
    os.mkfifo(tmp_path / "pipe")  # listed, never opened: the walk does not block on it
    before = fingerprint(tmp_path)
    if change == "new file":
        (tmp_path / "b.txt").write_text("")
    elif change == "empty folder":
        (tmp_path / "out").mkdir()
    elif change == "symlink":
        os.remove(tmp_path / "link")
        os.symlink("elsewhere", tmp_path / "link")
    elif change == "removed":
        os.remove(tmp_path / "a.txt")
    else:  # a FIFO turned into a file of the same name
        os.remove(tmp_path / "pipe")
        (tmp_path / "pipe").write_text("")
    assert fingerprint(tmp_path) != before


def test_a_folder_too_big_to_walk_has_no_fingerprint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Then nothing is judged: `FolderWatch.unchanged` is never true without a fingerprint."""
    monkeypatch.setattr(folder_state, "MAX_ENTRIES", 5)
    for n in range(6):
        (tmp_path / f"f{n}").write_text("")
    assert fingerprint(tmp_path) is None
    watch = folder_state.FolderWatch()
    watch.start(tmp_path)
    assert not watch.unchanged(tmp_path)
    assert fingerprint(tmp_path / "missing") is None
