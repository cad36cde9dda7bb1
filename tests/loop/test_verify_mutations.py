"""`automation.full_auto.verify_mutations` through the real CLI on the replay provider.

A run writes greeting.txt and finishes. With the key on, the harness first has the `verifier`
subagent (a replay script of its own, read-only tools, its own session) re-read the changed
file: an approval lets the success stand; a rejection ends the run `blocked` (exit 1,
error_during_execution, the verifier's issue in the outcome), never success. Without the key,
or when nothing changed, no verifier runs. Event sequences are snapshot-tested; every line is
schema-checked and the canonical log passes `vtcode validate`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from syrupy.assertion import SnapshotAssertion

from tests.exec_support import SCRIPTS, SESSION, normalise, raw_events, vtcode

TRUST = {"VTCODE_TRUST_WORKSPACE": "1"}


def _configure(ws: Path, verifier: str | None, *, on: bool = True) -> None:
    lines = ["[automation.full_auto]", f"verify_mutations = {'true' if on else 'false'}"]
    if verifier is not None:
        script = json.dumps(str(SCRIPTS / f"{verifier}.toml"))
        lines += ["[agent.subagents.verifier]", "read_only = true", f"script = {script}"]
    (ws / "vtcode.toml").write_text("\n".join(lines) + "\n")


def _exec(ws: Path, script: str = "verify-mutations-edit") -> tuple[int, list[dict[str, Any]]]:
    proc = vtcode(
        ["exec", "--json", "--session-id", SESSION, "--script", script, "Write a greeting"],
        ws,
        env=TRUST,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    log = ws / ".vtcode" / "sessions" / SESSION / "events.jsonl"
    checked = vtcode(["validate", str(log)], ws)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    return proc.returncode, raw_events(proc.stdout)  # each line schema-checked


def _harness(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    done = [e["item"] for e in events if e["type"] == "item.completed"]
    return [item for item in done if item["type"] == "harness"]


def _sessions(ws: Path) -> set[str]:
    root = ws / ".vtcode" / "sessions"
    return {p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")}


def test_an_approved_change_is_a_success(tmp_path: Path, snapshot_json: SnapshotAssertion) -> None:
    _configure(tmp_path, "verify-mutations-approve")
    code, events = _exec(tmp_path)
    assert code == 0
    assert events[-1]["subtype"] == "success"
    started, passed = _harness(events)
    assert started["event"] == "verification_started"
    assert started["message"] == "verifier verifier re-reads 1 changed file(s): greeting.txt"
    assert passed["event"] == "verification_passed" and passed["exit_code"] == 0
    (child,) = _sessions(tmp_path) - {SESSION}  # the verifier ran in a session of its own
    assert child in passed["message"]
    assert [normalise(e, tmp_path) for e in events] == snapshot_json(
        exclude=lambda prop, path: prop == "message"  # names the verifier's session id
    )


def test_a_rejected_change_is_not_a_success(
    tmp_path: Path, snapshot_json: SnapshotAssertion
) -> None:
    _configure(tmp_path, "verify-mutations-reject")
    code, events = _exec(tmp_path)
    assert code == 1
    done = events[-1]
    assert (done["subtype"], done["outcome_code"]) == ("error_during_execution", "blocked")
    assert done.get("result") is None
    kinds = [item["event"] for item in _harness(events)]
    assert kinds[:2] == ["verification_started", "verification_failed"]
    assert set(kinds[2:]) == {"blocked_handoff_written"}  # the blocked run's handoff files
    failed = _harness(events)[1]
    assert failed["exit_code"] == 0  # the verifier ran and answered: REJECTED
    assert "the task asked for a name in the greeting" in failed["message"]
    assert "rejected the changes to greeting.txt" in json.dumps(events)
    assert [normalise(e, tmp_path) for e in events] == snapshot_json(
        exclude=lambda prop, path: prop == "message"
    )


def test_the_default_verifier_fails_closed_without_a_decision(tmp_path: Path) -> None:
    """No verifier subagent: the run's own provider and model. A replay run's shipped default
    script gives no `Decision:` line, which rejects (an unverified change is never a success)."""
    _configure(tmp_path, None)
    code, events = _exec(tmp_path)
    assert code == 1
    assert events[-1]["subtype"] == "error_during_execution"
    failed = _harness(events)[1]
    assert failed["event"] == "verification_failed"
    assert failed["message"].startswith("verifier default rejected the changes")
    assert "the verifier gave no `Decision:` line" in failed["message"]


def test_a_verifier_that_cannot_run_fails_closed(tmp_path: Path) -> None:
    _configure(tmp_path, "no-such-verifier-script")
    code, events = _exec(tmp_path)
    assert code == 1
    failed = _harness(events)[1]
    assert failed["event"] == "verification_failed"
    assert failed["message"].startswith("the verifier verifier could not run: replay script")
    assert _sessions(tmp_path) == {SESSION}


def test_off_or_unchanged_runs_no_verifier(tmp_path: Path) -> None:
    _configure(tmp_path, "verify-mutations-reject", on=False)
    code, events = _exec(tmp_path)
    assert code == 0 and not _harness(events)
    other = tmp_path / "other"
    other.mkdir()
    _configure(other, "verify-mutations-reject")
    code, events = _exec(other, "scenario-success")  # changes nothing
    assert code == 0 and not _harness(events)
    assert _sessions(other) == {SESSION}
