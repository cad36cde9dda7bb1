"""Starting one sandboxed command on the spawner thread (see `launch` and `child`).

As root the spawner thread itself enters a new PID namespace for the next child it forks
(`unshare(CLONE_NEWPID)` changes only the namespace of the thread's *future* children) and goes
back to its own right after, so Popen's child is the namespace's init: no keeper process, one
fork of vtcode fewer per command. A pipe whose write end vtcode holds lets that init check that
vtcode was still alive once its parent-death signal was set. An ordinary user must enter a user
namespace first, which a multi-threaded process cannot: there the child forks a keeper.

With the network off, a socket pair carries the init's seccomp notification fd back to vtcode,
whose broker (`unixbroker`) then answers the command's `connect` calls.
"""

from __future__ import annotations

import ctypes
import os
import socket
import subprocess
from collections.abc import Callable

from vtcode.sandbox import landlock
from vtcode.sandbox.child import Channel
from vtcode.sandbox.spawner import Spawner
from vtcode.sandbox.unixbroker import AllowedSockets, start_broker

__all__ = ["own_pid_namespace", "spawn_sandboxed"]

_CLONE_NEWPID = 0x20000000

Start = Callable[[], "subprocess.Popen[bytes]"]


def own_pid_namespace() -> int | None:
    """An fd on vtcode's PID namespace (to come back to), None when not root (keeper path)."""
    if os.getuid() != 0:
        return None
    return os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)


def _in_new_pid_namespace(start: Start, own_pidns: int) -> Start:
    libc = landlock._libc()

    def run() -> subprocess.Popen[bytes]:
        if libc.unshare(_CLONE_NEWPID):
            err = ctypes.get_errno()
            raise OSError(err, f"unshare(CLONE_NEWPID): {os.strerror(err)}")
        try:
            return start()
        finally:  # this thread's next child must not join the namespace just made
            if libc.setns(own_pidns, _CLONE_NEWPID):
                err = ctypes.get_errno()
                raise OSError(err, f"setns(back to vtcode's PID namespace): {os.strerror(err)}")

    return run


def spawn_sandboxed(
    spawner: Spawner,
    channel: Channel,
    allowed: AllowedSockets | None,
    own_pidns: int | None,
    start: Start,
) -> subprocess.Popen[bytes]:
    """Run `start` (the Popen) on the spawner thread; start the broker when there is a filter."""
    ours = theirs = None
    if allowed is not None:
        ours, theirs = socket.socketpair()
        channel.child_fd = theirs.fileno()
    if own_pidns is not None:
        channel.alive_r, channel.alive_w = os.pipe()
        start = _in_new_pid_namespace(start, own_pidns)
    try:
        proc = spawner.call(start)
    finally:
        for fd in (channel.alive_r, channel.alive_w):
            if fd >= 0:
                os.close(fd)
        channel.alive_r = channel.alive_w = channel.child_fd = -1
        if theirs is not None:
            theirs.close()  # now only the init holds it, until its exec: EOF if it failed
    if ours is not None and allowed is not None:
        try:
            ours.settimeout(30)
            _, fds, _, _ = socket.recv_fds(ours, 1, 1)
        except OSError:
            fds = []
        finally:
            ours.close()
        if fds:
            start_broker(fds[0], allowed, name=f"vtcode-unix-broker-{proc.pid}")
    return proc
