"""8 processes race on one workspace: new sessions, gc and list at the same time."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
from test_retention import make

from vtcode.schemas import fast_validator
from vtcode.store import list_sessions, sessions_root

REPO = Path(__file__).resolve().parents[2]
PROCS = 8
PER_PROC = 6

RACER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from vtcode.config.model import RetentionConfig, StoreConfig
    from vtcode.events.types import (AgentMessageItem, ItemCompletedEvent, ThreadCompletedEvent,
        ThreadCompletionSubtype, ThreadItem, ThreadStartedEvent, TurnCompletedEvent,
        TurnStartedEvent, Usage)
    from vtcode.store import DispatchGate, SessionWriter, apply_retention, list_sessions

    ws, k, n = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    cfg = StoreConfig(lock_timeout_secs=10)
    policy = RetentionConfig(max_sessions=1000, max_age_days=30)
    made, deleted, errors = [], [], []
    for i in range(n):
        sid = f"p{k}-{i}"
        # gc before the run, preserving the session about to be written (as exec does)
        rep = apply_retention(ws, policy, preserve=sid)
        deleted += rep.deleted
        errors += [f"{a}: {b}" for a, b in rep.errors]
        gate = DispatchGate(SessionWriter.create(ws, sid, cfg))
        gate.emit(ThreadStartedEvent(thread_id=sid))
        for t in range(3):
            gate.emit(TurnStartedEvent())
            gate.emit(ItemCompletedEvent(item=ThreadItem(id=f"item_{t}",
                details=AgentMessageItem(text=f"{sid} turn {t}"))))
            gate.emit(TurnCompletedEvent(usage=Usage(input_tokens=t)))
            for row in list_sessions(ws):
                if row.status not in ("active", "completed", "abandoned", "unreadable"):
                    errors.append(f"bad status {row.status}")
        gate.emit(ThreadCompletedEvent(thread_id=sid, session_id=sid,
            subtype=ThreadCompletionSubtype.SUCCESS, outcome_code="success", usage=Usage(),
            num_turns=3))
        gate.close()
        made.append(sid)
    print(json.dumps({"made": made, "deleted": deleted, "errors": errors}))
    """
)


def test_eight_processes_race(tmp_path: Path) -> None:
    old = [f"old-{i}" for i in range(12)]
    for sid in old:
        make(tmp_path, sid, age_days=45)
    make(tmp_path, "keep-new", age_days=2)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(tmp_path), str(k), str(PER_PROC)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        for k in range(PROCS)
    ]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err
        results.append(orjson.loads(out.strip().splitlines()[-1]))
    made = [sid for r in results for sid in r["made"]]
    deleted = [sid for r in results for sid in r["deleted"]]
    errors = [e for r in results for e in r["errors"]]
    assert errors == []
    assert len(made) == PROCS * PER_PROC
    assert sorted(deleted) == sorted(old), "each old session deleted exactly once, nothing else"
    root = sessions_root(tmp_path)
    names = {p.name for p in root.iterdir()}
    assert names == {".locks", "keep-new", *made}, "no tombstones, strays or lost sessions"
    validator = fast_validator("versioned-thread-event")
    rows = {r.session_id: r for r in list_sessions(tmp_path)}
    for sid in made:
        assert rows[sid].status == "completed" and rows[sid].turns == 3
        data = (root / sid / "events.jsonl").read_bytes()
        lines = [orjson.loads(x) for x in data.splitlines()]
        assert [x["seq"] for x in lines] == list(range(1, 12))
        for x in lines:
            validator.validate(x)
        m = orjson.loads((root / sid / "manifest.json").read_bytes())
        assert (m["event_count"], m["log_bytes"], m["session_id"]) == (11, len(data), sid)
