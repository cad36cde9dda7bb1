"""The exec system prompt (issue 28 item 4): what a small model needs, in few tokens.

It names the working folder and the OS, lists the tools and the files at the top of the
folder (bounded, without .git/.vtcode), shows the one call form vtcode reads from text, says
how to finish, and stays short. Through the CLI, the first request a real 127.0.0.1 server
receives carries it as the system message.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

from tests.conftest import ScriptedReply, SSEServer
from tests.exec_support import SESSION, vtcode
from tests.loop.test_text_tool_calls_cli import _config, chat_sse
from vtcode.loop.prompts import MAX_LISTED_FILES, exec_system_prompt, workspace_listing

TOOLS = ["apply_patch", "exec_command", "list_files", "read_file", "write_file"]


def test_prompt_names_folder_os_tools_files_call_form_and_finish(tmp_path: Path) -> None:
    (tmp_path / "sum_to.py").write_text("")
    (tmp_path / "src").mkdir()
    (tmp_path / ".git").mkdir()
    (tmp_path / ".vtcode").mkdir()
    text = exec_system_prompt(tmp_path, TOOLS)
    assert str(tmp_path) in text and platform.system() in text
    assert "Tools: apply_patch, exec_command, list_files, read_file, write_file." in text
    assert "Files there: src/, sum_to.py." in text
    assert '{"name": "read_file", "arguments": {"path": "README.md"}}' in text
    assert "one-line summary and no tool call" in text
    assert len(text) < 1400  # about 300 tokens; the tools' own schemas are the rest


def test_listing_is_bounded_and_survives_a_missing_folder(tmp_path: Path) -> None:
    for i in range(MAX_LISTED_FILES + 25):
        (tmp_path / f"f{i:03}.txt").write_text("")
    names = workspace_listing(tmp_path)
    assert len(names) == MAX_LISTED_FILES + 1 and names[-1] == "... (25 more)"
    assert workspace_listing(tmp_path / "missing") == []


def test_listing_does_not_follow_a_symlinked_folder(tmp_path: Path) -> None:
    os.symlink("/", tmp_path / "root-link")
    assert workspace_listing(tmp_path) == ["root-link"]


def test_first_request_carries_the_prompt(tmp_path: Path, sse_server: SSEServer) -> None:
    # the full harness's prompt (a small model's own is tests/loop/test_compact_harness.py)
    _config(tmp_path, sse_server, "qwen0.5b", '[agent.harness]\nprofile = "full"\n')
    (tmp_path / "notes.md").write_text("x")
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Nothing to do.")))
    proc = vtcode(
        ["exec", "--json", "--session-id", SESSION, "--provider", "local", "say hi"],
        tmp_path,
        env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""},
    )
    assert proc.returncode == 0, proc.stderr
    system = sse_server.requests[0].json()["messages"][0]
    assert system["role"] == "system"
    assert f"folder {tmp_path.resolve()}" in system["content"] or str(tmp_path) in system["content"]
    assert "notes.md" in system["content"] and "read_file" in system["content"]
