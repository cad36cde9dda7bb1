"""The system prompt flags and keys (issue 24 item 4), against a recording server on 127.0.0.1:
what the model was sent is read from the request body."""

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


def _system(server: SSEServer) -> str:
    messages = server.requests[-1].json()["messages"]
    assert messages[0]["role"] == "system"
    return str(messages[0]["content"])


def test_the_four_flags(tmp_path: Path, sse_server: SSEServer) -> None:
    _config(tmp_path / ".home", sse_server)
    (tmp_path / "AGENTS.md").write_text("PROJECT-RULE\n")
    (tmp_path / "base.md").write_text("BASE FROM FILE\n")
    (tmp_path / "extra.md").write_text("EXTRA FROM FILE\n")
    sse_server.queue(*(ScriptedReply.sse_file("llamacpp_openai_text.sse") for _ in range(2)))
    one = vtcode(
        [
            "exec",
            "-q",
            "--system-prompt",
            'You are "R".\nOnly review.',
            "--append-system-prompt",
            "APPENDED-TEXT",
            "--append-system-prompt-file",
            "extra.md",
            "hi",
        ],
        tmp_path,
    )
    assert one.returncode == 0, one.stderr
    prompt = _system(sse_server)
    assert prompt.startswith('You are "R".\nOnly review.\n\n# Project instructions')
    assert "non-interactive" not in prompt and "working alone" not in prompt
    tail = prompt.split("PROJECT-RULE", 1)[1]
    assert tail.index("APPENDED-TEXT") < tail.index("EXTRA FROM FILE")

    two = vtcode(["exec", "-q", "--system-prompt-file", "base.md", "hi"], tmp_path)
    assert two.returncode == 0, two.stderr
    assert _system(sse_server).startswith("BASE FROM FILE")

    both = vtcode(
        ["exec", "-q", "--system-prompt", "x", "--system-prompt-file", "base.md", "hi"], tmp_path
    )
    assert both.returncode == 2 and "agent.system_prompt_file" in both.stderr
    missing = vtcode(["exec", "-q", "--append-system-prompt-file", "nope.md", "hi"], tmp_path)
    assert missing.returncode == 2 and "--append-system-prompt-file" in missing.stderr
    assert "Traceback" not in both.stderr + missing.stderr
    assert len(sse_server.requests) == 2  # the refused runs asked nothing


def test_an_untrusted_workspace_may_append_but_not_replace(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _config(tmp_path / ".home", sse_server)
    (tmp_path / "secret.txt").write_text("SECRET\n")
    (tmp_path / "vtcode.toml").write_text(
        '[agent]\nsystem_prompt = "HIJACKED"\nappend_system_prompt = "WS-APPEND"\n'
        'append_system_prompt_file = "secret.txt"\n'
    )
    sse_server.queue(ScriptedReply.sse_file("llamacpp_openai_text.sse"))
    run = vtcode(["exec", "-q", "hi"], tmp_path)
    assert run.returncode == 0, run.stderr
    prompt = _system(sse_server)
    assert "HIJACKED" not in prompt and "SECRET" not in prompt
    assert "WS-APPEND" in prompt and "working alone" in prompt
    assert "agent.system_prompt" in run.stderr  # the ignored keys are warned about
    shown = vtcode(["config", "show", "--origin"], tmp_path)
    assert "append_system_prompt" in shown.stdout, shown.stderr
