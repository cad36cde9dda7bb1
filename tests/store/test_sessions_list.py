"""`sessions list` says how each session's runs ended, and TURNS agrees with `num_turns`.

It used to show provider-fatal, loop-detected and script-exhausted runs as plain `completed`,
with no outcome, and TURNS counted turn pairs while `thread.completed.num_turns` counts model
requests. The manifest now keeps each retained run's subtype, outcome_code and num_turns (from
its `thread.completed` line, rebuilt from the log like every manifest value).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.exec_support import SCRIPTS, vtcode
from vtcode.schemas import fast_validator

RUNS = [
    # (session, script, extra args, subtype, outcome_code)
    ("ok", "scenario-success", [], "success", "success"),
    ("fatal", "scenario-provider-fatal", [], "error_during_execution", "failed"),
    ("looping", "scenario-loop-detected", [], "error_during_execution", "loop_detected"),
    ("exhausted", "scenario-script-exhausted", [], "error_during_execution", "failed"),
    ("capped", "scenario-max-turns", ["--max-turns", "2"], "error_max_turns", "turn_limit_reached"),
]


def _completions(ws: Path, sid: str) -> list[dict[str, Any]]:
    lines = (ws / ".vtcode" / "sessions" / sid / "events.jsonl").read_text().splitlines()
    events = [json.loads(x)["event"] for x in lines]
    return [e for e in events if e["type"] == "thread.completed"]


def _populate(ws: Path) -> None:
    for sid, script, extra, _, _ in RUNS:
        args = ["exec", "-q", "--session-id", sid, "--script", str(SCRIPTS / f"{script}.toml")]
        vtcode([*args, *extra, "go"], ws)
    # a second run of `ok`: runs and num_turns add up over the session
    again = vtcode(["exec", "-q", "resume", "ok", "again"], ws)
    assert again.returncode == 0, again.stderr


def test_sessions_list_shows_outcomes_runs_and_num_turns(tmp_path: Path) -> None:
    _populate(tmp_path)
    doc = json.loads(vtcode(["sessions", "list", "--json"], tmp_path).stdout)
    rows = {r["session_id"]: r for r in doc["sessions"]}
    assert set(rows) == {r[0] for r in RUNS}
    for sid, _, _, subtype, code in RUNS:
        row = rows[sid]
        done = _completions(tmp_path, sid)
        assert (row["subtype"], row["outcome_code"]) == (subtype, code), sid
        assert (done[-1]["subtype"], done[-1]["outcome_code"]) == (subtype, code)
        assert row["runs"] == len(done) == (2 if sid == "ok" else 1)
        assert row["num_turns"] == sum(d["num_turns"] for d in done), sid
        assert row["status"] == "completed"

    table = vtcode(["sessions", "list"], tmp_path).stdout.splitlines()
    assert table[0].split() == [
        "ID", "STATUS", "SUBTYPE", "OUTCOME", "RUNS", "TURNS", "EVENTS", "UPDATED",
    ]  # fmt: skip
    for line in table[1:]:
        sid, status, subtype, code, runs, turns, events, _ = line.split()
        row = rows[sid]
        assert (status, subtype, code) == ("completed", row["subtype"], row["outcome_code"])
        assert (int(runs), int(turns), int(events)) == (
            row["runs"],
            row["num_turns"],
            row["events"],
        )


def test_the_manifest_keeps_the_runs_and_a_rebuild_agrees(tmp_path: Path) -> None:
    """The drain's incremental manifest equals the one rebuilt from the log (repair)."""
    _populate(tmp_path)
    validator = fast_validator("session-manifest")
    for sid, *_ in RUNS:
        path = tmp_path / ".vtcode" / "sessions" / sid / "manifest.json"
        written = json.loads(path.read_text())
        assert validator.is_valid(written), written
        assert [r["seq"] for r in written["runs"]] == [
            n + 1
            for n, line in enumerate(path.with_name("events.jsonl").read_text().splitlines())
            if json.loads(line)["event"]["type"] == "thread.completed"
        ]
        path.unlink()  # lost cache: the next open rebuilds it from the log
        assert vtcode(["sessions", "repair", sid], tmp_path).returncode == 0
        rebuilt = json.loads(path.read_text())
        assert rebuilt["runs"] == written["runs"], sid


def test_a_session_without_an_ended_run_shows_dashes(tmp_path: Path) -> None:
    """An unreadable or never-ended session has no outcome yet: `-`, and null in JSON."""
    folder = tmp_path / ".vtcode" / "sessions" / "broken"
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text("{not json")
    table = vtcode(["sessions", "list"], tmp_path).stdout.splitlines()
    assert table[1].split()[:6] == ["broken", "unreadable", "-", "-", "0", "0"]
    (row,) = json.loads(vtcode(["sessions", "list", "--json"], tmp_path).stdout)["sessions"]
    assert (row["subtype"], row["outcome_code"], row["runs"], row["num_turns"]) == (
        None,
        None,
        0,
        0,
    )
