"""What runs in a sandboxed command's child between fork and exec (the `preexec_fn`).

    ordinary user:  vtcode ── fork ──> keeper ── fork ──> init ── exec ──> sh
    root:           vtcode (spawner thread in a new PID namespace) ── fork ──> init ── exec ──> sh

The keeper (a forked vtcode, never exec'd) enters a user namespace, creates the PID, mount and
(network off) network namespaces, forks the init and waits for it, exiting with its status, as
`unshare --fork --kill-child` did. A multi-threaded process cannot enter a user namespace, so
only a user needs it; as root the spawner thread makes the PID namespace (`start`) and the init
makes the others. The init, pid 1 of the new PID namespace, dies with its parent (the keeper, or
vtcode's spawner thread: PR_SET_PDEATHSIG), and when a PID namespace's init dies the kernel
kills every process in it: nothing a command starts outlives it, vtcode or a SIGKILL.

The init, before exec: its own /proc and the read-only policy paths (`mounts`), every
capability dropped (bounding, ambient, effective, permitted, inheritable), no_new_privs,
Landlock, and the unix-socket filter (`seccomp`). The mounts must come first: Landlock forbids
mount(2), and a procfs shows the PID namespace of the process that mounts it, so only the init
can mount it. As root no user namespace is used: root mapped to an unprivileged id could no
longer write root's own workspace; it runs as uid 0 with no capability at all instead.

Only syscalls through the preloaded libc and os functions run here; nothing is imported.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
from collections.abc import Callable
from dataclasses import dataclass

from vtcode.sandbox import landlock, mounts, seccomp
from vtcode.undumpable import make_undumpable

__all__ = ["Channel", "ChildSpec", "child_setup", "make_undumpable", "parent_death_only"]

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWNET = 0x40000000
_CAP_VERSION_3 = 0x20080522


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    )


class Channel:
    """Fds set per spawn (see `launch`): the socket the init sends its seccomp notification fd
    on, and (no keeper) a pipe whose write end vtcode holds, so the init can tell that vtcode
    was alive after its parent-death signal was set."""

    def __init__(self) -> None:
        self.child_fd = -1
        self.alive_r = -1
        self.alive_w = -1


@dataclass(frozen=True, slots=True)
class ChildSpec:
    """Everything the child needs, prepared in vtcode (the child only makes syscalls)."""

    parent: int
    uid: int
    gid: int
    network: bool
    mounts: mounts.MountPlan
    ruleset_fd: int | None  # None: danger-full-access (no Landlock, capabilities kept)
    socket_filter: seccomp.Filter | None  # None: network on (unix sockets too)
    channel: Channel | None = None  # where the filter's notification fd goes (to the broker)
    # False: the spawner thread made the PID namespace, this child is its init (root only).
    keeper: bool = True

    @property
    def user_ns(self) -> bool:
        return self.uid != 0


def _cap_last() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 63


def _check(result: int, what: str) -> None:
    if result:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _die_with_parent(libc: ctypes.CDLL, parent: int) -> None:
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the prctl: nobody will reap us
        os.kill(os.getpid(), signal.SIGKILL)


def parent_death_only(parent: int) -> Callable[[], None]:
    """The unsandboxed fallback's preexec: only the parent-death signal."""
    libc = landlock._libc()
    return lambda: _die_with_parent(libc, parent)


def child_setup(spec: ChildSpec) -> Callable[[], None]:
    """The `preexec_fn` of one sandboxed command (see the module docstring)."""
    libc = landlock._libc()
    cap_last = _cap_last()
    header = _CapHeader(_CAP_VERSION_3, 0)
    nocaps = (_CapData * 2)()

    def setup() -> None:
        try:
            prepare()
        except OSError as exc:  # said on the command's stderr; exit 125 as `env` and `nice` do
            os.write(2, f"vtcode sandbox: {exc}\n".encode(errors="replace"))
            os._exit(125)

    def prepare() -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, ())  # the command is born interruptible
        net = 0 if spec.network else _CLONE_NEWNET
        if not spec.keeper:  # already pid 1 of a new PID namespace, vtcode's child
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            channel = spec.channel
            if channel is not None and channel.alive_r >= 0:
                os.close(channel.alive_w)
                _exit_if_orphan(channel.alive_r)
            _check(libc.unshare(_CLONE_NEWNS | net), "unshare(mount, network namespaces)")
        else:
            _die_with_parent(libc, spec.parent)
            if spec.user_ns:
                _enter_user_namespace(libc, spec.uid, spec.gid)
            _check(libc.unshare(_CLONE_NEWPID | _CLONE_NEWNS | net), "unshare(namespaces)")
            alive_r, alive_w = os.pipe()
            pid = os.fork()
            if pid:
                _keep(pid, alive_r, alive_w)
            os.close(alive_w)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            _exit_if_orphan(alive_r)
        mounts.apply(libc, spec.mounts)
        if spec.ruleset_fd is None:  # danger-full-access: no file limits, capabilities kept
            _filter_sockets(libc, spec)
            return
        for cap in range(cap_last + 1):
            libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
        libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
        _check(libc.capset(ctypes.byref(header), nocaps), "capset")
        landlock.restrict_self(spec.ruleset_fd)  # sets no_new_privs first
        _filter_sockets(libc, spec)

    return setup


def _enter_user_namespace(libc: ctypes.CDLL, uid: int, gid: int) -> None:
    """A user namespace whose root is the user, so the keeper may create the others."""
    _check(libc.unshare(_CLONE_NEWUSER), "unshare(CLONE_NEWUSER)")
    # A non-dumpable process's /proc files belong to root, its maps included: dumpable only
    # while they are written (the keeper is outside the command's namespaces).
    libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
    for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
        fd = os.open(f"/proc/self/{name}", os.O_WRONLY)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
    libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


def _exit_if_orphan(alive_r: int) -> None:
    """After PR_SET_PDEATHSIG: EOF on the pipe means the parent died before it was set."""
    os.set_blocking(alive_r, False)
    try:
        if os.read(alive_r, 1) == b"":
            os.kill(os.getpid(), signal.SIGKILL)
    except BlockingIOError:
        pass  # the parent still holds the write end
    os.close(alive_r)


def _filter_sockets(libc: ctypes.CDLL, spec: ChildSpec) -> None:
    """Install the socket filter and hand its notification fd to vtcode (never to the command:
    a process holding it could answer its own connections)."""
    if spec.socket_filter is None:
        return
    listener = seccomp.install(libc, spec.socket_filter)
    try:
        if spec.channel is not None and spec.channel.child_fd >= 0:
            chan = socket.socket(fileno=spec.channel.child_fd)
            try:
                socket.send_fds(chan, [b"L"], [listener])
            finally:
                chan.detach()
    finally:
        os.close(listener)


def _keep(init: int, alive_r: int, alive_w: int) -> None:
    """The keeper: wait for the init, exit with its status (killed: by the same signal)."""
    os.close(alive_r)
    # Only the liveness pipe stays open: vtcode's pipes, and the exec-error pipe Popen waits
    # on, must see EOF when the command's own processes close them.
    os.closerange(0, alive_w)
    os.closerange(alive_w + 1, 1 << 20)
    for sig in (signal.SIGINT, signal.SIGTERM):  # as unshare: the command decides, not us
        signal.signal(sig, signal.SIG_IGN)
    while True:
        try:
            _, status = os.waitpid(init, 0)
        except ChildProcessError:
            os._exit(1)
        if os.WIFEXITED(status):
            os._exit(os.WEXITSTATUS(status))
        if os.WIFSIGNALED(status):
            sig = signal.Signals(os.WTERMSIG(status))
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)
            os._exit(128 + sig)
