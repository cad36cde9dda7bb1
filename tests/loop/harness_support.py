"""Chat Completions streams with tool calls, for the harness tests (issue 25 items 3-4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import ScriptedReply, SSEServer
from tests.exec_support import SESSION, raw_events, vtcode


def _chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    body = {
        "id": "chatcmpl-h",
        "object": "chat.completion.chunk",
        "created": 1764750000,
        "model": "m",
        "choices": [{"finish_reason": finish, "index": 0, "delta": delta}],
    }
    return f"data: {json.dumps(body)}\n\n"


def tool_calls_sse(*calls: tuple[str, dict[str, Any]], prefix: str = "c") -> ScriptedReply:
    """One response asking for `calls` (name, arguments) in order, ids `{prefix}0`, ..."""
    parts = [_chunk({"role": "assistant", "content": None})]
    for i, (name, args) in enumerate(calls):
        parts.append(
            _chunk(
                {
                    "tool_calls": [
                        {
                            "index": i,
                            "id": f"{prefix}{i}",
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(args)},
                        }
                    ]
                }
            )
        )
    parts.append(_chunk({}, "tool_calls"))
    parts.append("data: [DONE]\n\n")
    return ScriptedReply.sse_bytes("".join(parts).encode())


def text_sse(text: str) -> ScriptedReply:
    parts = [_chunk({"role": "assistant", "content": text}), _chunk({}, "stop"), "data: [DONE]\n\n"]
    return ScriptedReply.sse_bytes("".join(parts).encode())


def configure(tmp_path: Path, server: SSEServer, toml: str = "") -> None:
    """A provider `local` at the server; `toml` is the workspace's vtcode.toml."""
    home = tmp_path / ".home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        f'[providers.local]\nkind = "openai"\nbase_url = "{server.url}/v1"\nmodel = "m"\n'
    )
    if toml:
        (tmp_path / "vtcode.toml").write_text(toml)


def run_exec(tmp_path: Path, *args: str) -> tuple[int, list[dict[str, Any]], str]:
    proc = vtcode(
        ["exec", "--json", "--session-id", SESSION, "--provider", "local", *args],
        tmp_path,
        env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""},
    )
    return proc.returncode, raw_events(proc.stdout), proc.stderr
