"""A new task is never told that an earlier, unrelated task is its progress (issue 26.2).

Two unrelated `exec` runs in one workspace against a recording OpenAI-compatible server on
127.0.0.1: the second request's system prompt must not carry the first run's goal as this
task's `### Progress` ("Completion: 100%"); the earlier run appears only as history, with how it
ended. `exec resume` of the first session still sees its own goal as progress.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ScriptedReply, SSEServer
from tests.exec_support import vtcode


def _config(home: Path, server: SSEServer) -> None:
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        '[agent]\nprovider = "local"\n\n[providers.local]\nkind = "openai"\n'
        f'base_url = "{server.url}/v1"\nmodel = "m"\n'
    )


def _system_prompt(server: SSEServer, index: int) -> str:
    messages = server.requests[index].json()["messages"]
    assert messages[0]["role"] == "system"
    return str(messages[0]["content"])


def test_second_unrelated_task_sees_the_first_only_as_history(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    home = tmp_path / ".home"
    _config(home, sse_server)
    sse_server.queue(*(ScriptedReply.sse_file("llamacpp_openai_text.sse") for _ in range(3)))
    first = vtcode(["exec", "-q", "--session-id", "first", "what is the answer"], tmp_path)
    assert first.returncode == 0, first.stderr
    second = vtcode(["exec", "-q", "--session-id", "second", "DELETE the temp files"], tmp_path)
    assert second.returncode == 0, second.stderr

    prompt = _system_prompt(sse_server, 1)
    assert "Goal: what is the answer" not in prompt
    assert "Completion: 100%" not in prompt
    assert "### Progress\n" not in prompt  # the new task has no progress of its own yet
    history = prompt.split("### Previous Run\n", 1)[1].split("\n", 1)[0]
    assert history.startswith("Previous session first (a different run, not this task) ended")
    assert "ended success" in history and history.endswith("its goal was: what is the answer")

    # Resuming the first session: its own goal is its progress again.
    again = vtcode(["exec", "-q", "resume", "first", "and now?"], tmp_path)
    assert again.returncode == 0, again.stderr
    resumed = _system_prompt(sse_server, 2)
    assert "### Progress\nGoal: what is the answer | Completion:" in resumed
