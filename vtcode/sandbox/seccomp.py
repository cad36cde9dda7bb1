"""A seccomp filter that keeps a command away from unix sockets when `network = false`.

Why seccomp and not Landlock: Landlock ABI 6 scopes *abstract* unix sockets (the network
namespace already separates those), but no ABI up to 7 (this kernel line) controls `connect` to
a *pathname* socket, and a socket file stays connectable through every mount, read-only or not.
A filter cannot read the address `connect` is given (a pointer), so it works one step earlier:
`socket(AF_UNIX, ...)` fails with EACCES, whatever the type. Without an AF_UNIX socket nothing
can be connected to ssh-agent, docker.sock, D-Bus or a tmux server, wherever their files lie.
`socketpair` stays allowed (pipes between a command's own processes, which many programs use).

Also refused, since they would walk around the rule: `io_uring_setup` (a ring can create and
connect sockets without the `socket` syscall), every syscall of another ABI (i386 `socketcall`
through `int 0x80`, x32), ENOSYS.

The program is built once in vtcode (`build`) and installed in the child before exec
(`install`), after no_new_privs; it is inherited by everything the command starts.
"""

from __future__ import annotations

import ctypes
import errno
import platform
from dataclasses import dataclass

__all__ = ["Filter", "build", "install", "supported"]

_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_LD_ABS_W = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET = 0x06  # BPF_RET | BPF_K
_OFF_NR, _OFF_ARCH, _OFF_ARG0 = 0, 4, 16  # struct seccomp_data (arg0's low word, little-endian)
_AF_UNIX = 1
_X32_BIT = 0x40000000
_IO_URING_SETUP = 425  # the unified number on every architecture below

# machine -> (AUDIT_ARCH_*, __NR_socket, has the x32 ABI)
_ARCHES = {
    "x86_64": (0xC000003E, 41, True),
    "aarch64": (0xC00000B7, 198, False),
    "riscv64": (0xC00000F3, 198, False),
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


def supported() -> bool:
    """Whether this machine's ABI is one the filter knows (else the sandbox reports it)."""
    return platform.machine() in _ARCHES


def _instructions(machine: str) -> list[tuple[int, int, int, int]]:
    arch, nr_socket, x32 = _ARCHES[machine]
    deny_unix = (_RET, 0, 0, _RET_ERRNO | errno.EACCES)
    deny_all = (_RET, 0, 0, _RET_ERRNO | errno.ENOSYS)
    allow = (_RET, 0, 0, _RET_ALLOW)
    # Jumps count from the next instruction.
    body: list[tuple[int, int, int, int]] = [(_LD_ABS_W, 0, 0, _OFF_ARCH)]
    checks: list[tuple[str, int, int]] = [("arch", _JEQ, arch)]
    if x32:
        checks.append(("x32", _JGE, _X32_BIT))
    checks += [("uring", _JEQ, _IO_URING_SETUP), ("socket", _JEQ, nr_socket)]
    # Layout: ld arch; jeq arch; ld nr; [jge x32]; jeq uring; jeq socket; ret allow;
    #         ld arg0; jeq AF_UNIX; ret allow; ret deny_unix; ret deny_all
    i_ld_arg = 2 + len(checks) + 1  # ld nr, the checks after the arch one, ret allow
    i_jeq_unix = i_ld_arg + 1
    i_allow2 = i_jeq_unix + 1
    i_deny_unix = i_allow2 + 1
    i_deny_all = i_deny_unix + 1
    body.append((_JEQ, 0, i_deny_all - 2, arch))  # at index 1: match -> next, else deny_all
    body.append((_LD_ABS_W, 0, 0, _OFF_NR))
    for name, op, value in checks[1:]:
        here = len(body)
        if name == "socket":
            body.append((op, i_ld_arg - here - 1, 0, value))
        else:
            body.append((op, i_deny_all - here - 1, 0, value))
    body.append(allow)
    body.append((_LD_ABS_W, 0, 0, _OFF_ARG0))
    body.append((_JEQ, i_deny_unix - i_jeq_unix - 1, 0, _AF_UNIX))
    body += [allow, deny_unix, deny_all]
    assert len(body) == i_deny_all + 1
    return body


def build() -> Filter:
    """The filter for this machine (call `supported` first)."""
    ins = _instructions(platform.machine())
    program = (_SockFilter * len(ins))(*(_SockFilter(*i) for i in ins))
    return Filter(program, _SockFprog(len(ins), program))


def install(libc: ctypes.CDLL, flt: Filter) -> None:
    """In the child, after no_new_privs: install the filter (kept across exec)."""
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(flt.fprog), 0, 0):
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_SECCOMP): {errno.errorcode.get(err, err)}")
