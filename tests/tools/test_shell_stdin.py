"""`-` reads standard input everywhere a command reads a file or a text: one table, run for real.

Each row runs the real CLI with bytes on stdin (or stdin closed, as under cron or CI), and checks
the exit code, what it printed, and what it wrote. Closed stdin and non-UTF-8 bytes are usage
errors (exit 2) with a location, and nothing is written.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.exec_support import SCRIPTS

CLOSED = None  # stdin closed (fd 0 not open at all)
VALID_TOML = b'[agent]\nmodel = "replay-1"\n'
BAD_TOML = b"[agent]\nmodel = 5\n"
NOT_UTF8 = b"fine\n\xffbad"


@dataclasses.dataclass(frozen=True)
class Row:
    name: str
    argv: list[str]
    stdin: bytes | None
    rc: int
    out: str = ""  # expected in stdout
    err: str = ""  # expected in stderr
    writes: str | None = None  # a workspace file that must exist (rc 0) or not (rc != 0)


def _rows(log: str) -> list[Row]:
    script = ["--script", str(SCRIPTS / "scenario-success.toml")]
    return [
        Row("validate-", ["validate", "-"], log.encode(), 0, out="-: valid"),
        Row("validate-invalid", ["validate", "-"], b'{"type":"item.completed"}\n', 1, err="-:1:"),
        Row("validate-closed", ["validate", "-"], CLOSED, 2, out="no standard input"),
        Row("validate-file-closed", ["validate", "events.jsonl"], CLOSED, 0, out="valid"),
        Row("config-check-", ["config", "check", "-"], VALID_TOML, 0, out="<stdin>: valid"),
        Row("config-check-bad", ["config", "check", "-"], BAD_TOML, 2, err="<stdin>:2:1:"),
        Row("config-check-utf8", ["config", "check", "-"], NOT_UTF8, 2, err="<stdin>:2:1"),
        Row("config-check-closed", ["config", "check", "-"], CLOSED, 2, err="closed"),
        Row(
            "notes-add-",
            ["notes", "add", "-"],
            b"first line\nsecond",
            0,
            err="first line second",
            writes=".vtcode/state/notes.md",
        ),
        Row(
            "notes-add-utf8",
            ["notes", "add", "-"],
            NOT_UTF8,
            2,
            err="<stdin>:2:1: standard input is not UTF-8",
            writes=".vtcode/state/notes.md",
        ),
        Row(
            "notes-add-closed",
            ["notes", "add", "-"],
            CLOSED,
            2,
            err="standard input is closed",
            writes=".vtcode/state/notes.md",
        ),
        Row(
            "decisions-add-",
            ["decisions", "add", "-"],
            b"use sqlite",
            0,
            err="use sqlite",
            writes=".vtcode/state/decisions.md",
        ),
        Row(
            "exec-",
            ["exec", "-q", "--session-id", "s1", *script, "-"],
            b"say hi",
            0,
            writes=".vtcode/sessions/s1/events.jsonl",
        ),
        Row(
            "exec-no-prompt",
            ["exec", "-q", "--session-id", "s1", *script],
            b"say hi",
            0,
            writes=".vtcode/sessions/s1/events.jsonl",
        ),
        Row(
            "exec-utf8",
            ["exec", "-q", "--session-id", "s1", *script, "-"],
            NOT_UTF8,
            2,
            err="<stdin>:2:1: standard input is not UTF-8",
            writes=".vtcode/sessions/s1",
        ),
        Row(
            "exec-closed",
            ["exec", "-q", "--session-id", "s1", *script, "-"],
            CLOSED,
            2,
            err="no prompt",
            writes=".vtcode/sessions/s1",
        ),
        Row("exec-resume-", ["exec", "-q", *script, "resume", "base", "-"], b"carry on", 0),
        Row(
            "exec-resume-utf8",
            ["exec", "-q", *script, "resume", "base", "-"],
            NOT_UTF8,
            2,
            err="not UTF-8",
        ),
        Row(
            "steer-",
            ["steer", "base", "-"],
            b"also add a test",
            0,
            writes=".vtcode/sessions/base/steering",
        ),
        Row("steer-closed", ["steer", "base", "-"], CLOSED, 2, err="standard input is closed"),
        Row(
            "loop-run-",
            ["loop", "run", "--id", "L", *script, "-"],
            b"keep going",
            0,
            writes=".vtcode/state/loop-L.json",
        ),
        Row(
            "loop-run-utf8",
            ["loop", "run", "--id", "L", *script, "-"],
            NOT_UTF8,
            2,
            err="not UTF-8",
            writes=".vtcode/state/loop-L.json",
        ),
    ]


def _run(argv: list[str], cwd: Path, stdin: bytes | None) -> subprocess.CompletedProcess[str]:
    """Run the CLI with `stdin` as its input bytes, or with fd 0 closed (CLOSED)."""
    env = {**os.environ, "NO_COLOR": "1", "VTCODE_HOME": str(cwd / ".home")}
    proc = subprocess.run(
        [sys.executable, "-m", "vtcode", *argv],
        cwd=cwd,
        env=env,
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is CLOSED else None,
        preexec_fn=(lambda: os.close(0)) if stdin is CLOSED else None,
        capture_output=True,
        timeout=120,
        check=False,
    )
    return subprocess.CompletedProcess(
        proc.args,
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A workspace with one finished session `base`, and its raw event log."""
    ws = tmp_path_factory.mktemp("stdin-base")
    script = str(SCRIPTS / "scenario-success.toml")
    proc = _run(["exec", "--json", "-q", "--session-id", "base", "--script", script, "hi"], ws, b"")
    assert proc.returncode == 0, proc.stderr
    return ws, proc.stdout


ROW_NAMES = [r.name for r in _rows("")]


@pytest.mark.parametrize("name", ROW_NAMES)
def test_dash_reads_stdin(name: str, base: tuple[Path, str], tmp_path: Path) -> None:
    src, log = base
    row = next(r for r in _rows(log) if r.name == name)
    ws = tmp_path / "ws"
    subprocess.run(["cp", "-a", str(src), str(ws)], check=True)
    (ws / "events.jsonl").write_text(log)
    base_log = ws / ".vtcode" / "sessions" / "base" / "events.jsonl"
    before = base_log.read_bytes()
    proc = _run(row.argv, ws, row.stdin)
    assert proc.returncode == row.rc, proc.stdout + proc.stderr
    assert row.out in proc.stdout
    assert row.err in proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    if row.rc == 2:
        assert base_log.read_bytes() == before  # a usage error changes nothing already written
    if row.writes is not None:
        assert (ws / row.writes).exists() == (row.rc == 0), row.writes


def test_stdin_text_reaches_the_note_and_the_prompt(base: tuple[Path, str], tmp_path: Path) -> None:
    src, _ = base
    ws = tmp_path / "ws"
    subprocess.run(["cp", "-a", str(src), str(ws)], check=True)
    assert _run(["notes", "add", "-"], ws, "\ufeffcafé\n".encode()).returncode == 0
    listed = _run(["notes", "list"], ws, b"")
    assert listed.stdout.strip().endswith("] café")  # BOM dropped, text kept whole
    script = str(SCRIPTS / "scenario-success.toml")
    proc = _run(["exec", "-q", "--session-id", "p", "--script", script, "-"], ws, b"count to 3")
    assert proc.returncode == 0, proc.stderr
    transcript = (ws / ".vtcode/sessions/p/transcript.jsonl").read_text()
    assert '"count to 3"' in transcript
