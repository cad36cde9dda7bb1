"""Landlock through ctypes: the filesystem half of the exec_command sandbox (Linux >= 5.13).

Why ctypes and not a PyPI binding: the three syscalls and two structs are all there is, the
bindings on PyPI wrap the same calls with less control over the ABI negotiation, and this
module must import on every OS (it only reports "unavailable" elsewhere).

A ruleset is built once in vtcode (`build_ruleset`: open each path with O_PATH, add a rule) and
applied in the child between fork and exec (`restrict_self`, from `preexec_fn`), where it is
inherited across exec by the command and everything it starts. The access rights handled are
exactly those of the kernel's ABI (`abi_version`), so a newer right this module does not name is
simply not handled, and an older kernel is never asked for a right it lacks (EINVAL).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import platform
import stat
import sys
from collections.abc import Iterable
from pathlib import Path

__all__ = ["LandlockError", "Ruleset", "abi_version", "build_ruleset", "restrict_self"]

_SYS_CREATE_RULESET = 444  # one number on every architecture (the unified syscall table)
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3
IOCTL_DEV = 1 << 15  # ABI 5

READ_RIGHTS = EXECUTE | READ_FILE | READ_DIR | IOCTL_DEV
# The rights a rule on a file (not a folder) may carry.
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV


class LandlockError(OSError):
    """Landlock is missing, disabled, or refused a ruleset."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


_LIBC: ctypes.CDLL | None = None


def _libc() -> ctypes.CDLL:
    """libc, loaded once in vtcode: a child between fork and exec must not dlopen anything."""
    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(None, use_errno=True)
    return _LIBC


def _raise(what: str) -> None:
    err = ctypes.get_errno()
    raise LandlockError(err, f"{what}: {os.strerror(err)}")


def abi_version() -> int:
    """The kernel's Landlock ABI (0: none, not Linux, or disabled at boot)."""
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "aarch64", "riscv64"):
        return 0
    try:
        libc = _libc()
    except OSError:  # pragma: no cover - no libc to call through
        return 0
    version = libc.syscall(
        _SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)
    )
    return max(0, int(version))


def handled_fs_rights(abi: int) -> int:
    """Every filesystem right the ABI knows (1: 13, 2: +REFER, 3: +TRUNCATE, 5: +IOCTL_DEV)."""
    if abi <= 0:
        return 0
    if abi == 1:
        return REFER - 1
    if abi == 2:
        return TRUNCATE - 1
    if abi <= 4:
        return IOCTL_DEV - 1
    return (IOCTL_DEV << 1) - 1


class Ruleset:
    """An open ruleset fd (O_CLOEXEC): applied in a child by `restrict_self`, closed by vtcode."""

    def __init__(self, fd: int, abi: int) -> None:
        self.fd = fd
        self.abi = abi

    def close(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = -1


def build_ruleset(abi: int, *, readable: Iterable[Path], writable: Iterable[Path]) -> Ruleset:
    """A ruleset that allows reading (and executing) under `readable`, everything under `writable`.

    A path that does not exist is skipped (a missing temp dir cannot be written anyway); a path
    that is a file (e.g. /dev/null) gets the file rights only, as the kernel demands.
    """
    handled = handled_fs_rights(abi)
    if not handled:
        raise LandlockError(errno.ENOSYS, "Landlock is not available")
    libc = _libc()
    attr = _RulesetAttr(handled, 0, 0)
    fd = int(libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(8), 0))
    if fd < 0:
        _raise("landlock_create_ruleset")
    ruleset = Ruleset(fd, abi)
    try:
        for paths, rights in ((readable, READ_RIGHTS), (writable, handled)):
            for path in paths:
                _add_path(libc, fd, path, rights & handled)
    except BaseException:
        ruleset.close()
        raise
    return ruleset


def _add_path(libc: ctypes.CDLL, ruleset_fd: int, path: Path, rights: int) -> None:
    try:
        pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not stat.S_ISDIR(os.fstat(pfd).st_mode):
            rights &= FILE_RIGHTS
        rule = _PathBeneathAttr(rights, pfd)
        if libc.syscall(_SYS_ADD_RULE, ruleset_fd, _RULE_PATH_BENEATH, ctypes.byref(rule), 0):
            _raise(f"landlock_add_rule {path}")
    finally:
        os.close(pfd)


def restrict_self(ruleset_fd: int) -> None:
    """In the child, before exec: no new privileges, then the ruleset (inherited across exec).

    `_libc()` was loaded by `build_ruleset` in vtcode, so nothing is dlopened after fork.
    """
    libc = _libc()
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0):
        _raise("prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.syscall(_SYS_RESTRICT_SELF, ruleset_fd, 0):
        _raise("landlock_restrict_self")
