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
