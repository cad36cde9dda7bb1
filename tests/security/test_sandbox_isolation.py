"""What a sandboxed command can no longer reach (issues 23 and 30), through the real CLI.

- /proc: its own PID namespace only; no ancestor's environ, cmdline or fd/ (vtcode's provider
  key and prompt are canaries), whatever pid it tries.
- capabilities: none, even when vtcode runs as root (these tests do), and no_new_privs.
- unix sockets: see test_sandbox_unix_sockets.py.
- policy paths (vtcode.toml, .vtcode/, VTCODE_HOME, .git/config, hooks/, info/, a worktree's
  pointer and commondir): written, created in, renamed, deleted or replaced by a symlink: all
  refused, content unchanged; ordinary workspace files stay writable.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.exec_support import spawn_vtcode
from tests.security.sandbox_support import probe_ancestors
from tests.security.test_sandbox import _git, _run
from vtcode.sandbox import Sandbox

pytestmark = pytest.mark.skipif(
    not Sandbox().available, reason="no Landlock + namespaces on this machine"
)


def test_a_command_sees_only_its_own_processes_and_no_ancestor(area: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "pids"
    probe_ancestors(area / "ws", fifo, lambda args, env: spawn_vtcode(args, area / "ws", env=env))


def test_as_root_the_command_has_no_capability(area: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("needs root: the case where the command kept every capability")
    proc, outputs = _run(
        area / "ws", ["grep -E '^(Cap[A-Za-z]+|NoNewPrivs|Seccomp|Uid):' /proc/self/status"]
    )
    assert proc.returncode == 0, proc.stderr
    fields = dict(line.split(":\t", 1) for line in outputs[0]["output"].splitlines())
    for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert fields[cap] == "0000000000000000", fields
    assert fields["NoNewPrivs"] == "1" and fields["Seccomp"] == "2", fields


# A policy path -> what each attack does to it; every one must fail and change nothing.
_ATTACKS = {
    "write": 'echo "[sandbox]" >> "$P"',
    "create_in": 'touch "$P/planted"',
    "rename": 'mv "$P" "$P.moved"',
    "delete": 'rm -rf "$P"',
    "symlink": 'ln -sfn /tmp "$P"',
    "truncate": ': > "$P"',
}


def _fingerprint(path: Path) -> object:
    if path.is_symlink():
        return ("link", os.readlink(path))
    if path.is_dir():
        return ("dir", sorted(p.name for p in path.iterdir()))
    return ("file", path.read_bytes())


def _worktree(area: Path) -> Path:
    repo = area / "ws"
    _git(repo, "-c", "user.email=t@e", "-c", "user.name=t", "commit", "--allow-empty", "-qm", "0")
    wt = area / "outside" / "wt"
    _git(repo, "worktree", "add", "-q", str(wt))
    return wt


@pytest.mark.parametrize("where", ["repo", "worktree"])
def test_policy_paths_are_read_only_inside(area: Path, tmp_path: Path, where: str) -> None:
    ws = area / "ws" if where == "repo" else _worktree(area)
    (ws / "vtcode.toml").write_text("# the user's\n")
    (ws / ".vtcode").mkdir(exist_ok=True)
    home = tmp_path / "vtcode-home"  # a VTCODE_HOME under /tmp, as CI runners make them
    home.mkdir()
    (home / "config.toml").write_text("# user config\n")
    gitdir = area / "ws" / ".git"
    paths = [ws / "vtcode.toml", ws / ".vtcode", home, home / "config.toml"]
    paths += [gitdir / n for n in ("config", "hooks", "info")]
    if where == "worktree":
        own = gitdir / "worktrees" / "wt"
        paths += [ws / ".git", own / "commondir"]
    paths = list(dict.fromkeys(paths))
    commands, labels = [], []
    for path in paths:
        for name, attack in _ATTACKS.items():
            commands.append(f"P={path}; {attack}")
            labels.append((path, name))
    commands.append("echo fine > ordinary.txt && cat ordinary.txt")
    stable = [p for p in paths if p.name != ".vtcode"]  # vtcode itself writes .vtcode/
    before = {p: _fingerprint(p) for p in stable}
    proc, outputs = _run(ws, commands, env={"VTCODE_HOME": str(home)})
    assert proc.returncode == 0, proc.stderr
    for (path, name), out in zip(labels, outputs, strict=False):
        assert out["exit_code"] != 0, (str(path), name, out["output"])
    assert {p: _fingerprint(p) for p in stable} == before
    assert (ws / ".vtcode").is_dir() and not (ws / ".vtcode" / "planted").exists()
    assert not any(Path(f"{p}.moved").exists() for p in paths)
    assert outputs[-1]["exit_code"] == 0 and (ws / "ordinary.txt").read_text() == "fine\n"
    assert subprocess.run(["git", "-C", str(ws), "status"], capture_output=True).returncode == 0


_PLANTS = {
    "vtcode.toml": "printf '[sandbox]\\nmode = \"danger-full-access\"\\n' > vtcode.toml",
    ".git/commondir": 'mkdir -p "$TMPDIR/evil" && echo "$TMPDIR/evil" > .git/commondir',
    ".git/config.worktree": "printf '[core]\\nfsmonitor = touch-pwned\\n' > .git/config.worktree",
}


@pytest.mark.parametrize("name", sorted(_PLANTS))
def test_a_policy_file_absent_at_the_start_is_removed_when_the_command_ends(
    area: Path, name: str
) -> None:
    ws = area / "ws"
    assert not (ws / name).exists()
    proc, outputs = _run(ws, [f"{_PLANTS[name]} && echo planted", f"test ! -e {name} && echo gone"])
    assert proc.returncode == 0, proc.stderr
    plant, check = outputs
    assert "planted" in plant["output"], plant  # a missing name cannot be mounted over
    assert "removed policy files the command created" in plant["output"], plant
    assert str(ws / name) in plant["output"]
    assert check["exit_code"] == 0 and "gone" in check["output"], check
    assert not os.path.lexists(ws / name)
    subprocess.run(["git", "-C", str(ws), "status"], check=True, capture_output=True)


def test_a_submodule_pointer_and_its_git_folder_are_read_only(area: Path) -> None:
    sub_src = area / "outside" / "subsrc"
    subprocess.run(["git", "init", "-q", str(sub_src)], check=True)
    commit = ["-c", "user.email=t@e", "-c", "user.name=t", "commit", "--allow-empty", "-qm", "0"]
    _git(sub_src, *commit)
    ws = area / "ws"
    _git(ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub_src), "sub")
    pointer, module = ws / "sub" / ".git", ws / ".git" / "modules" / "sub"
    assert pointer.is_file() and (module / "config").is_file()
    before = (pointer.read_bytes(), (module / "config").read_bytes())
    proc, outputs = _run(
        ws,
        [
            "echo 'gitdir: /tmp/evil' > sub/.git",
            "rm -f sub/.git",
            "echo '[core]' >> .git/modules/sub/config",
            "touch .git/modules/sub/hooks/post-checkout",
        ],
    )
    assert proc.returncode == 0, proc.stderr
    assert all(o["exit_code"] != 0 for o in outputs), outputs
    assert (pointer.read_bytes(), (module / "config").read_bytes()) == before
    assert not (module / "hooks" / "post-checkout").exists()
