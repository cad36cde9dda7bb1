"""Where the loop-engineering artifacts live under `<workspace>/.vtcode/` (one place for names).

```
.vtcode/state/loop-<id>.json      LoopRunState (atomic replace)      + loop-<id>.lock
.vtcode/state/notes.md            loop notes, append-only             + notes.md.lock
.vtcode/state/decisions.md        loop decisions, append-only         + decisions.md.lock
.vtcode/tasks/current_*.md        harness artifacts (spec, contract, ..., task tracker)
.vtcode/tasks/current_handoff.*   the handoff for the next session (md + json)
.vtcode/tasks/handoffs/           handoffs already taken over by a session (archive)
.vtcode/memories/compaction_summary.md   the last compaction summary
.vtcode/worktrees/<name>-<stamp>/ subagent git worktrees
```
"""

from __future__ import annotations

from pathlib import Path

from vtcode.fsutil import ensure_private_dir
from vtcode.ids import check_id

STATE_DIR = ("state",)
TASKS_DIR = ("tasks",)

NOTES = "notes.md"
DECISIONS = "decisions.md"
HANDOFF_MD = "current_handoff.md"
HANDOFF_JSON = "current_handoff.json"
TASK_TRACKER = "current_task.md"


def vtcode_dir(workspace: Path) -> Path:
    return Path(workspace) / ".vtcode"


def state_dir(workspace: Path) -> Path:
    return vtcode_dir(workspace) / "state"


def ensure_state_dir(workspace: Path) -> Path:
    """`.vtcode/state/` as a private (0700) folder."""
    return ensure_private_dir(state_dir(workspace))


def tasks_dir(workspace: Path) -> Path:
    return vtcode_dir(workspace) / "tasks"


def loop_state_path(workspace: Path, loop_id: str) -> Path:
    return state_dir(workspace) / f"loop-{check_id(loop_id, 'loop id')}.json"


def loop_lock_path(workspace: Path, loop_id: str) -> Path:
    return state_dir(workspace) / f"loop-{check_id(loop_id, 'loop id')}.lock"


def handoff_paths(workspace: Path) -> tuple[Path, Path]:
    """(markdown, json) of the current handoff."""
    t = tasks_dir(workspace)
    return t / HANDOFF_MD, t / HANDOFF_JSON


def worktrees_dir(workspace: Path) -> Path:
    return vtcode_dir(workspace) / "worktrees"
