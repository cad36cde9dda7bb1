"""Colour only on a terminal, and never under NO_COLOR or --no-color: every command's output path.

Each command runs for real on a pseudo-terminal (stdout and stderr both on it, as in an
interactive shell). Commands that colour on a terminal must do so there (so the check can fail),
and must print no escape sequence at all (no colour, no bold) with NO_COLOR=1, with --no-color,
or when their output is a pipe.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.exec_support import SCRIPTS

ESC = b"\x1b["
SCRIPT = str(SCRIPTS / "scenario-success.toml")
VTCODE = [sys.executable, "-m", "vtcode"]

# name -> (argv, colours on a terminal)
COMMANDS: dict[str, tuple[list[str], bool]] = {
    "help": (["--help"], True),
    "group-help": (["sessions", "--help"], True),
    "usage-error": (["sessions", "show"], True),
    "no-such-command": (["bogus"], True),
    "config-error": (["config", "check", "bad.toml"], True),
    "validate-problems": (["validate", "bad.jsonl"], True),
    "exec-progress": (["exec", "--script", SCRIPT, "hi"], True),
    "sessions-list": (["sessions", "list"], False),
    "sessions-show": (["sessions", "show", "base"], False),
    "schema-list": (["schema", "list"], False),
    "config-show": (["config", "show"], False),
    "fsm": (["fsm"], False),
}


def _env(ws: Path, no_color: bool) -> dict[str, str]:
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100"}
    env["VTCODE_HOME"] = str(ws / ".home")
    for key in ("NO_COLOR", "FORCE_COLOR", "PY_COLORS", "GITHUB_ACTIONS"):
        env.pop(key, None)
    if no_color:
        env["NO_COLOR"] = "1"
    return env


def on_terminal(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 60) -> bytes:
    """Everything the command wrote to its terminal (stdout and stderr), until it exited."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*VTCODE, *argv],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
    )
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], deadline - time.monotonic())
            if not ready:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(master)
        proc.wait(timeout=30)
    return b"".join(chunks)


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("color-ws")
    env = _env(root, no_color=True)
    subprocess.run(
        [*VTCODE, "exec", "-q", "--session-id", "base", "--script", SCRIPT, "hi"],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=True,
        timeout=120,
    )
    (root / "bad.toml").write_text("[agent]\nmodel = 5\n")
    (root / "bad.jsonl").write_text('{"type":"item.completed"}\n')  # upstream refuses it
    return root


@pytest.mark.parametrize("name", list(COMMANDS))
def test_no_color_env_and_flag_mean_no_escape_sequences(ws: Path, name: str) -> None:
    argv, _ = COMMANDS[name]
    by_env = on_terminal(argv, ws, _env(ws, no_color=True))
    by_flag = on_terminal(["--no-color", *argv], ws, _env(ws, no_color=False))
    assert by_env.strip(), "the command printed something"
    assert ESC not in by_env, by_env[:400]
    assert ESC not in by_flag, by_flag[:400]


@pytest.mark.parametrize("name", [n for n, (_, colours) in COMMANDS.items() if colours])
def test_colour_only_on_a_terminal(ws: Path, name: str) -> None:
    argv, _ = COMMANDS[name]
    tty = on_terminal(argv, ws, _env(ws, no_color=False))
    assert ESC in tty, "this command colours on a terminal (else the checks above prove nothing)"
    piped = subprocess.run(
        [*VTCODE, *argv],
        cwd=ws,
        env=_env(ws, no_color=False),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert ESC not in piped.stdout + piped.stderr


@pytest.mark.parametrize(
    "argv",
    [["--help", "--no-color"], ["sessions", "--no-color"], ["sessions", "show", "--no-color"]],
    ids=["after-help", "misplaced-on-a-group", "misplaced-on-a-command"],
)
def test_no_color_counts_wherever_it_is_written(ws: Path, argv: list[str]) -> None:
    out = on_terminal(argv, ws, _env(ws, no_color=False))
    assert out.strip() and ESC not in out, out[:400]
