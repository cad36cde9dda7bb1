"""A session is resumed only from a log that `vtcode validate --partial` accepts.

The store refuses to append after a corrupt line (`CorruptLogError`), but a log can be
well-formed line by line and still break the contract: an old `sessions repair` could leave a
run without `thread.started`, a seq gap, or a turn that never ends before the next begins.
Appending a new run to such a log makes it worse and hides where it went wrong, so resuming
validates the log first (partial: a crashed run without `thread.completed` is fine, it is closed
on reopen) and refuses with exit 2, the first problem located, and `sessions repair` suggested.
"""

from __future__ import annotations

import os
from pathlib import Path

from vtcode.errors import UsageError
from vtcode.ownfile import open_own
from vtcode.store.layout import EVENTS, session_dir

__all__ = ["refuse_invalid_log"]


def refuse_invalid_log(workspace: Path, session_id: str) -> None:
    """Raise `UsageError` (exit 2) when the session's log does not validate."""
    # Imported here: only a resumed run needs the validator (~90 ms of every exec's start).
    from vtcode.validate.engine import validate_path
    from vtcode.validate.report import FileStatus, Profile, Severity, ValidateOptions

    path = session_dir(workspace, session_id) / EVENTS
    # vtcode's own file: a FIFO, socket, folder or symlink planted there is refused at once
    # (OwnFileRefused, exit 2 with the path); `validate` would wait on a FIFO as on a pipe.
    os.close(open_own(path))
    # vtcode wrote it: every rule group applies, whatever its first line looks like
    report = validate_path(path, ValidateOptions(partial=True, profile=Profile.VTCODE), jobs=1)
    if report.status is FileStatus.VALID:
        return
    errors = [p for p in report.problems if p.severity is Severity.ERROR]
    first = errors[0] if errors else None
    where = f"{path}:{first.line}" if first is not None and first.line else str(path)
    what = f" ({first.code}: {first.message})" if first is not None else ""
    raise UsageError(
        f"session {session_id} cannot be resumed: its log does not validate{what}",
        location=where,
        hint=f"`vtcode sessions repair {session_id}` backs the log up and repairs it; "
        f"`vtcode validate {path}` lists every problem",
    )
