"""A FIFO, a socket, a folder or a 2 GiB sparse file planted at a path vtcode reads on a normal
run never hangs it and never gives a traceback (issue 30, items 1 and 4).

Each case drives the real CLI with a 20 s timeout that must not be hit: the command ends with
exit 2 naming the path, or exit 0 (with a warning naming the path where the file is optional,
such as notes in orientation). Adding a path is one line in PATHS.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import forked_cli
from tests.exec_support import SESSION

pytestmark = pytest.mark.slow

TIMEOUT = 20
LOOP = "L1"

# command name -> argv after `vtcode -C WS`
COMMANDS: dict[str, list[str]] = {
    "exec": ["exec", "--script", "default", "-q", "hi"],
    "orient": ["orient"],
    "loop": ["loop", "run", "--id", LOOP, "--steps", "1", "--script", "default"],
    "notes-list": ["notes", "list"],
    "notes-add": ["notes", "add", "a note"],
    "hooks-list": ["hooks", "list"],
    "sessions-list": ["sessions", "list"],
    "resume": ["exec", "--script", "default", "-q", "resume", SESSION, "again"],
    "exec-command": ["exec", "--script", "{root}/cmd.toml", "-q", "go"],  # launches a command
}
CMD_SCRIPT = """
[provider]
model = "replay-1"

[[turn]]
[[turn.tool_calls]]
name = "exec_command"
arguments = { command = "echo hi" }

[[turn]]
text = "done"
"""

# (path under the test root: ws/ is the workspace, home/ is VTCODE_HOME; commands that read
# it; whether a refusal must name the path on stderr)
PATHS: list[tuple[str, tuple[str, ...]]] = [
    ("ws/.vtcode/state/notes.md", ("exec", "orient", "loop", "notes-list", "notes-add")),
    ("ws/.vtcode/state/decisions.md", ("exec", "orient", "loop")),
    ("ws/.vtcode/state/notes.md.lock", ("notes-add",)),
    ("ws/.vtcode/state/loop-L1.json", ("loop",)),
    ("ws/.vtcode/state/loop-L1.lock", ("loop",)),
    ("ws/.vtcode/progress-recent", ("exec", "orient")),
    ("ws/.vtcode/closed-sessions.index", ("exec", "sessions-list")),
    ("ws/.vtcode/closed-sessions.lock", ("exec",)),
    # orientation's artifacts: exec and orient read them through the same function
    ("ws/.vtcode/memories/compaction_summary.md", ("orient",)),
    ("ws/.vtcode/tasks/current_task.md", ("exec",)),
    ("ws/.vtcode/tasks/current_spec.md", ("orient",)),
    ("ws/.vtcode/tasks/current_handoff.json", ("exec",)),
    ("ws/.vtcode/tasks/current_handoff.md", ("orient",)),
    ("ws/.vtcode/tasks/current_context_reset.md", ("exec",)),
    (f"ws/.vtcode/sessions/{SESSION}/manifest.json", ("sessions-list", "resume")),
    (f"ws/.vtcode/sessions/{SESSION}/events.jsonl", ("resume",)),
    (f"ws/.vtcode/sessions/{SESSION}/transcript.jsonl", ("resume",)),
    (f"ws/.vtcode/sessions/.locks/{SESSION}.lock", ("sessions-list", "resume")),
    ("ws/vtcode.toml", ("exec", "hooks-list", "loop")),
    ("home/config.toml", ("exec", "hooks-list", "loop")),
    ("home/trust.json", ("exec", "hooks-list")),
    # workspace files the sandbox reads to plan a command's read-only mounts
    ("ws/.gitmodules", ("exec-command",)),
]


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    """A socket file nobody answers on (bound under a short name: sun_path holds 108 bytes)."""
    short = Path(tempfile.mkdtemp(prefix="s", dir="/tmp"))
    try:
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(short / "s"))
        s.close()  # the socket file stays
        (short / "s").rename(path)
    finally:
        shutil.rmtree(short)


def _folder(path: Path) -> None:
    path.mkdir()
    (path / "x").write_text("x")


def _sparse(path: Path) -> None:
    with path.open("wb") as f:
        f.truncate(2 << 30)  # 2 GiB, not written: a hole


KINDS: dict[str, Callable[[Path], None]] = {
    "fifo": _fifo,
    "socket": _socket,
    "folder": _folder,
    "sparse-2GiB": _sparse,
}


def _env(root: Path) -> dict[str, str]:
    return {**os.environ, "NO_COLOR": "1", "VTCODE_HOME": str(root / "home")}


def _cli(root: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    """A forked run (tests/forked_cli.py): what is under test is how vtcode opens its files, not
    what exec sets up, and a fresh interpreter per case was most of this module's time."""
    try:
        return forked_cli.run(
            ["-C", str(root / "ws"), *args],
            real=False,
            cwd=root,
            env=_env(root),
            timeout=TIMEOUT,
            text=True,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"vtcode {' '.join(args)} did not end within {TIMEOUT} s")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace where every path above exists as the regular file a normal run made."""
    root = tmp_path_factory.mktemp("ownfiles")
    (root / "ws").mkdir()
    (root / "home").mkdir()
    (root / "home" / "config.toml").write_text("")
    (root / "ws" / "vtcode.toml").write_text("")
    (root / "cmd.toml").write_text(CMD_SCRIPT)
    subprocess.run(["git", "init", "-q", str(root / "ws")], check=True, timeout=TIMEOUT)
    (root / "ws" / ".gitmodules").write_text('[submodule "m"]\n\tpath = m\n')
    for args in (
        ["exec", "--script", "default", "-q", "--session-id", SESSION, "hi"],
        ["loop", "run", "--id", LOOP, "--steps", "1", "--script", "default", "goal"],
        ["notes", "add", "n"],
        ["decisions", "add", "d"],
        ["hooks", "trust"],
    ):
        run = _cli(root, args)
        assert run.returncode == 0, (args, run.stderr)
    tasks = root / "ws" / ".vtcode" / "tasks"
    tasks.mkdir(exist_ok=True)
    for name in ("current_task.md", "current_spec.md", "current_handoff.md"):
        (tasks / name).write_text("# t\n- [ ] one\n")
    (tasks / "current_handoff.json").write_text("{}\n")
    (tasks / "current_context_reset.md").write_text("# reset\n")
    memories = root / "ws" / ".vtcode" / "memories"
    memories.mkdir(exist_ok=True)
    (memories / "compaction_summary.md").write_text("summary\n")
    for rel, _ in PATHS:
        assert (root / rel).exists(), rel
    return root


CASES = [
    pytest.param(rel, cmd, kind, id=f"{cmd}:{rel.split('/', 1)[1]}:{kind}")
    for rel, cmds in PATHS
    for cmd in cmds
    for kind in KINDS
]


@pytest.mark.parametrize(("rel", "cmd", "kind"), CASES)
def test_planted_special_file_never_hangs(
    template: Path, tmp_path: Path, rel: str, cmd: str, kind: str
) -> None:
    root = tmp_path / "r"
    shutil.copytree(template, root, symlinks=True)
    target = root / rel
    if target.is_dir():
        shutil.rmtree(target)
    else:
        target.unlink()
    KINDS[kind](target)
    run = _cli(root, [a.replace("{root}", str(root)) for a in COMMANDS[cmd]])
    assert "Traceback" not in run.stderr, run.stderr
    assert "internal error" not in run.stderr, run.stderr
    assert run.returncode in (0, 2), (run.returncode, run.stderr)
    if run.returncode == 2:
        assert target.name in run.stderr, run.stderr
