"""A seccomp filter that keeps a command away from unix sockets when `network = false`.

Why seccomp and not Landlock: Landlock ABI 6 scopes *abstract* unix sockets (the network
namespace already separates those), but no ABI up to 7 (this kernel line) controls `connect` to
a *pathname* socket, and a socket file stays connectable through every mount, read-only or not.
A filter cannot read the address `connect` is given (a pointer), so it hands every `connect`
to vtcode (SECCOMP_RET_USER_NOTIF), whose broker (`unixbroker`) reads the address once and makes
the connection itself, or refuses it: a pathname socket only in the workspace or on
`sandbox.allow_unix_sockets`. Datagram unix sockets (`socket` and `socketpair`) are refused
outright (EACCES): `sendto` can name any socket file on every call, and checking each send
would cost every program. Stream and seqpacket `socketpair`s stay (pipes between a command's own
processes, which many programs use).

Also refused, since they would walk around the rule: `io_uring_setup` (a ring can create and
connect sockets without the `socket` syscall), every syscall of another ABI (i386 `socketcall`
through `int 0x80`, x32), ENOSYS; a seccomp filter of the command's own that asks for a
notification fd (its notification would come before ours, and it could let the call through);
and every socket family but unix, IP and netlink (AF_VSOCK reaches a VM's host whatever the
network namespace), EACCES.

The program is built once in vtcode (`build`) and installed in the child before exec
(`install`), after no_new_privs; it is inherited by everything the command starts.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
from dataclasses import dataclass

__all__ = ["Filter", "build", "install", "supported"]

_SECCOMP_SET_MODE_FILTER = 1
_FLAG_NEW_LISTENER = 1 << 3
_RET_ALLOW = 0x7FFF0000
_RET_USER_NOTIF = 0x7FC00000
_RET_ERRNO = 0x00050000
_LD_ABS_W = 0x20  # BPF_LD | BPF_W | BPF_ABS
_AND = 0x54  # BPF_ALU | BPF_AND | BPF_K
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_JSET = 0x45  # BPF_JMP | BPF_JSET | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_OFF_NR, _OFF_ARCH, _OFF_ARG0, _OFF_ARG1 = 0, 4, 16, 24  # seccomp_data, low words (little-endian)
_AF_UNIX = 1
_AF_INET = 2
_AF_INET6 = 10
_AF_NETLINK = 16
_SOCK_DGRAM = 2
_SOCK_TYPE_MASK = 0xF  # SOCK_NONBLOCK and SOCK_CLOEXEC live above it
_X32_BIT = 0x40000000
_IO_URING_SETUP = 425  # the unified number on every architecture below


@dataclass(frozen=True, slots=True)
class _Arch:
    audit: int
    socket: int
    socketpair: int
    connect: int
    seccomp: int
    x32: bool


_ARCHES = {
    "x86_64": _Arch(0xC000003E, 41, 53, 42, 317, True),
    "aarch64": _Arch(0xC00000B7, 198, 199, 203, 277, False),
    "riscv64": _Arch(0xC00000F3, 198, 199, 203, 277, False),
}


class _SockFilter(ctypes.Structure):
    _fields_ = (
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    )


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter)))


@dataclass(frozen=True, slots=True)
class Filter:
    """A built program, kept alive in vtcode so the child only passes a pointer to the kernel."""

    program: ctypes.Array[_SockFilter]
    fprog: _SockFprog
    nr_seccomp: int


def supported() -> bool:
    """Whether this machine's ABI is one the filter knows (else the sandbox reports it)."""
    return platform.machine() in _ARCHES


# One instruction: (opcode, label jumped to when true, label when false, constant); a plain
# string is a label naming the next instruction.
_Ins = tuple[int, str | None, str | None, int]


def _program(arch: _Arch) -> list[_Ins | str]:
    out: list[_Ins | str] = [
        (_LD_ABS_W, None, None, _OFF_ARCH),
        (_JEQ, None, "deny_all", arch.audit),
        (_LD_ABS_W, None, None, _OFF_NR),
    ]
    if arch.x32:
        out.append((_JGE, "deny_all", None, _X32_BIT))
    out += [
        (_JEQ, "deny_all", None, _IO_URING_SETUP),
        (_JEQ, "notify", None, arch.connect),
        (_JEQ, "socket", None, arch.socket),
        (_JEQ, "pair", None, arch.socketpair),
        (_JEQ, "seccomp", None, arch.seccomp),
        (_RET, None, None, _RET_ALLOW),
        # socket(): the families a network namespace contains; AF_VSOCK and the rest reach
        # past it (a VM's host, hardware), so they are refused with the network off.
        "socket",
        (_LD_ABS_W, None, None, _OFF_ARG0),
        (_JEQ, "unix_type", None, _AF_UNIX),
        (_JEQ, "allow", None, _AF_INET),
        (_JEQ, "allow", None, _AF_INET6),
        (_JEQ, "allow", "deny", _AF_NETLINK),
        "pair",
        (_LD_ABS_W, None, None, _OFF_ARG0),
        (_JEQ, "unix_type", "allow", _AF_UNIX),
        "unix_type",
        (_LD_ABS_W, None, None, _OFF_ARG1),
        (_AND, None, None, _SOCK_TYPE_MASK),
        (_JEQ, "deny", "allow", _SOCK_DGRAM),
        # seccomp(): no filter of the command's own may take a listener: its USER_NOTIF would
        # come before ours, and answering CONTINUE would run the connect unbrokered.
        "seccomp",
        (_LD_ABS_W, None, None, _OFF_ARG0),
        (_JEQ, None, "allow", _SECCOMP_SET_MODE_FILTER),
        (_LD_ABS_W, None, None, _OFF_ARG1),
        (_JSET, "deny", "allow", _FLAG_NEW_LISTENER),
        "allow",
        (_RET, None, None, _RET_ALLOW),
        "notify",
        (_RET, None, None, _RET_USER_NOTIF),
        "deny",
        (_RET, None, None, _RET_ERRNO | errno.EACCES),
        "deny_all",
        (_RET, None, None, _RET_ERRNO | errno.ENOSYS),
    ]
    return out


def _assemble(program: list[_Ins | str]) -> list[tuple[int, int, int, int]]:
    """Resolve labels to the relative jumps BPF wants (counted from the next instruction)."""
    labels: dict[str, int] = {}
    code: list[_Ins] = []
    for ins in program:
        if isinstance(ins, str):
            labels[ins] = len(code)
        else:
            code.append(ins)
    out = []
    for here, (op, jt, jf, k) in enumerate(code):
        out.append(
            (
                op,
                0 if jt is None else labels[jt] - here - 1,
                0 if jf is None else labels[jf] - here - 1,
                k,
            )
        )
    return out


def build() -> Filter:
    """The filter for this machine (call `supported` first)."""
    arch = _ARCHES[platform.machine()]
    ins = _assemble(_program(arch))
    program = (_SockFilter * len(ins))(*(_SockFilter(*i) for i in ins))
    return Filter(program, _SockFprog(len(ins), program), arch.seccomp)


def install(libc: ctypes.CDLL, flt: Filter) -> int:
    """In the child, after no_new_privs: install the filter (kept across exec).

    Returns the notification fd on which vtcode's broker (`unixbroker`) answers `connect`.
    """
    prog = ctypes.byref(flt.fprog)
    fd = int(libc.syscall(flt.nr_seccomp, _SECCOMP_SET_MODE_FILTER, _FLAG_NEW_LISTENER, prog))
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp(SET_MODE_FILTER): {os.strerror(err)}")
    return fd
