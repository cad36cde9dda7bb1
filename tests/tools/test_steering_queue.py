"""The steering inbox: 16 pending (overflow refused, never dropped), a 64-id applied window,
replay rules, and many processes enqueueing at once."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from vtcode.errors import ExitCode, UsageError
from vtcode.steering.queue import SteeringQueue, SteeringQueueFull, queue_path


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / ".vtcode" / "sessions" / "s1").mkdir(parents=True)
    return tmp_path


def test_enqueue_assigns_uuid4_and_persists(ws: Path) -> None:
    q = SteeringQueue(ws, "s1")
    a = q.enqueue("first")
    b = q.enqueue("second")
    assert uuid.UUID(a.id).version == 4 and a.id != b.id
    assert [i.text for i in SteeringQueue(ws, "s1").pending()] == ["first", "second"]
    assert queue_path(ws, "s1") == ws / ".vtcode/sessions/s1/steering/queue.json"
    assert (queue_path(ws, "s1").stat().st_mode & 0o777) == 0o600


def test_seventeenth_intent_is_refused_and_nothing_is_dropped(ws: Path) -> None:
    q = SteeringQueue(ws, "s1")
    for i in range(16):
        q.enqueue(f"t{i}")
    with pytest.raises(SteeringQueueFull) as err:
        q.enqueue("one too many")
    assert "follow-up intent queue is full (capacity 16)" in str(err.value)
    assert err.value.exit_code == ExitCode.LOCK_BUSY
    assert [i.text for i in q.pending()] == [f"t{i}" for i in range(16)]
    q.mark_applied([q.pending()[0].id])
    q.enqueue("fits again")
    assert len(q.pending()) == 16


def test_applied_window_keeps_the_last_64(ws: Path) -> None:
    q = SteeringQueue(ws, "s1")
    ids = []
    for i in range(70):
        ids.append(q.enqueue(f"t{i}").id)
        q.mark_applied([ids[-1]])
    st = q.state()
    assert st.pending == [] and st.applied_intent_ids == ids[-64:]
    q.mark_applied([ids[-1]])  # idempotent
    assert q.state().applied_intent_ids == ids[-64:]


def test_replay_skips_applied_and_tagged_history_ids(ws: Path) -> None:
    q = SteeringQueue(ws, "s1")
    a, b, c = q.enqueue("a"), q.enqueue("b"), q.enqueue("c")
    q.mark_applied([a.id])
    assert [i.id for i in q.replayable({b.id})] == [c.id]
    # b was in the history (delivered before a crash): now marked applied, never replayed
    assert [i.id for i in q.pending()] == [c.id]
    assert b.id in q.state().applied_intent_ids


def test_bad_input_is_a_clear_usage_error(ws: Path) -> None:
    q = SteeringQueue(ws, "s1")
    with pytest.raises(UsageError):
        q.enqueue("   ")
    with pytest.raises(UsageError):
        q.enqueue("x" * (64 * 1024 + 1))
    queue_path(ws, "s1").parent.mkdir(parents=True)
    queue_path(ws, "s1").write_text("{not json")
    with pytest.raises(UsageError) as err:
        q.pending()
    assert str(queue_path(ws, "s1")) in str(err.value)


def test_eight_processes_enqueue_at_once_without_loss(ws: Path) -> None:
    code = (
        "import sys; from pathlib import Path; from vtcode.steering.queue import SteeringQueue;"
        "q = SteeringQueue(Path(sys.argv[1]), 's1', lock_timeout=30);"
        "[q.enqueue(f'{sys.argv[2]}-{k}') for k in range(2)]"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(ws), f"p{n}"]) for n in range(8)]
    assert [p.wait(timeout=120) for p in procs] == [0] * 8
    texts = sorted(i.text for i in SteeringQueue(ws, "s1").pending())
    assert texts == sorted(f"p{n}-{k}" for n in range(8) for k in range(2))
