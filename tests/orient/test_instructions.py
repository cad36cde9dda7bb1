"""Project instructions (issue 24 item 1): AGENTS.md files reach the model's system prompt.

Each test drives the real CLI against a recording OpenAI-compatible server on 127.0.0.1 and
reads the system prompt the model was sent.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from syrupy.assertion import SnapshotAssertion

from tests.conftest import ScriptedReply, SSEServer
from tests.exec_support import canonical_snapshot, vtcode


def _config(home: Path, server: SSEServer) -> None:
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        '[agent]\nprovider = "local"\n\n[providers.local]\nkind = "openai"\n'
        f'base_url = "{server.url}/v1"\nmodel = "m"\n'
    )


def _system(server: SSEServer, index: int = -1) -> str:
    messages = server.requests[index].json()["messages"]
    assert messages[0]["role"] == "system"
    return str(messages[0]["content"])


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    """A git repository with AGENTS.md at its root and in each of three nested folders."""
    repo = tmp_path / "repo"
    deep = repo / "a" / "b" / "c"
    deep.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "AGENTS.md").write_text("ROOT-RULE: use tabs\n")
    (repo / "a" / "AGENTS.md").write_text("A-RULE\n")
    (repo / "a" / "b" / "AGENTS.md").write_text("B-RULE\n")
    (repo / "a" / "b" / "AGENTS.override.md").write_text("B-OVERRIDE\n")
    (deep / "AGENTS.md").write_text("C-RULE\n")
    return repo, deep


def test_nested_files_root_first_override_wins_and_user_file(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _, deep = _repo(tmp_path)
    home = deep / ".home"
    _config(home, sse_server)
    (home / "AGENTS.md").write_text("USER-RULE\n")
    sse_server.queue(ScriptedReply.sse_file("llamacpp_openai_text.sse"))
    run = vtcode(["exec", "-q", "--session-id", "s1", "hi"], deep)
    assert run.returncode == 0, run.stderr
    prompt = _system(sse_server)
    section = prompt.split("# Project instructions", 1)[1]
    order = [section.index(m) for m in ("USER-RULE", "ROOT-RULE", "A-RULE", "B-OVERRIDE")]
    assert order == sorted(order)
    assert section.index("B-OVERRIDE") < section.index("C-RULE")
    assert "B-RULE" not in prompt  # the override wins in its folder
    assert "## a/b/AGENTS.override.md" in section and "## a/b/c/AGENTS.md" in section
    assert str(tmp_path) not in section  # labels are repository-relative

    show = vtcode(["sessions", "show", "--json", "s1"], deep)
    assert show.returncode == 0, show.stderr
    run0 = json.loads(show.stdout)["runs"][0]
    labels = [f["label"] for f in run0["instructions"]]
    assert labels == [
        "$VTCODE_HOME/AGENTS.md",
        "AGENTS.md",
        "a/AGENTS.md",
        "a/b/AGENTS.override.md",
        "a/b/c/AGENTS.md",
    ]
    assert run0["instructions"][1]["bytes"] == len("ROOT-RULE: use tabs\n")


def test_cap_cuts_with_a_warning_and_no_instructions_turns_it_off(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    repo, deep = _repo(tmp_path)
    home = deep / ".home"
    _config(home, sse_server)
    (repo / "a" / "AGENTS.md").write_text("A" * 40_000 + "TAIL-NOT-SENT\n")
    sse_server.queue(*(ScriptedReply.sse_file("llamacpp_openai_text.sse") for _ in range(2)))
    run = vtcode(["exec", "--json", "--session-id", "s1", "hi"], deep)
    assert run.returncode == 0, run.stderr
    prompt = _system(sse_server)
    assert "TAIL-NOT-SENT" not in prompt and "C-RULE" not in prompt
    assert "ROOT-RULE" in prompt
    events = [json.loads(line) for line in run.stdout.splitlines()]
    warnings = [
        e["item"]["message"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "error"
    ]
    assert len(warnings) == 1
    assert "32768 bytes at most" in warnings[0] and "a/AGENTS.md (" in warnings[0]
    assert "a/b/c/AGENTS.md (0 of 7 bytes)" in warnings[0]
    # the sequence (the warning right after thread.started), schema-checked line by line
    assert canonical_snapshot(deep, "s1") == snapshot_json

    off = vtcode(["exec", "-q", "--no-instructions", "hi"], deep)
    assert off.returncode == 0, off.stderr
    assert "Project instructions" not in _system(sse_server)


def test_change_on_resume_reaches_the_next_run_and_a_link_out_is_skipped(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _config(ws / ".home", sse_server)
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET\n")
    os.symlink(secret, ws / "AGENTS.md")
    (ws / "CLAUDE.md").write_text("CLAUDE-RULE v1\n")
    sse_server.queue(*(ScriptedReply.sse_file("llamacpp_openai_text.sse") for _ in range(2)))
    args = ["-c", 'agent.instructions.fallback_files=["CLAUDE.md"]']
    first = vtcode(["exec", "-q", *args, "--session-id", "s1", "hi"], ws)
    assert first.returncode == 0, first.stderr
    assert "TOP-SECRET" not in _system(sse_server)
    assert "CLAUDE-RULE v1" in _system(sse_server)
    (ws / "CLAUDE.md").write_text("CLAUDE-RULE v2\n")
    again = vtcode(["exec", "-q", *args, "resume", "s1", "more"], ws)
    assert again.returncode == 0, again.stderr
    assert "CLAUDE-RULE v2" in _system(sse_server) and "v1" not in _system(sse_server)
    show = json.loads(vtcode(["sessions", "show", "--json", "s1"], ws).stdout)
    digests = [r["instructions_digest"] for r in show["runs"]]
    assert len(digests) == 2 and digests[0] != digests[1] and None not in digests


def test_init_writes_starters_and_orient_lists_the_files(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    made = vtcode(["init"], ws)
    assert made.returncode == 0, made.stderr
    assert (ws / "AGENTS.md").read_text().startswith("# AGENTS.md")
    assert (ws / "vtcode.toml").is_file()
    again = vtcode(["init"], ws)
    assert again.returncode == 2 and "AGENTS.md" in again.stderr and "--force" in again.stderr
    (ws / "AGENTS.md").write_text("x" * 100)
    shown = vtcode(["orient"], ws)
    assert shown.returncode == 0, shown.stderr
    assert "[Project instructions] 1 file(s), 100 of 32768 bytes\n  AGENTS.md  100 bytes" in (
        shown.stdout
    )
    data = json.loads(vtcode(["orient", "--json"], ws).stdout)["instructions"]
    assert [(f["label"], f["bytes"]) for f in data["files"]] == [("AGENTS.md", 100)]


def _discover(ws: Path, **kw: object) -> object:
    from vtcode.config.model import InstructionsConfig
    from vtcode.orient.instructions import discover_instructions

    config = InstructionsConfig(**kw)  # type: ignore[arg-type]
    return discover_instructions(ws, config, env={"VTCODE_HOME": str(ws / "h")})


def test_special_files_empty_files_and_character_boundaries(tmp_path: Path) -> None:
    """In-process: a FIFO or folder named AGENTS.md is skipped with a warning (never blocks),
    an empty AGENTS.md gives way to the fallback, a cut never splits a character, and with no
    repository the workspace is the root."""
    from vtcode.orient.instructions import Instructions

    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    os.mkfifo(ws / "AGENTS.md")
    (ws / "CLAUDE.md").write_text("é" * 10)  # 20 bytes
    (ws / "sub" / "AGENTS.md").write_text("")
    (ws / "sub" / "AGENTS.override.md").mkdir()
    alone = _discover(ws / "sub", fallback_files=["CLAUDE.md"])
    assert isinstance(alone, Instructions) and alone.files == ()  # no repository: sub is the root
    (ws / ".git").mkdir()
    found = _discover(ws / "sub", fallback_files=["CLAUDE.md", "../x", "a/b"], max_bytes=7)
    assert isinstance(found, Instructions)
    assert [f.label for f in found.files] == ["CLAUDE.md"]
    first = found.files[0]
    assert (first.size, first.used) == (20, 6) and found.texts[0] == "ééé"
    assert any("AGENTS.md: " in w and "FIFO" in w for w in found.warnings)
    assert any("AGENTS.override.md" in w for w in found.warnings)
    assert any("CLAUDE.md (6 of 20 bytes)" in w for w in found.warnings)
    off = _discover(ws, enabled=False)
    assert isinstance(off, Instructions) and off.files == () and off.section() is None
