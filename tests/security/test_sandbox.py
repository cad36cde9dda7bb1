"""The OS sandbox of exec_command, through the real CLI: `vtcode exec --script` running commands.

Each case writes a replay script whose model runs real commands with exec_command, runs
`vtcode exec --json` as a subprocess, and reads the tool outputs (exit codes) and the files the
commands did or did not create. The workspace and an "outside" folder live under the repository's
ignored `build/` (not under /tmp: the temp dir is writable on purpose in workspace-write).
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.exec_support import SESSION, canonical_snapshot, raw_events, vtcode
from vtcode.config.model import VtcodeConfig
from vtcode.runtime.exec_run import ExecContext
from vtcode.runtime.orient_part import OrientPart, make_part
from vtcode.sandbox import FORCE_UNAVAILABLE_ENV, Sandbox, SandboxState
from vtcode.schemas import fast_validator

pytestmark = pytest.mark.skipif(
    not Sandbox().available, reason="no Landlock + namespaces on this machine"
)


def _script(path: Path, commands: list[str]) -> Path:
    """A replay script: one turn running `commands` in order, then a closing message."""
    lines = ["[[turn]]", 'text = "Running."']
    for cmd in commands:
        lines += [
            "[[turn.tool_calls]]",
            'name = "exec_command"',
            f"arguments = {{ command = {json.dumps(cmd)}, yield_time_ms = 60000 }}",
        ]
    lines += ["", "[[turn]]", 'text = "Done."']
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(
    ws: Path, commands: list[str], *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    script = _script(ws.parent / "script.toml", commands)
    proc = vtcode(
        ["exec", "--json", "--session-id", SESSION, "--script", str(script), *args, "go"],
        ws,
        env=env,
    )
    outputs = [
        json.loads(e["item"]["output"])
        for e in raw_events(proc.stdout)
        if e["type"] == "item.completed" and e["item"]["type"] == "tool_output"
    ]
    return proc, outputs


WRITES = {
    "outside": "touch ../outside/x",
    "inside": "touch inside.txt",
    "temp": 'touch "$SBX_SCRATCH/x"',
    "git": "touch .git/vtcode-probe",
    "private_temp": 'touch "$TMPDIR/x"',
}

# mode -> which writes succeed (exit 0); the rest must fail with the file absent.
EXPECTED = {
    "workspace-write": {"inside", "temp", "git", "private_temp"},
    "read-only": {"private_temp"},
    "danger-full-access": {"outside", "inside", "temp", "git", "private_temp"},
}


def _target(root: Path, scratch: Path, name: str) -> Path | None:
    return {
        "outside": root / "outside" / "x",
        "inside": root / "ws" / "inside.txt",
        "temp": scratch / "x",
        "git": root / "ws" / ".git" / "vtcode-probe",
    }.get(name)


@pytest.mark.parametrize("mode", sorted(EXPECTED))
def test_writes_per_mode(area: Path, tmp_path: Path, mode: str) -> None:
    scratch = tmp_path / "scratch"
    names = sorted(WRITES)
    proc, outputs = _run(
        area / "ws",
        [WRITES[n] for n in names],
        "--sandbox",
        mode,
        env={"SBX_SCRATCH": str(scratch)},
    )
    assert proc.returncode == 0, proc.stderr
    codes = {n: o["exit_code"] for n, o in zip(names, outputs, strict=True)}
    assert {n for n, c in codes.items() if c == 0} == EXPECTED[mode], outputs
    for name in names:
        target = _target(area, scratch, name)
        if target is not None:
            assert target.exists() == (name in EXPECTED[mode]), name
    denied = [o["output"] for n, o in zip(names, outputs, strict=True) if codes[n] != 0]
    assert all("Permission denied" in text for text in denied), denied


def test_read_only_gives_a_private_temp_dir_removed_at_the_end(area: Path) -> None:
    proc, outputs = _run(area / "ws", ['echo "$TMPDIR"'], "--sandbox", "read-only")
    assert proc.returncode == 0, proc.stderr
    private = Path(outputs[0]["output"].strip())
    assert private.name.startswith("vtcode-sandbox-")
    assert not private.exists()  # removed when the run closed its sessions


class _Listener:
    """A TCP listener on the host's 127.0.0.1 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        # shutdown wakes the accept() the serving thread is blocked in; close alone does not
        # (Linux), and each close waited out the join's 5 s.
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.thread.join(timeout=5)
        assert not self.thread.is_alive(), "the listener's thread did not end"


@pytest.mark.parametrize("network", [False, True])
def test_network_off_reaches_nothing_on_reaches_the_host(area: Path, network: bool) -> None:
    listener = _Listener()
    try:
        connect = (
            f'{sys.executable} -c "import socket; '
            f"socket.create_connection(('127.0.0.1', {listener.port}), timeout=5)\""
        )
        extra = ["-c", "sandbox.network=true"] if network else []
        proc, outputs = _run(area / "ws", [connect], *extra)
    finally:
        listener.close()
    assert proc.returncode == 0, proc.stderr
    if network:
        assert outputs[0]["exit_code"] == 0, outputs[0]["output"]
        assert listener.accepted == 1
    else:
        assert outputs[0]["exit_code"] != 0
        assert "Network is unreachable" in outputs[0]["output"]
        assert listener.accepted == 0


def test_require_without_a_sandbox_exits_2_before_anything_runs(area: Path) -> None:
    ws = area / "ws"
    proc, _ = _run(
        ws,
        ["touch ran.txt"],
        "-c",
        "sandbox.require=true",
        env={FORCE_UNAVAILABLE_ENV: "1"},
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "sandbox.require is set" in proc.stderr and FORCE_UNAVAILABLE_ENV in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (ws / ".vtcode" / "sessions" / SESSION).exists()
    assert not (ws / "ran.txt").exists()


def _manifest(ws: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(
        (ws / ".vtcode" / "sessions" / SESSION / "manifest.json").read_text()
    )
    fast_validator("session-manifest").validate(doc)
    return doc


def test_manifest_records_the_effective_sandbox(area: Path) -> None:
    ws = area / "ws"
    proc, _ = _run(ws, ["true"], "-c", 'sandbox.writable_roots=["../outside"]')
    assert proc.returncode == 0, proc.stderr
    assert _manifest(ws)["sandbox"] == {
        "status": "enforced",
        "mode": "workspace-write",
        "network": False,
        "writable_roots": ["../outside"],
    }


def test_writable_roots_are_writable(area: Path) -> None:
    proc, outputs = _run(
        area / "ws", ["touch ../outside/x"], "-c", 'sandbox.writable_roots=["../outside"]'
    )
    assert proc.returncode == 0, proc.stderr
    assert outputs[0]["exit_code"] == 0 and (area / "outside" / "x").exists()


def test_unavailable_warns_once_records_it_and_runs_unsandboxed(
    area: Path, snapshot_json: Any
) -> None:
    ws = area / "ws"
    proc, outputs = _run(
        ws, ["touch ../outside/x", "touch ../outside/y"], env={FORCE_UNAVAILABLE_ENV: "1"}
    )
    assert proc.returncode == 0, proc.stderr
    assert [o["exit_code"] for o in outputs] == [0, 0]  # unsandboxed: the user's own rights
    assert (area / "outside" / "x").exists()
    assert proc.stderr.count("sandbox: unavailable") == 1
    record = _manifest(ws)["sandbox"]
    assert record["status"] == "unavailable" and FORCE_UNAVAILABLE_ENV in record["reason"]
    assert canonical_snapshot(ws) == snapshot_json


_COMMIT = "git -c user.email=t@example.com -c user.name=t commit -q --allow-empty -m sandboxed"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


@pytest.mark.parametrize("where", ["top", "subfolder", "worktree"])
def test_commits_work_in_workspace_write(area: Path, where: str) -> None:
    repo = area / "ws"
    _git(
        repo,
        "-c",
        "user.email=t@example.com",
        "-c",
        "user.name=t",
        "commit",
        "--allow-empty",
        "-qm",
        "0",
    )
    if where == "subfolder":
        ws = repo / "sub"
        ws.mkdir()
    elif where == "worktree":
        ws = area / "outside" / "wt"
        _git(repo, "worktree", "add", "-q", str(ws))
    else:
        ws = repo
    proc, outputs = _run(ws, [_COMMIT])
    assert proc.returncode == 0, proc.stderr
    assert outputs[0]["exit_code"] == 0, outputs[0]["output"]
    log = subprocess.run(
        ["git", "-C", str(ws), "log", "--format=%s"], check=True, capture_output=True, text=True
    )
    assert log.stdout.split() == ["sandboxed", "0"]


def test_commands_start_with_no_blocked_signals_and_no_new_privileges(area: Path) -> None:
    # Commands are started from a sandbox thread that blocks SIGINT/SIGTERM for itself; the
    # command must not inherit that mask (it could not be interrupted or terminated).
    proc, outputs = _run(area / "ws", ["grep -E '^(SigBlk|NoNewPrivs):' /proc/self/status"])
    assert proc.returncode == 0, proc.stderr
    lines = outputs[0]["output"].split("\n")
    assert "SigBlk:\t0000000000000000" in lines and "NoNewPrivs:\t1" in lines, lines


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        (SandboxState("enforced", "workspace-write", False), None),
        (SandboxState("enforced", "read-only", False), "sandbox: read-only, network off"),
        (
            SandboxState("enforced", "workspace-write", True, ("../cache",)),
            "sandbox: workspace-write, network on, also writable: ../cache",
        ),
        (
            SandboxState("unavailable", "workspace-write", True, (), "no Landlock"),
            "sandbox: unavailable (no Landlock); commands run with the user's rights",
        ),
    ],
)
def test_orientation_names_the_sandbox_unless_it_is_the_default(
    tmp_path: Path, state: SandboxState, expected: str | None
) -> None:
    ctx = ExecContext(
        workspace=tmp_path,
        session_id="s1",
        config=VtcodeConfig(),
        provider=None,
        registry=None,
        resumed=False,
        forked_from=None,
        sandbox=state,
    )
    part = make_part(ctx)
    assert isinstance(part, OrientPart)
    section = part.orientation() or ""
    if expected is None:
        assert "### Sandbox" not in section
    else:
        assert f"### Sandbox\n{expected}" in section
