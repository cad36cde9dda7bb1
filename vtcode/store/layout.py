"""Where a session lives on disk, and the names the store knows (and so may delete).

```
<workspace>/.vtcode/sessions/
  .locks/<id>.lock          one flock file per session id; never deleted (see locks.py)
  <id>/events.jsonl         canonical envelope lines (the source of truth)
  <id>/manifest.json        cache of the log (SessionManifest)
  <id>/index/turns.json     byte offsets per turn (TurnIndex)
  <id>/derived/             regenerable views (open-responses.jsonl, atif-trajectory.json)
  <id>/images/<sha256>.png  images attached with `exec -i` (the transcript names them)
  .trash-<id>-<stamp>-<r>/  a session being deleted by retention (tombstone)
```

Lock files live outside the session folder so that retention can remove a whole session without
ever deleting a lock file, and so that filelock (which creates a lock's parent folder) can never
re-create a deleted session folder.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from pathlib import Path

from vtcode.errors import NotFoundError
from vtcode.fsutil import ensure_private_dir
from vtcode.ids import check_id

EVENTS = "events.jsonl"
MANIFEST = "manifest.json"
INDEX_DIR = "index"
TURNS = "turns.json"
DERIVED_DIR = "derived"
LOCKS_DIR = ".locks"
TRASH_PREFIX = ".trash-"

OPEN_RESPONSES = "open-responses.jsonl"
ATIF = "atif-trajectory.json"

# Names retention may delete inside a session folder (glob patterns). Anything else is "unknown"
# and keeps the folder alive. Other engineers may extend these lists (additively).
KNOWN_TOP: tuple[str, ...] = (
    EVENTS,
    MANIFEST,
    f"{EVENTS}.torn-*",
    f"{EVENTS}.bak-*",
    f"{EVENTS}.quarantine-*",
    f".{EVENTS}.*.tmp",
    f".{MANIFEST}.*.tmp",
    "transcript.jsonl",  # the loop's model transcript (vtcode/store/transcript.py)
    ".transcript.jsonl.*.tmp",  # `vtcode compact` rewrites the transcript atomically
)
KNOWN_INDEX: tuple[str, ...] = (TURNS, f".{TURNS}.*.tmp")
KNOWN_DERIVED: tuple[str, ...] = (
    OPEN_RESPONSES,
    ATIF,
    "progress.json",
    "trajectory.jsonl",
    "memory.json",
    f".{ATIF}.*.tmp",
    ".*.tmp",
)
# vtcode/steering/queue.py (the follow-up inbox) and vtcode/context/state.py (context state)
KNOWN_STEERING: tuple[str, ...] = ("queue.json", ".queue.json.*.tmp")
KNOWN_CONTEXT: tuple[str, ...] = ("state.json", ".state.json.*.tmp")
KNOWN_SUBDIRS: dict[str, tuple[str, ...]] = {
    INDEX_DIR: KNOWN_INDEX,
    DERIVED_DIR: KNOWN_DERIVED,
    "steering": KNOWN_STEERING,
    "context": KNOWN_CONTEXT,
    # vtcode/store/artifacts.py: run records and write-time diffs (the HTML page reads them)
    "artifacts": ("runs.jsonl", "diffs.jsonl", "prompts.jsonl"),
    # vtcode/store/transcript.py: the images a user attached (`exec -i`), by content digest
    "images": ("*.png", "*.jpg", "*.gif", "*.webp", ".*.tmp"),
}


def sessions_root(workspace: Path) -> Path:
    """`<workspace>/.vtcode/sessions` (not created)."""
    return Path(workspace) / ".vtcode" / "sessions"


def session_dir(workspace: Path, session_id: str) -> Path:
    """The folder of one session; the id is checked against the allow-list first."""
    return sessions_root(workspace) / check_id(session_id)


def session_events_path(workspace: Path, session_id: str) -> Path:
    """events.jsonl of an existing session (NotFoundError otherwise; symlinks refused)."""
    root = sessions_root(workspace)
    sdir = root / check_id(session_id)
    if sdir.is_symlink() or not sdir.is_dir():
        raise NotFoundError(
            f"no session {session_id!r} in {root}",
            hint="`vtcode sessions list` shows the sessions",
        )
    return sdir / EVENTS


def session_exists(workspace: Path, session_id: str) -> bool:
    """A real session folder (not a symlink) exists for this id (the id is checked first)."""
    sdir = sessions_root(workspace) / check_id(session_id)
    return sdir.is_dir() and not sdir.is_symlink()


def lock_path(workspace: Path, session_id: str) -> Path:
    return sessions_root(workspace) / LOCKS_DIR / f"{check_id(session_id)}.lock"


def ensure_root(workspace: Path) -> Path:
    """Create `sessions/` and `sessions/.locks/` (0700) and return the sessions root."""
    root = sessions_root(workspace)
    ensure_private_dir(root / LOCKS_DIR)
    return root


def is_known(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def is_real_dir(path: Path) -> bool:
    """A directory that is not a symlink (lstat)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False
