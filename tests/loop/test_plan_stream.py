"""A planning turn's text streams as a plan item: started empty, `plan.delta`s, completed.

The chat drives it end to end (tests/chat/test_chat_tmux.py::test_plan_approval); these cases
are the stream shapes a replay script cannot produce: one-character deltas, a plan with no line
end, whitespace only, a stream torn mid-plan. In each, the deltas concatenate to exactly the
completed text and the log passes `vtcode validate --strict`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from vtcode.events.types import ThreadEvent, ThreadStartedEvent, TurnCompletedEvent, Usage
from vtcode.jsontypes import encode
from vtcode.loop.recorder import MAX_PLAN_DELTA_BYTES, Recorder


def _stream(pieces: list[str], *, torn: bool = False) -> list[dict[str, Any]]:
    events: list[ThreadEvent] = [ThreadStartedEvent(thread_id="t")]
    rec = Recorder(events.append)
    rec.turn_started()
    plan = rec.plan("t", "turn-1")
    for piece in pieces:
        plan.push(piece)
    if torn:
        plan.abort()
    else:
        plan.finish()
    rec.turn_completed(Usage())
    assert isinstance(events[-1], TurnCompletedEvent)
    return [json.loads(json.dumps(encode(e))) for e in events]


def _strict_valid(events: list[dict[str, Any]], tmp_path: Path) -> None:
    log = tmp_path / "plan.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    proc = subprocess.run(
        [sys.executable, "-m", "vtcode", "validate", "--strict", "--partial", str(log)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _plan_events(events: list[dict[str, Any]]) -> tuple[dict[str, Any], list[str], dict[str, Any]]:
    started, *deltas, completed = [
        e for e in events if e["type"] in ("item.started", "item.completed", "plan.delta")
    ]
    assert started["type"] == "item.started" and started["item"] == {
        "id": "item_0",
        "type": "plan",
        "text": "",
    }
    assert completed["type"] == "item.completed" and completed["item"]["id"] == "item_0"
    assert {(d["thread_id"], d["turn_id"], d["item_id"]) for d in deltas} <= {
        ("t", "turn-1", "item_0")
    }
    return started, [d["delta"] for d in deltas], completed


@pytest.mark.parametrize("torn", [False, True])
def test_one_character_deltas_coalesce_at_line_ends(tmp_path: Path, torn: bool) -> None:
    text = "".join(f"{i}. step number {i}\n" for i in range(1, 40))
    cut = len(text) // 2 if torn else len(text)
    events = _stream(list(text[:cut]), torn=torn)
    _, deltas, completed = _plan_events(events)
    assert "".join(deltas) == completed["item"]["text"] == text[:cut]
    assert all(d.endswith("\n") for d in deltas[:-1])  # one delta per line, not per character
    assert len(deltas) == text[:cut].count("\n") + (not text[:cut].endswith("\n"))
    _strict_valid(events, tmp_path)


def test_a_plan_without_line_ends_goes_out_in_bounded_pieces(tmp_path: Path) -> None:
    text = "x" * (5 * MAX_PLAN_DELTA_BYTES + 17)
    events = _stream([text[i : i + 7] for i in range(0, len(text), 7)])
    _, deltas, completed = _plan_events(events)
    assert "".join(deltas) == completed["item"]["text"] == text
    assert all(MAX_PLAN_DELTA_BYTES <= len(d) < MAX_PLAN_DELTA_BYTES + 7 for d in deltas[:-1])
    per = -(-MAX_PLAN_DELTA_BYTES // 7) * 7  # whole 7-byte pieces until the bound is reached
    assert len(deltas) == -(-len(text) // per) == 5
    _strict_valid(events, tmp_path)


def test_leading_whitespace_is_kept_and_blank_text_records_nothing(tmp_path: Path) -> None:
    events = _stream(["\n", "  ", "1. do it"])
    _, deltas, completed = _plan_events(events)
    assert completed["item"]["text"] == "\n  1. do it" == "".join(deltas)
    blank = _stream(["\n", "   ", "\t"])
    assert [e["type"] for e in blank] == ["thread.started", "turn.started", "turn.completed"]
    _strict_valid(blank, tmp_path)
