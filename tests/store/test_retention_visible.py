"""Retention is visible and safe for loops (issue 26.3), through the real CLI.

- every session the automatic pass removes before an `exec` is said once on stderr, even with -q;
- `store.retention.max_sessions = 0` (and `max_age_days = 0`) keep every session;
- the sessions of a loop's last `keep_loop_steps` steps are never removed, by the automatic pass
  or by `sessions gc`, whose `--json` counts what it removed.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.exec_support import SCRIPTS, vtcode

SCRIPT = str(SCRIPTS / "scenario-success.toml")


def _exec(ws: Path, sid: str, *config: str) -> str:
    args = ["exec", "-q", "--script", SCRIPT, "--session-id", sid]
    for c in config:
        args += ["-c", c]
    proc = vtcode([*args, "hi"], ws)
    assert proc.returncode == 0, proc.stderr
    return proc.stderr


def _sessions(ws: Path) -> set[str]:
    return {p.name for p in (ws / ".vtcode/sessions").iterdir() if not p.name.startswith(".")}


def test_each_removal_is_said_once_on_stderr_even_with_quiet(tmp_path: Path) -> None:
    keep2 = "store.retention.max_sessions=2"
    for sid in ("s1", "s2", "s3"):  # closed before each pass: 0, 1, 2 (the run is not closed)
        assert "retention" not in _exec(tmp_path, sid, keep2)
    err = _exec(tmp_path, "s4", keep2)
    assert _sessions(tmp_path) == {"s2", "s3", "s4"}
    lines = [line for line in err.splitlines() if line.startswith("retention:")]
    assert lines == [
        "retention: removed closed session s1 ([store.retention]: 2 sessions, 30 days;"
        " max_sessions = 0 and max_age_days = 0 keep every session)"
    ]
    assert "retention" not in _exec(tmp_path, "s5", "store.retention.max_sessions=4")


def test_zero_keeps_everything(tmp_path: Path) -> None:
    for i in range(4):
        err = _exec(tmp_path, f"z{i}", "store.retention.max_sessions=0")
        assert "retention" not in err
    assert _sessions(tmp_path) == {"z0", "z1", "z2", "z3"}


def test_a_loops_recent_steps_survive_retention(tmp_path: Path) -> None:
    cfg = ["-c", "store.retention.max_sessions=1", "-c", "store.retention.keep_loop_steps=2"]
    for _ in range(3):
        proc = vtcode(
            [*cfg, "loop", "run", "--id", "L", "--script", "loop-step", "step on"], tmp_path
        )
        assert proc.returncode == 0, proc.stderr
    state = json.loads((tmp_path / ".vtcode/state/loop-L.json").read_text())
    steps = [s["session_id"] for s in state["steps"]]
    assert len(steps) == 3
    # The automatic pass of each step kept the loop's last two steps (over max_sessions = 1)
    # and removed the first one, saying so.
    assert _sessions(tmp_path) >= set(steps[1:])
    # An unrelated exec with max_sessions = 1: the loop's last two steps still stay.
    _exec(tmp_path, "other", "store.retention.max_sessions=1", "store.retention.keep_loop_steps=2")
    assert set(steps[1:]) <= _sessions(tmp_path)
    gc = vtcode([*cfg, "sessions", "gc", "--json", "--max-sessions", "1"], tmp_path)
    assert gc.returncode == 0, gc.stderr
    report = json.loads(gc.stdout)
    assert report["deleted_count"] == len(report["deleted"])
    assert set(steps[1:]) <= _sessions(tmp_path)
    assert steps[0] not in _sessions(tmp_path)
