"""Text piped in beside a prompt argument reaches the model after the prompt (issue 26.8).

`echo context | vtcode exec "x"` dropped the piped text: the request held only "x". Now the
piped text follows the prompt in a `<stdin>` block, as codex exec and `claude -p` pass piped
stdin along with the prompt; `-` alone still reads the prompt itself. Judged on the request body
a recording OpenAI-compatible server on 127.0.0.1 received, and on the session's transcript.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ScriptedReply, SSEServer
from tests.exec_support import vtcode
from vtcode.cli import stdin as stdin_mod


def _config(home: Path, server: SSEServer) -> None:
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        '[agent]\nprovider = "local"\n\n[providers.local]\nkind = "openai"\n'
        f'base_url = "{server.url}/v1"\nmodel = "m"\n'
    )


def _user_text(server: SSEServer, index: int = 0) -> str:
    users = [m for m in server.requests[index].json()["messages"] if m["role"] == "user"]
    content = users[-1]["content"]
    return content if isinstance(content, str) else "".join(p["text"] for p in content)


def test_piped_text_follows_the_prompt(tmp_path: Path, sse_server: SSEServer) -> None:
    _config(tmp_path / ".home", sse_server)
    sse_server.queue(*(ScriptedReply.sse_file("llamacpp_openai_text.sse") for _ in range(3)))
    piped = vtcode(
        ["exec", "-q", "--session-id", "ctx", "summarise this"],
        tmp_path,
        input="line one of the log\nERROR disk full\n",
    )
    assert piped.returncode == 0, piped.stderr
    expected = "summarise this\n\n<stdin>\nline one of the log\nERROR disk full\n</stdin>"
    assert _user_text(sse_server, 0) == expected
    transcript = (tmp_path / ".vtcode/sessions/ctx/transcript.jsonl").read_text()
    assert "ERROR disk full" in transcript

    # `-` alone: stdin is the prompt, with no <stdin> wrapper
    alone = vtcode(["exec", "-q", "-"], tmp_path, input="just the prompt\n")
    assert alone.returncode == 0, alone.stderr
    assert _user_text(sse_server, 1).startswith("just the prompt")
    assert "<stdin>" not in _user_text(sse_server, 1)

    # no pipe (stdin from a device, as under cron): the prompt alone, no wait, no warning
    plain = vtcode(["exec", "-q", "only the prompt"], tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert _user_text(sse_server, 2) == "only the prompt" and plain.stderr == ""


@pytest.mark.parametrize(
    ("data", "env", "message"),
    [
        (b"x" * 100, {"VTCODE_MAX_STDIN_BYTES": "10"}, "standard input is larger than 10 bytes"),
        (b"ok\n\xff\n", {}, "<stdin>:2:1"),
    ],
)
def test_bad_piped_context_is_a_usage_error_before_any_request(
    tmp_path: Path, sse_server: SSEServer, data: bytes, env: dict[str, str], message: str
) -> None:
    _config(tmp_path / ".home", sse_server)
    proc = subprocess.run(
        [sys.executable, "-m", "vtcode", "exec", "-q", "x"],
        cwd=tmp_path,
        env={**os.environ, "NO_COLOR": "1", "VTCODE_HOME": str(tmp_path / ".home"), **env},
        input=data,
        capture_output=True,
        timeout=60,
        check=False,
    )
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 2, err
    assert message in err and "Traceback" not in err
    assert sse_server.requests == []


def test_a_pipe_nobody_writes_to_is_skipped_after_the_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A supervisor that keeps fd 0 open must not hold the run: bounded wait, then a note."""
    read_fd, write_fd = os.pipe()
    try:
        with os.fdopen(read_fd, "r", closefd=True) as held:
            monkeypatch.setattr(sys, "stdin", held)
            text, note = stdin_mod.read_piped_context(wait_secs=0.05)
            assert text is None and note is not None and "going on without it" in note
            os.write(write_fd, b"late but here\n")
            os.close(write_fd)
            write_fd = -1
            assert stdin_mod.read_piped_context(wait_secs=0.05) == ("late but here\n", None)
    finally:
        if write_fd >= 0:
            os.close(write_fd)


def test_an_empty_pipe_is_no_context(monkeypatch: pytest.MonkeyPatch) -> None:
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b"  \n")
    os.close(write_fd)
    with os.fdopen(read_fd, "r") as held:
        monkeypatch.setattr(sys, "stdin", held)
        assert stdin_mod.read_piped_context(wait_secs=0.05) == (None, None)
