"""--tools, --allowed-tools, --disallowed-tools (issue 24 item 4): they only narrow. The catalog
is read from the request body a recording server on 127.0.0.1 received; call verdicts in-process."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import ScriptedReply, SSEServer
from tests.exec_support import vtcode
from vtcode.tools.permissions import Decision
from vtcode.tools.tool_limits import ToolLimits


def _config(home: Path, server: SSEServer) -> None:
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        '[agent]\nprovider = "local"\n\n[providers.local]\nkind = "openai"\n'
        f'base_url = "{server.url}/v1"\nmodel = "m"\n'
        '[automation.full_auto]\nallowed_tools = ["read_file", "exec_command", "grep"]\n'
    )


def _catalog(server: SSEServer) -> list[str]:
    return sorted(t["function"]["name"] for t in server.requests[-1].json().get("tools", []))


def test_the_catalog_sent_only_narrows(tmp_path: Path, sse_server: SSEServer) -> None:
    _config(tmp_path / ".home", sse_server)
    sse_server.queue(*(ScriptedReply.sse_file("llamacpp_openai_text.sse") for _ in range(2)))
    run = vtcode(
        [
            "exec",
            "-q",
            "--allowed-tools",
            "exec_command(git *)",
            "--allowed-tools",
            "read_file",
            "--allowed-tools",
            "write_file",
            "--disallowed-tools",
            "read_file",
            "hi",
        ],
        tmp_path,
    )
    assert run.returncode == 0, run.stderr
    # write_file is allowed by the flag but not by the config; read_file is disallowed
    assert _catalog(sse_server) == ["exec_command"]
    run = vtcode(["exec", "-q", "--tools", "grep,read_*,write_file", "hi"], tmp_path)
    assert run.returncode == 0, run.stderr
    assert _catalog(sse_server) == ["grep", "read_file"]
    bad = vtcode(["exec", "-q", "--allowed-tools", "exec_command(", "hi"], tmp_path)
    assert bad.returncode == 2 and "--allowed-tools" in bad.stderr
    assert "Traceback" not in bad.stderr and len(sse_server.requests) == 2


def test_call_verdicts(tmp_path: Path) -> None:
    limits = ToolLimits.parse(
        None, ["exec_command(git *)", "read_file"], ["exec_command(git push*)"]
    )

    def check(tool: str, args: dict[str, str]) -> Decision | None:
        verdict = limits.check(tool, args, tmp_path)
        return None if verdict is None else verdict.decision

    assert check("exec_command", {"command": "git status"}) is None
    assert check("exec_command", {"command": "git status && rm -rf x"}) is Decision.DENY
    assert check("exec_command", {"command": "git push origin"}) is Decision.DENY
    assert check("exec_command", {"command": "ls"}) is Decision.DENY
    assert check("read_file", {"path": "a"}) is None
    assert check("write_file", {"path": "a"}) is Decision.DENY
    assert not limits.offers("grep") and limits.offers("exec_command")
