"""The sandbox when vtcode runs as an ordinary user (issue 30 item 3): a user made for the test.

The same promises as root, reached the other way (a user namespace, whose capabilities are
dropped as root's are): the command has no capability and no_new_privs, sees only its own
processes, cannot write policy paths or outside the workspace; and vtcode, non-dumpable, keeps
its environment from every process of the same user outside the sandbox too.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from tests.security.conftest import User
from tests.security.sandbox_support import outputs, probe_ancestors
from tests.security.test_sandbox import _script
from vtcode.sandbox import Sandbox

pytestmark = pytest.mark.skipif(
    not Sandbox().available, reason="no Landlock + namespaces on this machine"
)


def _give(root: Path, user: User) -> None:
    for here, dirs, files in os.walk(root):
        for name in [*dirs, *files, "."]:
            os.chown(Path(here) / name, user.uid, user.gid, follow_symlinks=False)


def _spawn(user: User, ws: Path):  # type: ignore[no-untyped-def]
    def spawn(args: list[str], extra: dict[str, str]) -> subprocess.Popen[str]:
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(ws.parent),
            "NO_COLOR": "1",
            "VTCODE_HOME": str(ws / ".home"),
            **extra,
        }
        return subprocess.Popen(
            user.argv(args),
            cwd=ws,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    return spawn


def test_as_a_user_no_ancestor_is_readable_not_even_from_outside(
    area: Path, unprivileged_user: User
) -> None:
    ws = area / "ws"
    _give(area, unprivileged_user)
    seen: dict[str, subprocess.CompletedProcess[str]] = {}

    def from_outside(pid: int) -> None:
        # A process of the same user, in no namespace: vtcode is non-dumpable, so its /proc
        # files belong to root.
        seen["environ"] = subprocess.run(
            unprivileged_user.as_user(["cat", f"/proc/{pid}/environ"]),
            capture_output=True,
            text=True,
        )

    probe_ancestors(ws, area / "pids", _spawn(unprivileged_user, ws), from_outside)
    outside = seen["environ"]
    assert outside.returncode != 0 and "Permission denied" in outside.stderr, outside


def test_as_a_user_the_sandbox_holds(area: Path, unprivileged_user: User) -> None:
    ws = area / "ws"
    listener = socket.socket(socket.AF_UNIX)
    sock = area / "outside" / "agent.sock"
    listener.bind(str(sock))
    listener.listen(4)
    os.chmod(sock, 0o777)
    _give(area, unprivileged_user)
    connect = f"import socket; socket.socket(socket.AF_UNIX).connect({str(sock)!r})"
    py = shutil.which("python3", path="/usr/bin:/bin") or pytest.skip("no system python3")
    own_server = (  # the broker serves the user's commands too: a workspace socket works
        "import socket; s = socket.socket(socket.AF_UNIX); s.bind('own.sock'); s.listen(1); "
        "socket.socket(socket.AF_UNIX).connect('own.sock'); print('own ok')"
    )
    control = subprocess.run(unprivileged_user.as_user([py, "-c", connect]), capture_output=True)
    assert control.returncode == 0, control.stderr  # unsandboxed, the user reaches it
    commands = [
        "grep -E '^(Cap[A-Za-z]+|NoNewPrivs|Seccomp):' /proc/self/status",
        "echo '[sandbox]' >> .git/config",
        "touch ../outside/x",
        "touch inside.txt",
        f'{py} -c "{connect}"',
        f'{py} -c "{own_server}"',
    ]
    script = _script(area / "script.toml", commands)
    os.chmod(script, 0o644)
    try:
        proc = _spawn(unprivileged_user, ws)(
            ["exec", "--json", "--session-id", "s", "--script", str(script), "go"], {}
        )
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        listener.close()
    assert proc.returncode == 0, stderr
    caps, config, outside, inside, unix, own = outputs(stdout)
    fields = dict(line.split(":\t", 1) for line in caps["output"].splitlines())
    for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert fields[cap] == "0000000000000000", fields
    assert fields["NoNewPrivs"] == "1" and fields["Seccomp"] == "2", fields
    assert config["exit_code"] != 0 and "Read-only file system" in config["output"]
    assert outside["exit_code"] != 0 and not (area / "outside" / "x").exists()
    assert inside["exit_code"] == 0 and (ws / "inside.txt").exists()
    assert unix["exit_code"] != 0 and "Permission denied" in unix["output"], unix
    assert own["exit_code"] == 0 and "own ok" in own["output"], own
