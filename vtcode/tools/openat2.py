"""The Linux `openat2(2)` system call with `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`, via ctypes.

The kernel resolves the whole path relative to a folder fd and refuses (EXDEV) any step that
would leave it — `..` past the folder, an absolute path, an absolute symlink — and (ELOOP) any
magic link such as `/proc/self/root`, all in one lookup, so nothing can be swapped between a
check and the open. Python has no binding, hence the raw syscall (number 437 on x86_64 and
aarch64). Kernels before 5.6, other architectures and other systems answer `None`, and the
caller walks the path itself (`vtcode.tools.beneath`).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import sys

RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_BENEATH = 0x08
_NUMBERS = {"x86_64": 437, "aarch64": 437}
_NR = _NUMBERS.get(platform.machine()) if sys.platform.startswith("linux") else None
_RETRIES = 16  # EAGAIN: a concurrent rename raced a `..` lookup; the kernel asks for a retry


class _OpenHow(ctypes.Structure):
    _fields_ = (
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    )


class _State:
    """Whether the running kernel has openat2 (None: not asked yet). Tests switch it off to
    exercise the fallback walk on a kernel that has the syscall."""

    available: bool | None = None if _NR is not None else False


state = _State()
_syscall = ctypes.CDLL(None, use_errno=True).syscall if _NR is not None else None
if _syscall is not None:
    _syscall.restype = ctypes.c_long
    # declared once: per-call ctypes wrappers cost more than the syscall itself
    _syscall.argtypes = (
        ctypes.c_long,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_void_p,
        ctypes.c_size_t,
    )
_HOW_SIZE = ctypes.sizeof(_OpenHow)


def openat2_beneath(dir_fd: int, path: str, flags: int) -> int | None:
    """A new fd for `path` resolved strictly beneath `dir_fd`, or None when the kernel has no
    openat2 (remembered for the rest of the process). Refusals raise OSError: EXDEV for an
    escape, ELOOP for a magic link, ENOENT/ENOTDIR as open(2) would."""
    if state.available is False or _syscall is None or _NR is None:
        return None
    how = _OpenHow(flags | os.O_CLOEXEC, 0, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)
    raw = os.fsencode(path)
    err = errno.EAGAIN
    for _ in range(_RETRIES):
        fd = _syscall(_NR, dir_fd, raw, ctypes.addressof(how), _HOW_SIZE)
        if fd >= 0:
            state.available = True
            return int(fd)
        err = ctypes.get_errno()
        if err in (errno.ENOSYS, errno.EPERM) and state.available is None:
            state.available = False  # no syscall, or a seccomp filter that forbids it
            return None
        if err not in (errno.EAGAIN, errno.EINTR):
            break
    raise OSError(err, os.strerror(err), path)
