"""Records of running commands, so the next run can end what a killed vtcode left behind.

Every command's process group leader (the launcher, or the shell when there is no sandbox) is
recorded as a file `<pid>-<start>.proc` in a folder of the workspace, holding the owning vtcode's
pid and start time. The record is removed when vtcode reaps the command. A record whose owner is
gone (vtcode was SIGKILLed) and whose process still runs with the same start time (not a reused
pid) is killed with its whole group by `reap_orphans` at the next run's start. Start times come
from /proc/PID/stat (field 22, clock ticks since boot), which a recycled pid cannot repeat.

Inside a PID namespace this is a second line: the kernel already killed everything when the
launcher died. Without one (no sandbox here) it is the only line, and it cannot find a `setsid`
daemon that left the group.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

from vtcode.fsutil import write_all
from vtcode.ownfile import open_own, read_own

__all__ = ["forget", "group_alive", "reap_orphans", "record", "start_time"]

_SUFFIX = ".proc"


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot, None when it is gone (or a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()  # comm may hold spaces and parens
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    return int(fields[19])


def group_alive(pgid: int) -> bool:
    """Whether any non-zombie process is still in group `pgid` (zombies cannot run).

    After the leader died, the leader's pid cannot be handed to a new process while the group
    has members, so these members are the command's own.
    """
    proc = Path("/proc")
    if not proc.is_dir():  # pragma: no cover - non-Linux fallback
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    for entry in os.scandir(proc):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ..." - comm may contain spaces and parens
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) >= 3 and fields[0] not in ("Z", "X") and int(fields[2]) == pgid:
            return True
    return False


def _alive(pid: int, started: int) -> bool:
    return start_time(pid) == started


def record(directory: Path, pid: int) -> Path | None:
    """Write the record of group leader `pid` (best effort: a read-only folder records nothing).

    Only under an existing `.vtcode` (the folder's grandparent): running a command never creates
    vtcode's folder in a workspace that has none.
    """
    if not directory.parent.parent.is_dir():
        return None
    started = start_time(pid)
    owner_started = start_time(os.getpid())
    if started is None or owner_started is None:
        return None
    path = directory / f"{pid}-{started}{_SUFFIX}"
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = open_own(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        try:
            write_all(fd, f"{os.getpid()} {owner_started}\n".encode())
        finally:
            os.close(fd)
    except OSError:
        return None
    return path


def forget(path: Path | None) -> None:
    """The command was reaped: its record goes."""
    if path is not None:
        with contextlib.suppress(OSError):
            path.unlink()


def reap_orphans(directory: Path) -> list[int]:
    """SIGKILL the groups of records whose vtcode is gone; returns the pids it killed."""
    killed: list[int] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return killed
    for entry in entries:
        if not entry.name.endswith(_SUFFIX):
            continue
        try:
            pid_s, start_s = entry.name[: -len(_SUFFIX)].split("-")
            owner_s, owner_start_s = read_own(entry.path, 256).decode().split()
            pid, started = int(pid_s), int(start_s)
            owner, owner_started = int(owner_s), int(owner_start_s)
        except (OSError, ValueError):
            continue
        if _alive(owner, owner_started):
            continue  # another vtcode's command, still owned
        now = start_time(pid)
        if now == started or (now is None and group_alive(pid)):
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
            killed.append(pid)
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
    return killed
