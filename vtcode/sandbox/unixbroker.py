"""The broker that makes a sandboxed command's connections for it (network off).

The seccomp filter (`seccomp`) hands every `connect` of the command to vtcode as a user
notification. For each one this broker, on its own thread per command:

1. reads the address once from the command's memory (/proc/PID/mem), then checks that the
   notification is still live (the pid was not reused);
2. takes a copy of the command's socket (pidfd_getfd: the same open socket);
3. a pathname unix address is resolved as the command sees it (/proc/PID/root or /cwd), must
   be a socket whose real path lies in the workspace, the run's private temp dir, or on
   `sandbox.allow_unix_sockets` (a folder there allows what lies beneath it), else EACCES;
   the broker then connects the copy to *that* file (through /proc/self/fd, so no later swap of
   the path or of the command's memory can change what was checked);
4. any other address (abstract unix names, IP in the empty network namespace) is connected as
   given: the kernel resolves those in the socket's own network namespace, the command's;
5. answers with the result, which the command's `connect` returns.

The kernel never continues the command's own call, so there is no check-then-use window.
Where a connection blocks (a full backlog), it blocks this command's broker thread only.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import select
import socket
import stat
from dataclasses import dataclass
from pathlib import Path

from vtcode.sandbox import landlock
from vtcode.threads import BackgroundThread

__all__ = ["AllowedSockets", "start_broker"]

_RECV = 0xC0502100  # SECCOMP_IOCTL_NOTIF_RECV
_SEND = 0xC0182101  # SECCOMP_IOCTL_NOTIF_SEND
_ID_VALID = 0x40082102  # SECCOMP_IOCTL_NOTIF_ID_VALID
_SYS_PIDFD_OPEN = 434
_SYS_PIDFD_GETFD = 438
_MAX_ADDR = 128  # sizeof(struct sockaddr_storage)


class _Data(ctypes.Structure):
    _fields_ = (
        ("nr", ctypes.c_int),
        ("arch", ctypes.c_uint32),
        ("ip", ctypes.c_uint64),
        ("args", ctypes.c_uint64 * 6),
    )


class _Notif(ctypes.Structure):
    _fields_ = (
        ("id", ctypes.c_uint64),
        ("pid", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("data", _Data),
    )


class _Resp(ctypes.Structure):
    _fields_ = (
        ("id", ctypes.c_uint64),
        ("val", ctypes.c_int64),
        ("error", ctypes.c_int32),
        ("flags", ctypes.c_uint32),
    )


@dataclass(frozen=True, slots=True)
class AllowedSockets:
    """Real paths: sockets beneath `folders`, or exactly `sockets`."""

    folders: tuple[str, ...]
    sockets: tuple[str, ...]

    @classmethod
    def of(cls, folders: list[Path], listed: list[Path]) -> AllowedSockets:
        """Resolve now: a listed folder allows what lies beneath, a listed file only itself."""
        dirs = [os.path.realpath(p) for p in folders]
        files: list[str] = []
        for path in listed:
            real = os.path.realpath(path)
            (dirs if Path(real).is_dir() else files).append(real)
        return cls(tuple(dirs), tuple(files))

    def permits(self, real: str) -> bool:
        return real in self.sockets or any(
            real == d or real.startswith(d.rstrip("/") + "/") for d in self.folders
        )


def start_broker(listener: int, allowed: AllowedSockets, name: str) -> None:
    """Answer `listener`'s notifications on a thread that ends (closing it) with the command."""
    thread = BackgroundThread(target=_serve, args=(listener, allowed), name=name, daemon=True)
    thread.start()


def _serve(listener: int, allowed: AllowedSockets) -> None:
    libc = landlock._libc()
    poller = select.poll()
    poller.register(listener, select.POLLIN)
    try:
        while True:
            for _, events in poller.poll():
                if events & select.POLLIN:
                    _answer_one(libc, listener, allowed)
                elif events & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                    return  # every process under the filter has exited
    finally:
        os.close(listener)


def _answer_one(libc: ctypes.CDLL, listener: int, allowed: AllowedSockets) -> None:
    notif = _Notif()
    if libc.ioctl(listener, ctypes.c_ulong(_RECV), ctypes.byref(notif)):
        return  # the caller died or was interrupted meanwhile
    err = _decide(libc, listener, notif, allowed)
    resp = _Resp(notif.id, 0, -err if err else 0, 0)
    libc.ioctl(listener, ctypes.c_ulong(_SEND), ctypes.byref(resp))  # ENOENT: caller gone


def _live(libc: ctypes.CDLL, listener: int, notif_id: int) -> bool:
    ident = ctypes.c_uint64(notif_id)
    return int(libc.ioctl(listener, ctypes.c_ulong(_ID_VALID), ctypes.byref(ident))) == 0


def _decide(libc: ctypes.CDLL, listener: int, notif: _Notif, allowed: AllowedSockets) -> int:
    """The errno the command's connect returns (0: connected)."""
    pid, args = int(notif.pid), notif.data.args
    sockfd, addr_ptr, addrlen = int(args[0] & 0xFFFFFFFF), int(args[1]), int(args[2] & 0xFFFFFFFF)
    if not 0 < addrlen <= _MAX_ADDR:
        return errno.EINVAL
    try:
        mem = os.open(f"/proc/{pid}/mem", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return errno.EPERM
    try:
        addr = os.pread(mem, addrlen, addr_ptr)
    except OSError:
        return errno.EFAULT
    finally:
        os.close(mem)
    pidfd = int(libc.syscall(_SYS_PIDFD_OPEN, pid, 0))
    if pidfd < 0:
        return errno.EPERM
    try:
        if not _live(libc, listener, notif.id):  # the pid now names another process
            return errno.EINTR
        dup = int(libc.syscall(_SYS_PIDFD_GETFD, pidfd, sockfd, 0))
        if dup < 0:
            return ctypes.get_errno() or errno.EBADF
        try:
            return _connect(libc, pid, dup, addr, allowed)
        finally:
            os.close(dup)
    finally:
        os.close(pidfd)


def _connect(libc: ctypes.CDLL, pid: int, sock: int, addr: bytes, allowed: AllowedSockets) -> int:
    family = int.from_bytes(addr[:2], "little") if len(addr) >= 2 else -1
    try:
        domain = socket.socket(fileno=os.dup(sock))
    except OSError as exc:
        return exc.errno or errno.ENOTSOCK
    with domain:
        is_unix = domain.family == socket.AF_UNIX
    if not (is_unix and family == socket.AF_UNIX and len(addr) > 2 and addr[2] != 0):
        return _raw_connect(libc, sock, addr)  # abstract, unnamed, IP: the socket's own netns
    path = addr[2:].split(b"\0", 1)[0]
    base = f"/proc/{pid}/root" if path.startswith(b"/") else f"/proc/{pid}/cwd"
    try:
        target = os.open(base.encode() + b"/" + path, os.O_PATH | os.O_CLOEXEC)
    except OSError as exc:
        return exc.errno or errno.ENOENT
    try:
        if not stat.S_ISSOCK(os.fstat(target).st_mode):
            return errno.ECONNREFUSED  # what the kernel says for a file that is no socket
        via = Path(f"/proc/self/fd/{target}")
        if not allowed.permits(str(via.readlink())):
            return errno.EACCES
        name = bytes(via)
        return _raw_connect(libc, sock, socket.AF_UNIX.to_bytes(2, "little") + name + b"\0")
    finally:
        with contextlib.suppress(OSError):
            os.close(target)


def _raw_connect(libc: ctypes.CDLL, sock: int, addr: bytes) -> int:
    buf = ctypes.create_string_buffer(addr, len(addr))
    if libc.connect(sock, buf, ctypes.c_uint32(len(addr))):
        return ctypes.get_errno() or errno.EIO
    return 0
