"""Errors that end a command with a documented exit code and a one-line, located message."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes (README and man pages document the same table)."""

    OK = 0
    FAILURE = 1  # error_during_execution; validate: invalid log
    USAGE = 2  # usage error, invalid config, unreadable input
    MAX_TURNS = 3  # error_max_turns
    MAX_BUDGET = 4  # error_max_budget_usd
    LOCK_BUSY = 75  # EX_TEMPFAIL: another process holds the session or loop; retry later
    CANCELLED = 130  # SIGINT/SIGTERM


class VtcodeError(Exception):
    """Base of errors a user can act on; `location` is file:line:col, a key path or a pointer."""

    exit_code: ExitCode = ExitCode.FAILURE

    def __init__(self, message: str, *, location: str | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.location = location
        self.hint = hint

    def __str__(self) -> str:
        head = f"{self.location}: {self.message}" if self.location else self.message
        return f"{head}\n  hint: {self.hint}" if self.hint else head


class UsageError(VtcodeError):
    """Bad arguments or an unreadable input file."""

    exit_code = ExitCode.USAGE


class ConfigError(VtcodeError):
    """vtcode.toml (or a -c override) is invalid."""

    exit_code = ExitCode.USAGE


class InvalidIdError(UsageError):
    """A session, loop or note id fails the allow-list."""


class LockBusyError(VtcodeError):
    """Another process holds the lock; cron should simply try again later."""

    exit_code = ExitCode.LOCK_BUSY


class PersistenceError(VtcodeError):
    """The canonical store failed closed (saturation, oversize, encoding or I/O error)."""

    exit_code = ExitCode.FAILURE


class CorruptLogError(VtcodeError):
    """An invalid line is followed by valid ones: vtcode refuses to append until repaired."""

    exit_code = ExitCode.FAILURE


class NotFoundError(UsageError):
    """A named session, loop or schema does not exist."""


class ExportError(VtcodeError):
    """An explicit export (`--events`, a derived view) failed; the canonical log is still whole."""

    exit_code = ExitCode.FAILURE


class EnvironmentIOError(VtcodeError):
    """The environment refused an operation vtcode needs before a run can start: a read-only
    workspace, a file where a folder belongs, a session folder that is not writable, a full
    disk, a closed or full standard output. Exit 2 with the path and the cause, because the
    fix is in the caller's setup, not in vtcode (an "internal error" would send users to the
    wrong place)."""

    exit_code = ExitCode.USAGE


def _file_ancestor(path: str) -> str | None:
    """The nearest existing ancestor of `path` (itself included) that is not a folder."""
    from pathlib import Path

    probe = Path(path).absolute()
    for candidate in (probe, *probe.parents):
        if (candidate.is_symlink() or candidate.exists()) and not candidate.is_dir():
            return str(candidate)
    return None


_HINTS: dict[str, str] = {
    "EACCES": "the folder is not writable by this user; fix its permissions or use another "
    "workspace (-C)",
    "EPERM": "the operation is not permitted here; fix the permissions or use another workspace",
    "EROFS": "the file system is mounted read-only; run vtcode in a writable workspace (-C)",
    "ENOSPC": "the disk is full; free some space and retry",
    "EDQUOT": "the disk quota is exhausted; free some space and retry",
    "EFBIG": "the file size limit (ulimit -f) was reached",
}


def environment_error(e: OSError, what: str, path: str | None = None) -> EnvironmentIOError:
    """`e` as a located exit-2 error: "<path>: cannot <what>: <cause>" with a hint."""
    import errno as _errno

    where = path if path is not None else e.filename if isinstance(e.filename, str) else None
    cause = e.strerror or str(e)
    name = _errno.errorcode.get(e.errno or 0, "")
    hint = _HINTS.get(name)
    if e.errno == _errno.ENOTDIR and where is not None:
        blocker = _file_ancestor(where)
        if blocker is not None:
            hint = f"{blocker} is a file where a folder is expected; move it away"
    return EnvironmentIOError(f"cannot {what}: {cause}", location=where, hint=hint)
