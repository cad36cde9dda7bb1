"""The compatibility export: `exec --events PATH` / `agent.harness.event_log_path`.

Raw ThreadEvent lines (no envelope), one `write` per line so `tail -f` sees each event as it
happens. A path without an extension is a folder that receives
`harness-<session>-<UTC %Y%m%dT%H%M%SZ>.jsonl`; in such a folder, `harness-*.jsonl` files older
than 30 days are pruned (regular files only, never symlinks), as upstream does.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from pathlib import Path

from vtcode import fsutil
from vtcode.clock import compact_stamp
from vtcode.errors import UsageError
from vtcode.events.codec import encode_raw_line
from vtcode.events.types import ThreadEvent
from vtcode.outpath import OutputTarget, check_output, open_stream, ready_folder

HARNESS_LOG_MAX_AGE_DAYS = 30


def resolve_events_path(
    spec: str,
    session_id: str,
    base: Path | None = None,
    workspace: Path | None = None,
    option: str = "--events",
    *,
    folder_needs_slash: bool = False,
) -> OutputTarget | None:
    """Where an events export writes (None: export off), checked by `vtcode.outpath`'s rules.

    A folder receives one `harness-<session>-<stamp>.jsonl` per run: it is created when its
    parent exists (naming it is asking for it) or when it lies inside the workspace; a missing
    parent elsewhere is refused. Which paths are folders: for `agent.harness.event_log_path`,
    upstream's rule (a path without an extension); with `folder_needs_slash` (`exec --events`),
    only a path written with a trailing `/`, so `--events out` is the file `out` and an existing
    folder named without the slash is refused (exit 2): it used to be written into silently.
    """
    if not spec.strip():
        return None
    if spec == "-":
        return check_output(spec, option=option)
    path = Path(spec).expanduser()
    if not path.is_absolute():
        path = (base or Path.cwd()) / path
    if folder_needs_slash:
        as_folder = spec.endswith("/")
        if not as_folder and path.is_dir():
            raise UsageError(
                f"{option}: cannot write here: {path} is a directory",
                location=spec,
                hint=f"name a file ({spec.rstrip('/')}/events.jsonl), or write {spec}/ for one "
                "harness-<session>-<stamp>.jsonl per run inside it",
            )
    else:
        as_folder = not path.suffix and not (path.exists() and not path.is_dir())
    if not as_folder:
        return check_output(path, workspace=workspace, option=option)
    ready_folder(path, spec=spec, workspace=workspace, option=option)
    prune_harness_logs(path)
    name = path / f"harness-{session_id}-{compact_stamp()}.jsonl"
    return check_output(name, workspace=workspace, option=option)


def prune_harness_logs(folder: Path, max_age_days: int = HARNESS_LOG_MAX_AGE_DAYS) -> list[str]:
    """Remove `harness-*.jsonl` regular files older than `max_age_days` (best effort)."""
    cutoff = time.time() - max_age_days * 86400
    removed: list[str] = []
    with contextlib.suppress(OSError), os.scandir(folder) as it:
        for e in it:
            if not (e.name.startswith("harness-") and e.name.endswith(".jsonl")):
                continue
            with contextlib.suppress(OSError):
                st = e.stat(follow_symlinks=False)
                if stat.S_ISREG(st.st_mode) and st.st_mtime < cutoff:
                    os.unlink(e.path)
                    removed.append(e.name)
    return removed


class CompatExporter:
    """Writes raw event lines to a user-chosen target: a file (created 0600, truncated), or a
    device, FIFO or `-` written through (see `vtcode.outpath`)."""

    def __init__(self, target: OutputTarget) -> None:
        self.path = target.path
        self.name = f"events export {target.describe()}"
        try:
            self._fd = open_stream(target)
        except OSError as e:
            raise UsageError(
                f"cannot open the events export: {e.strerror or e}", location=target.spec
            ) from None

    def handle(self, event: ThreadEvent) -> None:
        fsutil.write_all(self._fd, encode_raw_line(event))

    def finish(self) -> None:
        fd, self._fd = self._fd, -1
        if fd < 0:
            return
        try:
            with contextlib.suppress(OSError):  # pipes and ttys cannot be fsynced
                if stat.S_ISREG(os.fstat(fd).st_mode):
                    os.fsync(fd)
        finally:
            os.close(fd)
