"""How one exec_command child is started: namespaces, a fresh /proc, Landlock, no capabilities.

The command runs as `/bin/sh -c INIT vtcode-init bash -c COMMAND`, exec'd from a child that
`child.child_setup` prepared between fork and exec: a keeper process that dies with vtcode and
an init, pid 1 of a new PID namespace, in its own mount namespace (its own /proc, the policy
paths read-only: `mounts`) and, with `network = false`, its own network namespace (only a
downed loopback: no connection anywhere, the host's 127.0.0.1 included) and no unix sockets
(`seccomp`). Every capability is dropped, no_new_privs is set and the Landlock ruleset applied;
all of it is inherited by everything the command starts. When a PID namespace's init dies the
kernel kills every process in it: a `setsid` or double-forked daemon cannot outlive the command,
the keeper, or vtcode. Commands are started from one long-lived thread (`spawner`): a
parent-death signal fires when the *thread* that forked the child ends.

Where this is not possible (`probe`), the command runs unsandboxed with PDEATHSIG on its shell
and its process group killed at the end (and recorded for the next run to reap, see `reap`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from vtcode.config.model import SandboxConfig, SandboxMode
from vtcode.ownfile import read_own
from vtcode.sandbox import landlock, mounts, seccomp
from vtcode.sandbox.child import (
    Channel,
    ChildSpec,
    child_setup,
    make_undumpable,
    parent_death_only,
)
from vtcode.sandbox.spawner import Spawner
from vtcode.sandbox.start import own_pid_namespace, spawn_sandboxed
from vtcode.sandbox.unixbroker import AllowedSockets

__all__ = ["FORCE_UNAVAILABLE_ENV", "Launch", "Sandbox", "SandboxState", "pdeathsig_prefix"]

FORCE_UNAVAILABLE_ENV = "VTCODE_SANDBOX_FORCE_UNAVAILABLE"  # tests: behave as if none existed
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
    # Called once the command has ended: the policy files it planted, now removed.
    finish: Callable[[], list[Path]] | None = None


def pdeathsig_prefix() -> list[str] | None:
    """`setpriv --pdeathsig KILL`: the parent-death signal without a `preexec_fn` (no fork)."""
    exe = shutil.which("setpriv")
    return None if exe is None else [exe, "--pdeathsig", "KILL", "--"]


def _init_prefix() -> list[str]:
    return ["/bin/sh", "-c", _INIT, "vtcode-init"]


def _socket_filter(network: bool) -> seccomp.Filter | None:
    return None if network else seccomp.build()


@functools.cache
def _probe(network: bool, mode: str) -> str | None:
    """None when the launcher works here, else why not (once per process and shape)."""
    if os.uname().sysname != "Linux":
        return f"no supported sandbox on {os.uname().sysname}"
    abi = landlock.abi_version() if mode != SandboxMode.DANGER_FULL_ACCESS else 1
    if abi <= 0:
        return "Landlock is not available (kernel older than 5.13, or disabled at boot)"
    if not network and not seccomp.supported():
        return "no seccomp filter for this architecture (unix sockets could not be closed)"
    ruleset = None
    try:
        if mode != SandboxMode.DANGER_FULL_ACCESS:
            ruleset = landlock.build_ruleset(abi, readable=[Path("/")], writable=[])
        own_pidns = own_pid_namespace()
        channel = Channel()
        spec = ChildSpec(
            parent=os.getpid(),
            uid=os.getuid(),
            gid=os.getgid(),
            network=network,
            mounts=mounts.MountPlan((), ()),
            ruleset_fd=ruleset.fd if ruleset else None,
            socket_filter=_socket_filter(network),
            channel=channel,
            keeper=own_pidns is None,
        )
        spawner = Spawner(name="vtcode-sandbox-probe")
        try:
            proc = spawn_sandboxed(
                spawner,
                channel,
                None,
                own_pidns,
                lambda: subprocess.Popen(
                    [*_init_prefix(), "true"],
                    preexec_fn=child_setup(spec),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                ),
            )
            _, stderr = proc.communicate(timeout=10)
        finally:
            spawner.close()
            if own_pidns is not None:
                os.close(own_pidns)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"the sandbox launcher could not start ({exc})"
    finally:
        if ruleset is not None:
            ruleset.close()
    if proc.returncode != 0:
        err = stderr.decode("utf-8", "replace").strip().splitlines()
        return f"namespaces refused ({err[-1] if err else f'exit {proc.returncode}'})"
    return None


class Sandbox:
    """The sandbox of one run: probed once, one Landlock ruleset per workspace, a private temp."""

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self.config = config or SandboxConfig()
        make_undumpable()
        self.mode = SandboxMode(self.config.mode)
        self.network = bool(self.config.network)
        self._rulesets: dict[Path, landlock.Ruleset] = {}
        self._spawner_thread: Spawner | None = None
        self._own_pidns: int | None = None  # root: the spawner thread makes PID namespaces
        self._filter = _socket_filter(self.network) if seccomp.supported() else None
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
        """The prefix, preexec, environment and spawner for one command run in `workspace`.

        The mount plan is made per command, so a git folder made or replaced since the last
        command is bound as it is now.
        """
        parent = os.getpid()
        if not self.available:  # unavailable: PDEATHSIG on the shell, the group killed at the end
            pdeathsig = pdeathsig_prefix()
            if pdeathsig is not None:
                return Launch(pdeathsig, None)
            return Launch([], parent_death_only(parent))
        env: dict[str, str] = {}
        ruleset = None
        real = workspace.resolve()
        plan = mounts.MountPlan((), ())
        socket_folders = [real]
        if self.mode != SandboxMode.DANGER_FULL_ACCESS:
            ruleset = self._ruleset(real)
            plan = mounts.plan(real)
            # A private temp dir in both modes: its sockets are the command's own (the shared
            # temp dirs hold ssh-agent's and tmux's, which stay out of reach).
            env["TMPDIR"] = str(self._private_temp())
            socket_folders.append(self._private_temp())
        channel = Channel()
        if self._own_pidns is None:
            self._own_pidns = own_pid_namespace()
        spec = ChildSpec(
            parent=parent,
            uid=os.getuid(),
            gid=os.getgid(),
            network=self.network,
            mounts=plan,
            ruleset_fd=ruleset.fd if ruleset else None,
            socket_filter=self._filter,
            channel=channel,
            keeper=self._own_pidns is None,
        )
        allowed = None
        if self._filter is not None:
            listed = [_root(real, p) for p in self.config.allow_unix_sockets]
            allowed = AllowedSockets.of(socket_folders, listed)
        spawn: Spawn = functools.partial(
            spawn_sandboxed, self._spawner(), channel, allowed, self._own_pidns
        )
        finish = functools.partial(mounts.remove_planted, plan.absent) if plan.absent else None
        return Launch(
            _init_prefix(), child_setup(spec), env, contained=True, spawn=spawn, finish=finish
        )

    def _spawner(self) -> Spawner:
        if self._spawner_thread is None:
            self._spawner_thread = Spawner(name="vtcode-sandbox-spawner")
        return self._spawner_thread

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
        if self._spawner_thread is not None:
            self._spawner_thread.close()
            self._spawner_thread = None
        if self._own_pidns is not None:
            os.close(self._own_pidns)
            self._own_pidns = None
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
                text = read_own(dotgit, 4096).decode(errors="replace").strip()
            except OSError:
                return []
            if not text.startswith("gitdir:"):
                return []
            gitdir = (folder / text.removeprefix("gitdir:").strip()).resolve()
            dirs = [gitdir]
            with contextlib.suppress(OSError):
                common = read_own(gitdir / "commondir", 4096).decode(errors="replace").strip()
                dirs.append((gitdir / common).resolve())
            return dirs
    return []


def _root(workspace: Path, root: str) -> Path:
    """A writable root: `~` expanded, relative to the workspace."""
    path = Path(root).expanduser()
    return path if path.is_absolute() else workspace / path
