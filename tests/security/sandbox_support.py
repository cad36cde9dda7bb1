"""Helpers shared by the sandbox isolation tests (as root and as an unprivileged user)."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.exec_support import SESSION, raw_events
from tests.security.test_sandbox import _script

Spawn = Callable[[list[str], dict[str, str]], "subprocess.Popen[str]"]


def outputs(stdout: str) -> list[dict[str, Any]]:
    """The exec_command results of a `vtcode exec --json` run, in order."""
    return [
        json.loads(e["item"]["output"])
        for e in raw_events(stdout)
        if e["type"] == "item.completed" and e["item"]["type"] == "tool_output"
    ]


def _ancestors() -> list[int]:
    """This test's pid and every parent up to the host's init."""
    out, pid = [], os.getpid()
    while pid > 0:
        out.append(pid)
        stat = Path(f"/proc/{pid}/stat").read_text()
        pid = int(stat[stat.rfind(")") + 2 :].split()[1])
    return out


def _descendants(pid: int) -> list[int]:
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for kid in (int(p) for p in (task / "children").read_text().split()):
            kids += [kid, *_descendants(kid)]
    return kids


def probe_ancestors(
    ws: Path, fifo: Path, spawn: Spawn, while_blocked: Callable[[int], None] | None = None
) -> list[dict[str, Any]]:
    """Run vtcode whose first command reads pids from `fifo` and tries each one's /proc files.

    The pids (vtcode, its descendants outside the command, this test and its parents up to
    init) are written once vtcode runs the command: the FIFO is the bound wait. vtcode's
    environment holds a secret-named canary and its prompt another: neither may appear in any
    output. `while_blocked(vtcode_pid)` runs while the command waits (checks from outside).
    """
    os.mkfifo(fifo)
    os.chmod(fifo, 0o666)
    key, prompt_canary = secrets.token_hex(16), secrets.token_hex(16)
    probe = (
        'read -r pids < "$SBX_FIFO"; for p in $pids; do for f in environ cmdline; do '
        'echo "$p/$f: $(tr "\\0" " " 2>&1 < /proc/$p/$f)"; done; '
        'echo "$p/fd: $(ls /proc/$p/fd 2>&1)"; done'
    )
    every = 'for d in /proc/[0-9]*; do tr "\\0" " " < $d/environ; tr "\\0" " " < $d/cmdline; done'
    listing = "ls /proc | grep -E '^[0-9]+$' | tr '\\n' ' '; echo; ps -e -o pid= | tr -d ' '"
    script = _script(ws.parent / "script.toml", [probe, every, listing])
    os.chmod(script, 0o644)
    args = [
        "exec",
        "--json",
        "--session-id",
        SESSION,
        "--script",
        str(script),
        f"go {prompt_canary}",
    ]
    proc = spawn(args, {"SBX_FIFO": str(fifo), "VTCODE_CANARY_API_TOKEN": key})
    try:
        with open(fifo, "w") as f:  # opens once the command reads: vtcode is running it
            if while_blocked is not None:
                while_blocked(proc.pid)
            targets = [proc.pid, *_descendants(proc.pid), *_ancestors()]
            f.write(" ".join(map(str, targets)) + "\n")
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 0, stderr
    results = outputs(stdout)
    text = "\n".join(o["output"] for o in results)
    assert key not in text and prompt_canary not in text, text
    for pid in targets:
        if pid > 100:  # a namespace this small never reaches such a pid
            for part in ("environ", "cmdline", "fd"):
                line = next(x for x in text.splitlines() if x.startswith(f"{pid}/{part}:"))
                assert "No such file or directory" in line, line
    listed, ps = results[2]["output"].split("\n", 1)
    pids = [int(p) for p in listed.split()]
    assert pids and max(pids) < 20, listed  # the init, the shell, ls, grep, tr
    assert 1 in pids and proc.pid not in pids
    assert all(int(p) < 20 for p in ps.split()), ps
    return results
