"""How one exec_command child is started: Landlock, a network namespace, and a PID namespace.

The command runs as

    unshare --pid --fork --kill-child [--net] -- bash -c COMMAND

exec'd directly from vtcode (no extra Python), with a `preexec_fn` that, between fork and exec,
sets PR_SET_PDEATHSIG=SIGKILL (the launcher dies with vtcode, even on SIGKILL), enters a new user
namespace mapped to root when vtcode is not root (so `unshare` may create the others), and
applies the Landlock ruleset (inherited by everything the command starts). `--kill-child` kills
the namespace's init when the launcher dies, and when a PID namespace's init dies the kernel
kills every process in it: a `setsid` or double-forked daemon cannot outlive the command, the
launcher, or vtcode. A fresh network namespace has only a downed loopback, so with
`network = false` no connection can be made, to the host's 127.0.0.1 included.

Where this is not possible (`probe`), the command runs unsandboxed with PDEATHSIG on its shell
and its process group killed at the end (and recorded for the next run to reap, see `reap`).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from vtcode.config.model import SandboxConfig, SandboxMode
from vtcode.sandbox import landlock
from vtcode.sandbox.spawner import Spawner

__all__ = ["FORCE_UNAVAILABLE_ENV", "Launch", "Sandbox", "SandboxState"]

FORCE_UNAVAILABLE_ENV = "VTCODE_SANDBOX_FORCE_UNAVAILABLE"  # tests: behave as if none existed
_PR_SET_PDEATHSIG = 1
_CLONE_NEWUSER = 0x10000000
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts")
# The namespace's init is this `sh`, not the command: the kernel ignores signals an init has no
# handler for, so a command that was pid 1 could not `kill -9 $$` itself or be stopped by its
# own children. The command runs in the background with vtcode's stdin (`<&3`: a background
# job's stdin would otherwise be /dev/null); `wait` returns its status (128+N for signal N).
_INIT = 'exec 3<&0; "$@" <&3 3<&- & wait $!'
_TEMP_DIRS = ("/tmp", "/var/tmp", "/dev/shm")  # noqa: S108 - made writable, not used


@dataclass(frozen=True, slots=True)
class SandboxState:
    """The effective sandbox of a run: what the manifest and the orientation text record."""

    status: str  # "enforced" | "unavailable" | "off" (danger-full-access with network)
    mode: str
    network: bool
    writable_roots: tuple[str, ...] = ()
    reason: str | None = None

    @property
    def is_default(self) -> bool:
        """Enforced workspace-write without network or extra roots: nothing worth a mention."""
        return (
            self.status == "enforced"
            and self.mode == SandboxMode.WORKSPACE_WRITE
            and not self.network
            and not self.writable_roots
        )

    def summary(self) -> str:
        """One line for people and models: the mode, the network, or why there is none."""
        if self.status == "unavailable":
            return f"sandbox: unavailable ({self.reason}); commands run with the user's rights"
        net = "network on" if self.network else "network off"
        roots = f", also writable: {', '.join(self.writable_roots)}" if self.writable_roots else ""
        return f"sandbox: {self.mode}, {net}{roots}"

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "status": self.status,
            "mode": self.mode,
            "network": self.network,
            "writable_roots": list(self.writable_roots),
        }
        if self.reason:
            out["reason"] = self.reason
        return out


Spawn = Callable[[Callable[[], "subprocess.Popen[bytes]"]], "subprocess.Popen[bytes]"]


@dataclass(frozen=True, slots=True)
class Launch:
    """What `Popen` needs for one sandboxed command: argv prefix, preexec, extra environment."""

    prefix: list[str]
    preexec: Callable[[], None] | None  # None: Popen may vfork (see `spawner`)
    env: dict[str, str] = field(default_factory=dict)
    contained: bool = False  # in a PID namespace: nothing it starts can outlive it
    spawn: Spawn = field(default=lambda start: start())  # runs the Popen (on the spawner)


def _pdeathsig_args() -> list[str] | None:
    """`setpriv --pdeathsig KILL`: the parent-death signal without a `preexec_fn` (no fork)."""
    exe = shutil.which("setpriv")
    return None if exe is None else [exe, "--pdeathsig", "KILL", "--"]


def _unshare_args(network: bool) -> list[str] | None:
    exe = shutil.which("unshare")
    if exe is None:
        return None
    net = [] if network else ["--net"]
    return [
        exe,
        "--pid",
        "--fork",
        "--kill-child",
        *net,
        "--",
        "/bin/sh",
        "-c",
        _INIT,
        "vtcode-init",
    ]


def _child_setup(parent: int, ruleset_fd: int | None, user_ns: bool) -> Callable[[], None]:
    """The function run between fork and exec: only syscalls through the preloaded libc."""
    libc = landlock._libc()
    uid, gid = os.getuid(), os.getgid()

    def setup() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # vtcode died before the prctl: nobody will reap us
            os.kill(os.getpid(), signal.SIGKILL)
        if user_ns:
            if libc.unshare(_CLONE_NEWUSER):
                raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWUSER)")
            for name, text in (
                ("setgroups", "deny"),
                ("uid_map", f"0 {uid} 1"),
                ("gid_map", f"0 {gid} 1"),
            ):
                fd = os.open(f"/proc/self/{name}", os.O_WRONLY)
                try:
                    os.write(fd, text.encode())
                finally:
                    os.close(fd)
        if ruleset_fd is not None:
            landlock.restrict_self(ruleset_fd)

    return setup


@functools.cache
def _probe(network: bool, mode: str) -> str | None:
    """None when the launcher works here, else why not (once per process and shape)."""
    if os.uname().sysname != "Linux":
        return f"no supported sandbox on {os.uname().sysname}"
    abi = landlock.abi_version() if mode != SandboxMode.DANGER_FULL_ACCESS else 1
    if abi <= 0:
        return "Landlock is not available (kernel older than 5.13, or disabled at boot)"
    prefix = _unshare_args(network)
    if prefix is None:
        return "util-linux `unshare` not found"
    ruleset = None
    try:
        if mode != SandboxMode.DANGER_FULL_ACCESS:
            ruleset = landlock.build_ruleset(abi, readable=[Path("/")], writable=[])
        proc = subprocess.run(
            [*prefix, "true"],
            preexec_fn=_child_setup(os.getpid(), ruleset.fd if ruleset else None, os.getuid() != 0),
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"the sandbox launcher could not start ({exc})"
    finally:
        if ruleset is not None:
            ruleset.close()
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"unshare refused ({err[-1] if err else f'exit {proc.returncode}'})"
    return None


class Sandbox:
    """The sandbox of one run: probed once, one Landlock ruleset per workspace, a private temp."""

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self.config = config or SandboxConfig()
        self.mode = SandboxMode(self.config.mode)
        self.network = bool(self.config.network)
        self._rulesets: dict[Path, landlock.Ruleset] = {}
        self._spawners: dict[Path, Spawner] = {}
        self._private_tmp: Path | None = None
        forced = os.environ.get(FORCE_UNAVAILABLE_ENV)  # read per run: tests set it per test
        self._reason = (
            f"forced by {FORCE_UNAVAILABLE_ENV}"
            if forced
            else _probe(self.network, self.mode.value)
        )

    @property
    def available(self) -> bool:
        return self._reason is None

    @property
    def state(self) -> SandboxState:
        roots = tuple(self.config.writable_roots)
        if self._reason is not None:
            return SandboxState("unavailable", self.mode.value, True, roots, self._reason)
        off = self.mode == SandboxMode.DANGER_FULL_ACCESS and self.network
        return SandboxState("off" if off else "enforced", self.mode.value, self.network, roots)

    def launch(self, workspace: Path) -> Launch:
        """The prefix, preexec and environment for one command run in `workspace`.

        As root with `setpriv` (the common CI case) nothing runs between fork and exec: the
        parent-death signal comes from `setpriv` and Landlock from the spawner thread, so
        `Popen` takes the vfork path. Otherwise a `preexec_fn` does it all (a user namespace
        must be entered, and its maps written, before Landlock forbids writing them).
        """
        parent = os.getpid()
        pdeathsig = _pdeathsig_args()
        prefix = _unshare_args(self.network) if self.available else None
        if prefix is None:  # unavailable: PDEATHSIG on the shell, the group killed at the end
            if pdeathsig is not None:
                return Launch(pdeathsig, None)
            return Launch([], _child_setup(parent, None, False))
        env: dict[str, str] = {}
        ruleset = None
        if self.mode != SandboxMode.DANGER_FULL_ACCESS:
            ruleset = self._ruleset(workspace.resolve())
            if self.mode == SandboxMode.READ_ONLY:
                env["TMPDIR"] = str(self._private_temp())
        if os.getuid() == 0 and pdeathsig is not None:
            if ruleset is None:
                return Launch([*pdeathsig, *prefix], None, env, contained=True)
            spawner = self._spawner(workspace.resolve(), ruleset)
            return Launch([*pdeathsig, *prefix], None, env, contained=True, spawn=spawner.call)
        setup = _child_setup(parent, ruleset.fd if ruleset else None, os.getuid() != 0)
        return Launch(prefix, setup, env, contained=True)

    def _spawner(self, workspace: Path, ruleset: landlock.Ruleset) -> Spawner:
        spawner = self._spawners.get(workspace)
        if spawner is None:
            spawner = Spawner(ruleset.fd, name=f"vtcode-sandbox-{len(self._spawners)}")
            self._spawners[workspace] = spawner
        return spawner

    def _ruleset(self, workspace: Path) -> landlock.Ruleset:
        ruleset = self._rulesets.get(workspace)
        if ruleset is None:
            writable = [Path(d) for d in _DEVICES]
            if self.mode == SandboxMode.READ_ONLY:
                writable.append(self._private_temp())
            else:
                writable += [workspace, Path(tempfile.gettempdir())]
                writable += [Path(d) for d in _TEMP_DIRS]
                writable += [_root(workspace, r) for r in self.config.writable_roots]
                writable += _git_dirs(workspace)
            ruleset = landlock.build_ruleset(
                landlock.abi_version(), readable=[Path("/")], writable=writable
            )
            self._rulesets[workspace] = ruleset
        return ruleset

    def _private_temp(self) -> Path:
        if self._private_tmp is None:
            self._private_tmp = Path(tempfile.mkdtemp(prefix="vtcode-sandbox-"))
        return self._private_tmp

    def close(self) -> None:
        """Close the rulesets and remove the private temp dir (read-only mode)."""
        for spawner in self._spawners.values():
            spawner.close()
        self._spawners.clear()
        for ruleset in self._rulesets.values():
            ruleset.close()
        self._rulesets.clear()
        if self._private_tmp is not None:
            shutil.rmtree(self._private_tmp, ignore_errors=True)
            self._private_tmp = None


def _git_dirs(workspace: Path) -> list[Path]:
    """The git folders commits in `workspace` write to, when they are not inside it.

    A workspace below a repository's top (its `.git` is in a parent folder) and a linked
    worktree (`.git` is a file: `gitdir: <main>/.git/worktrees/<name>`, whose `commondir` names
    the main `.git`) commit into folders outside the workspace; they stay writable, as the
    workspace's own `.git` does.
    """
    for folder in (workspace, *workspace.parents):
        dotgit = folder / ".git"
        if dotgit.is_dir():
            return [] if folder == workspace else [dotgit]
        if dotgit.is_file():
            try:
                text = dotgit.read_text(errors="replace").strip()
            except OSError:
                return []
            if not text.startswith("gitdir:"):
                return []
            gitdir = (folder / text.removeprefix("gitdir:").strip()).resolve()
            dirs = [gitdir]
            with contextlib.suppress(OSError):
                common = (gitdir / "commondir").read_text().strip()
                dirs.append((gitdir / common).resolve())
            return dirs
    return []


def _root(workspace: Path, root: str) -> Path:
    """A writable root: `~` expanded, relative to the workspace."""
    path = Path(root).expanduser()
    return path if path.is_absolute() else workspace / path
