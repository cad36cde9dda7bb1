"""The environment refusing is a located exit-2 message, and an exit-2 run leaves no session.

Through the real CLI: a file where `.vtcode` or `sessions/` belongs, a session folder that
cannot be opened, a read-only workspace (non-root only: root writes anyway), a closed or full
standard output (a file at the `ulimit -f` size limit). Each ends with exit 2, a message naming
the path and the cause, and no traceback. A run that fails before its first event (bad script,
missing model or key, unknown provider, bad --session-id) creates no session folder, and the
same --session-id works right after.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.exec_support import SCRIPTS, vtcode
from vtcode.config.model import StoreConfig
from vtcode.store import SessionWriter
from vtcode.store.tombstone import discard_unstarted

SUCCESS = str(SCRIPTS / "scenario-success.toml")


def _exec(sid: str, *extra: str) -> list[str]:
    return ["exec", "-q", "--session-id", sid, *extra, "hi"]


def _no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr


def _dotvtcode_file(ws: Path) -> str:
    (ws / ".vtcode").write_text("not a folder\n")
    return f"{ws / '.vtcode'} is a file where a folder is expected"


def _sessions_file(ws: Path) -> str:
    (ws / ".vtcode").mkdir()
    (ws / ".vtcode" / "sessions").write_text("")
    return f"{ws / '.vtcode' / 'sessions'} is a file where a folder is expected"


ENV_CASES: dict[str, Callable[[Path], str]] = {
    "dotvtcode-is-a-file": _dotvtcode_file,
    "sessions-is-a-file": _sessions_file,
}


@pytest.mark.parametrize("case", list(ENV_CASES))
def test_environment_failure_is_located_exit_2(tmp_path: Path, case: str) -> None:
    expected = ENV_CASES[case](tmp_path)
    proc = vtcode(_exec("s", "--script", SUCCESS), tmp_path)
    assert proc.returncode == 2, proc.stderr
    _no_traceback(proc.stderr)
    assert "cannot create the sessions folder: Not a directory" in proc.stderr
    assert expected in proc.stderr


def test_unopenable_session_folder_on_resume_is_exit_2(tmp_path: Path) -> None:
    assert vtcode(_exec("s", "--script", SUCCESS), tmp_path).returncode == 0
    index = tmp_path / ".vtcode" / "sessions" / "s" / "index"
    for f in index.iterdir():
        f.unlink()
    index.rmdir()
    index.write_text("")  # a file where the session's index folder belongs
    log = (tmp_path / ".vtcode" / "sessions" / "s" / "events.jsonl").read_bytes()
    proc = vtcode(["exec", "resume", "s", "-q", "--script", SUCCESS, "more"], tmp_path)
    assert proc.returncode == 2, proc.stderr
    _no_traceback(proc.stderr)
    assert f"{index}: cannot open session s" in proc.stderr
    assert (tmp_path / ".vtcode" / "sessions" / "s" / "events.jsonl").read_bytes() == log


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders anyway")
def test_read_only_workspace_is_exit_2(tmp_path: Path) -> None:
    ws = tmp_path / "ro"
    ws.mkdir()
    ws.chmod(0o555)
    try:
        proc = vtcode(_exec("s", "--script", SUCCESS), ws)
    finally:
        ws.chmod(0o755)
    assert proc.returncode == 2, proc.stderr
    _no_traceback(proc.stderr)
    assert f"{ws / '.vtcode'}" in proc.stderr and "Permission denied" in proc.stderr


def test_closed_stdout_is_exit_2_and_writes_nothing(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "vtcode", *_exec("s", "--script", SUCCESS)],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        preexec_fn=lambda: os.close(1),
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    _no_traceback(proc.stderr)
    assert "standard output: cannot write: it is closed (fd 1)" in proc.stderr
    assert not (tmp_path / ".vtcode").exists()


def _size_limited(limit: int) -> Callable[[], None]:
    def setup() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return setup


@pytest.mark.parametrize(
    "args", [["schema", "show", "thread-event"], ["--help"], ["sessions", "list", "--json"]]
)
def test_full_stdout_is_located_exit_2(tmp_path: Path, args: list[str]) -> None:
    """A file at the size limit behind stdout (the portable stand-in for a full disk)."""
    out = tmp_path / "out.txt"
    out.write_bytes(b"x" * 4096)
    with out.open("ab") as sink:
        proc = subprocess.run(
            [sys.executable, "-m", "vtcode", *args],
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": "1"},
            preexec_fn=_size_limited(4096),
            timeout=60,
            check=False,
        )
    assert proc.returncode == 2, proc.stderr
    _no_traceback(proc.stderr)
    assert f"standard output ({out}): cannot write: File too large" in proc.stderr
    assert proc.stderr.count("error:") == 1


# --------------------------------------------------------------------------------------------
# exit 2 before the first event: no session, the id stays free

EARLY_FAILURES: dict[str, list[str]] = {
    "missing-script": ["--script", "/nonexistent/script.toml"],
    "unknown-provider": ["--provider", "nope"],
    "openai-without-model": ["--provider", "openai"],
    "openai-without-key": ["--provider", "openai", "--model", "gpt-test"],
    "script-for-non-replay": ["--provider", "anthropic", "--script", SUCCESS],
}


@pytest.mark.parametrize("case", list(EARLY_FAILURES))
def test_exit_2_before_the_first_event_leaves_no_session(tmp_path: Path, case: str) -> None:
    env = {"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": ""}
    proc = vtcode(_exec("same-id", *EARLY_FAILURES[case]), tmp_path, env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    _no_traceback(proc.stderr)
    assert not (tmp_path / ".vtcode" / "sessions" / "same-id").exists()
    again = vtcode(_exec("same-id", "--script", SUCCESS), tmp_path)
    assert again.returncode == 0, again.stderr


def test_bad_session_id_is_exit_2_and_creates_nothing(tmp_path: Path) -> None:
    proc = vtcode(_exec("../escape", "--script", SUCCESS), tmp_path)
    assert proc.returncode == 2 and "invalid session id" in proc.stderr
    assert not (tmp_path / "escape").exists()
    sessions = tmp_path / ".vtcode" / "sessions"
    assert not sessions.exists() or not [p for p in sessions.iterdir() if p.name != ".locks"]


CFG = StoreConfig()


def test_discard_unstarted_removes_only_an_empty_session(tmp_path: Path) -> None:
    w = SessionWriter.create(tmp_path, "empty", CFG)
    w.abort()
    assert discard_unstarted(tmp_path, "empty")
    assert not (tmp_path / ".vtcode" / "sessions" / "empty").exists()
    SessionWriter.create(tmp_path, "empty", CFG).abort()  # the id is free again


def test_discard_unstarted_keeps_sessions_with_events_unknown_files_or_a_holder(
    tmp_path: Path,
) -> None:
    from vtcode.events.types import ThreadStartedEvent

    w = SessionWriter.create(tmp_path, "used", CFG)
    w.submit(ThreadStartedEvent(thread_id="used"))
    w.close()
    assert not discard_unstarted(tmp_path, "used")
    SessionWriter.create(tmp_path, "odd", CFG).abort()
    (tmp_path / ".vtcode" / "sessions" / "odd" / "notes-of-mine.txt").write_text("keep\n")
    assert not discard_unstarted(tmp_path, "odd")
    held = SessionWriter.create(tmp_path, "held", CFG)
    try:
        assert not discard_unstarted(tmp_path, "held")  # lock held: never removed
    finally:
        held.abort()
    for sid in ("used", "odd", "held"):
        assert (tmp_path / ".vtcode" / "sessions" / sid).is_dir()
