"""Subagents through the real CLI: worktree isolation, merge/drop, conflicts, read-only verify."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from syrupy.assertion import SnapshotAssertion

from tests import forked_cli
from vtcode.runtime.subagents import parse_verdict, verifier_prompt
from vtcode.schemas import fast_validator

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

CONFIG = """
[agent.subagents.fixer]
description = "edits files"
isolation = "worktree"
script = "loop-subagent-edit"

[agent.subagents.inplace]
script = "loop-subagent-edit"

[agent.subagents.reviewer]
read_only = true
script = "loop-verifier-approve"

[agent.subagents.strict]
read_only = true
script = "loop-verifier-reject"

[agent.subagents.mute]
read_only = true
script = "default"
"""

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(ws: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=ws, check=True, capture_output=True, text=True,
        env={**os.environ, **GIT_ENV},
    )  # fmt: skip
    return proc.stdout


def vt(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV, "NO_COLOR": "1"}
    return forked_cli.run(["-q", *args], cwd=ws, env=env, text=True, timeout=120)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "repo"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    (ws / ".gitignore").write_text(".vtcode/\n")
    (ws / "greeting.txt").write_text("hello\n")
    (ws / "vtcode.toml").write_text(CONFIG)
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "init")
    return ws


def events(ws: Path, session: str) -> list[dict[str, Any]]:
    validator = fast_validator("versioned-thread-event")
    lines = (ws / ".vtcode/sessions" / session / "events.jsonl").read_text().splitlines()
    out = []
    for line in lines:
        env = orjson.loads(line)
        assert validator.is_valid(env), line
        out.append(env["event"])
    return out


def harness(evs: list[dict[str, Any]]) -> list[str]:
    return [
        e["item"]["event"]
        for e in evs
        if e["type"] == "item.completed" and e["item"]["type"] == "harness"
    ]


def test_worktree_child_edits_stay_there_until_merged(repo: Path) -> None:
    r = vt(repo, "agent", "run", "fixer", "--json", "greet from the subagent")
    assert r.returncode == 0, r.stderr
    info = orjson.loads(r.stdout)
    wt = Path(info["worktree"]["path"])
    assert wt.parent == repo / ".vtcode/worktrees" and info["worktree"]["branch"].startswith(
        "vtcode/fixer-"
    )
    assert (wt / "greeting.txt").read_text() == "hello from the subagent\n"
    assert (repo / "greeting.txt").read_text() == "hello\n"  # main tree untouched
    child = info["session_id"]
    assert (wt / ".vtcode/sessions" / child / "events.jsonl").exists()
    listed = orjson.loads(vt(repo, "worktree", "list", "--json").stdout)["worktrees"]
    assert [(w["name"], w["changed"]) for w in listed] == [(wt.name, ["greeting.txt"])]

    r = vt(repo, "worktree", "merge", wt.name, "--json")
    assert r.returncode == 0, r.stderr
    merged = orjson.loads(r.stdout)
    assert merged["removed"] is True and merged["sessions_adopted"] == [child]
    assert (repo / "greeting.txt").read_text() == "hello from the subagent\n"
    assert not wt.exists()
    assert git(repo, "status", "--porcelain") == ""
    subject = git(repo, "log", "-1", "--format=%s", "HEAD^2").strip()
    assert subject == f"vtcode subagent {wt.name}: changes from its worktree"
    assert ".vtcode" not in git(repo, "show", "--name-only", "--format=", "HEAD^2")
    # The child's session survived the worktree, in the main store.
    assert events(repo, child)[-1]["subtype"] == "success"
    assert orjson.loads(vt(repo, "worktree", "list", "--json").stdout) == {"worktrees": []}


def test_conflicting_merge_is_refused_and_changes_nothing(repo: Path) -> None:
    r = vt(repo, "agent", "run", "fixer", "--json", "greet")
    assert r.returncode == 0, r.stderr
    name = Path(orjson.loads(r.stdout)["worktree"]["path"]).name
    (repo / "greeting.txt").write_text("hello from main\n")
    git(repo, "commit", "-q", "-am", "main changes the greeting")
    head = git(repo, "rev-parse", "HEAD")
    r = vt(repo, "worktree", "merge", name)
    assert r.returncode == 1
    assert "conflicts in: greeting.txt" in r.stderr and "Traceback" not in r.stderr
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == ""
    assert (repo / "greeting.txt").read_text() == "hello from main\n"
    assert [
        w["name"] for w in orjson.loads(vt(repo, "worktree", "list", "--json").stdout)["worktrees"]
    ] == [name]
    r = vt(repo, "worktree", "drop", name, "--json")
    assert r.returncode == 0 and orjson.loads(r.stdout)["removed"] is True
    assert "vtcode/" not in git(repo, "branch", "--list")


def test_isolation_none_works_in_place_and_worktree_needs_git(repo: Path, tmp_path: Path) -> None:
    r = vt(repo, "agent", "run", "inplace", "edit")
    assert r.returncode == 0, r.stderr
    assert (repo / "greeting.txt").read_text() == "hello from the subagent\n"
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "vtcode.toml").write_text(CONFIG)
    r = vt(plain, "agent", "run", "fixer", "x")
    assert r.returncode == 2 and "not in a git repository" in r.stderr
    r = vt(repo, "agent", "run", "nobody", "x")
    assert r.returncode == 2 and "no subagent 'nobody'" in r.stderr


def test_verify_approves_and_records_harness_items(
    repo: Path, snapshot_json: SnapshotAssertion
) -> None:
    r = vt(repo, "agent", "verify", "reviewer", "--files", "greeting.txt",
           "--description", "says hello", "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    res = orjson.loads(r.stdout)
    assert res["approved"] is True and res["issues"] == []
    parent = events(repo, res["parent_session_id"])
    assert harness(parent) == ["verification_started", "verification_passed"]
    text = orjson.dumps(parent).decode()
    text = text.replace(res["parent_session_id"], "<parent>")
    text = text.replace(res["verifier_session_id"], "<verifier>")
    assert orjson.loads(text) == snapshot_json
    path = repo / ".vtcode/sessions" / res["parent_session_id"] / "events.jsonl"
    assert vt(repo, "validate", "--strict", str(path)).returncode == 0
    assert parent[0]["type"] == "thread.started" and parent[-1]["type"] == "thread.completed"
    child = events(repo, res["verifier_session_id"])
    done = [e["item"] for e in child if e["type"] == "item.completed"]
    tools = [i["tool_name"] for i in done if i["type"] == "tool_invocation"]
    assert tools == ["read_file"]


def test_verify_rejects_and_the_verifier_cannot_write(repo: Path) -> None:
    r = vt(repo, "agent", "verify", "strict", "--files", "greeting.txt", "--json")
    assert r.returncode == 1
    res = orjson.loads(r.stdout)
    assert res["approved"] is False
    assert res["issues"] == ["greeting.txt:1 the greeting has no trailing punctuation"]
    assert (repo / "greeting.txt").read_text() == "hello\n"  # the write was refused
    assert harness(events(repo, res["parent_session_id"])) == [
        "verification_started",
        "verification_failed",
    ]


def test_verify_fails_closed_without_a_decision_and_appends_to_a_parent(repo: Path) -> None:
    first = orjson.loads(vt(repo, "agent", "verify", "reviewer", "--files", "greeting.txt",
                            "--json").stdout)  # fmt: skip
    parent = first["parent_session_id"]
    r = vt(repo, "agent", "verify", "mute", "--files", "greeting.txt", "--parent", parent, "--json")
    assert r.returncode == 1
    res = orjson.loads(r.stdout)
    assert res["parent_session_id"] == parent
    assert "the verifier gave no `Decision:` line" in res["issues"]
    assert harness(events(repo, parent)) == [
        "verification_started",
        "verification_passed",
        "verification_started",
        "verification_failed",
    ]
    ids = [e["item"]["id"] for e in events(repo, parent) if "item" in e]
    assert len(set(ids)) == len(ids)  # appending never reuses an item id
    path = repo / ".vtcode/sessions" / parent / "events.jsonl"
    assert vt(repo, "validate", "--strict", str(path)).returncode == 0
    r = vt(repo, "agent", "verify", "reviewer", "--files", "missing.txt")
    assert r.returncode == 2 and "missing.txt" in r.stderr


def test_verdict_parsing() -> None:
    assert parse_verdict("ok\nDecision: APPROVED") == (True, [])
    assert parse_verdict("- ISSUE: a.py:3 bad\nDecision: APPROVED") == (False, ["a.py:3 bad"])
    assert parse_verdict("Decision: APPROVED\n...\nDecision: REJECTED") == (False, [])
    assert parse_verdict("**Decision:** APPROVED") == (True, [])
    assert parse_verdict("looks great, approved!") == (
        False,
        ["the verifier gave no `Decision:` line"],
    )
    prompt = verifier_prompt("adds x", ["a.py", "b.py"])
    assert "## Affected Files\n- a.py\n- b.py\n\n" in prompt and "Decision: APPROVED" in prompt
