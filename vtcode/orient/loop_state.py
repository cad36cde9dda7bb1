"""Loop run state: `.vtcode/state/loop-<id>.json`, replaced atomically under the loop's lock.

Every write bumps `version` and goes through temp file + fsync + `os.replace` + fsync(dir)
(reliability.md §3.9: 0 unreadable files in 200 SIGKILLs), so a reader never needs the lock and
never sees half a file. Writers hold `loop-<id>.lock` (flock; the kernel drops it when a holder
dies) taken with timeout 0: a busy loop is `LockBusyError`, exit 75, at once.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson

from vtcode.clock import parse_rfc3339, rfc3339
from vtcode.errors import NotFoundError, UsageError
from vtcode.fsutil import atomic_write_json, read_regular
from vtcode.ids import check_id
from vtcode.jsontypes import DecodeError, decode, encode
from vtcode.orient.models import (
    BudgetStatus,
    CostBudget,
    CumulativeTokens,
    LoopRunState,
    LoopStatus,
    LoopStep,
)
from vtcode.orient.paths import ensure_state_dir, loop_lock_path, loop_state_path, state_dir

__all__ = [
    "STEP_HISTORY",
    "LoopCorruptError",
    "check_budget",
    "delete_state",
    "is_resumable",
    "list_states",
    "load_state",
    "loop_lock",
    "loop_step_sessions",
    "new_state",
    "save_state",
]

STEP_HISTORY = 200  # step records kept in the state file (step_index stays the truth)


class LoopCorruptError(UsageError):
    """The loop state file exists but does not parse (only an operator should replace it)."""


def check_budget(state: LoopRunState, budget: CostBudget | None = None) -> BudgetStatus:
    """Upstream's original order: steps >= max, tokens >= max, cost >= max, else ok."""
    b = budget or state.budget
    used = state.cumulative_tokens
    if state.step_index >= b.max_steps:
        return BudgetStatus.STEP_LIMIT_REACHED
    if used.input_tokens + used.output_tokens >= b.max_total_tokens:
        return BudgetStatus.TOKEN_LIMIT_REACHED
    if used.total_cost_usd >= b.max_cost_usd:
        return BudgetStatus.COST_LIMIT_REACHED
    return BudgetStatus.OK


def is_resumable(state: LoopRunState) -> bool:
    return state.status in (LoopStatus.RUNNING, LoopStatus.PAUSED)


def new_state(loop_id: str, *, prompt: str | None, budget: CostBudget) -> LoopRunState:
    now = rfc3339()
    return LoopRunState(
        loop_id=check_id(loop_id, "loop id"),
        step_index=0,
        status=LoopStatus.RUNNING,
        started_at=now,
        updated_at=now,
        budget=budget,
        prompt=prompt,
    )


def _parse(path: Path) -> LoopRunState:
    try:
        raw = read_regular(path, limit=64 << 20)
    except FileNotFoundError:
        raise
    except OSError as e:
        raise LoopCorruptError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        return decode(LoopRunState, orjson.loads(raw))
    except orjson.JSONDecodeError as e:
        raise LoopCorruptError(f"not valid JSON ({e})", location=str(path)) from None
    except DecodeError as e:
        raise LoopCorruptError(f"{e.pointer or '/'}: {e.reason}", location=str(path)) from None


def load_state(workspace: Path, loop_id: str) -> LoopRunState | None:
    """The loop's state (None when it has none yet); a damaged file is `LoopCorruptError`."""
    try:
        return _parse(loop_state_path(workspace, loop_id))
    except FileNotFoundError:
        return None


def require_state(workspace: Path, loop_id: str) -> LoopRunState:
    state = load_state(workspace, loop_id)
    if state is None:
        raise NotFoundError(
            f"no loop {loop_id!r} in {state_dir(workspace)}",
            hint="`vtcode loop list` shows the loops of this workspace",
        )
    return state


def save_state(workspace: Path, state: LoopRunState) -> LoopRunState:
    """Bump `version`, stamp `updated_at`, trim the step window, replace the file atomically.

    Call only while holding `loop_lock` (the read-modify-write is not otherwise safe).
    """
    steps = state.steps[-STEP_HISTORY:]
    state = dataclasses.replace(
        state, version=state.version + 1, updated_at=rfc3339(), steps=list(steps)
    )
    ensure_state_dir(workspace)
    atomic_write_json(loop_state_path(workspace, state.loop_id), encode(state), pretty=True)
    return state


def delete_state(workspace: Path, loop_id: str) -> bool:
    """Remove the state file (never the lock file: see reliability.md §5 rule 4)."""
    from vtcode.fsutil import fsync_dir

    path = loop_state_path(workspace, loop_id)
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    fsync_dir(path.parent)
    return True


@contextmanager
def loop_lock(workspace: Path, loop_id: str) -> Iterator[None]:
    """Hold the loop's lock for the block; busy means `LockBusyError` (exit 75) immediately."""
    from vtcode.store.locks import session_lock

    ensure_state_dir(workspace)
    lock = session_lock(loop_lock_path(workspace, loop_id))
    lock.acquire(0, what=f"loop {loop_id!r}")
    try:
        _remove_orphan_temps(workspace, loop_id)
        yield
    finally:
        lock.release()


def _remove_orphan_temps(workspace: Path, loop_id: str) -> None:
    """Temp files of this loop's state left by a killed writer (we hold the lock, so none is live).

    Only our own regular files (lstat: never a symlink) with the exact temp-name shape go.
    """
    final = loop_state_path(workspace, loop_id)
    prefix = f".{final.name}."
    try:
        entries = list(final.parent.iterdir())
    except OSError:
        return
    for entry in entries:
        if not (entry.name.startswith(prefix) and entry.name.endswith(".tmp")):
            continue
        try:
            st = entry.lstat()
            if stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid():
                entry.unlink()
        except OSError:
            continue


def list_states(workspace: Path) -> list[LoopRunState]:
    """Every readable loop state, newest `updated_at` first (malformed files skipped)."""
    folder = state_dir(workspace)
    try:
        names = sorted(p.name for p in folder.iterdir())
    except OSError:
        return []
    out: list[LoopRunState] = []
    for name in names:
        if not (name.startswith("loop-") and name.endswith(".json")):
            continue
        try:
            out.append(_parse(folder / name))
        except (OSError, LoopCorruptError):
            continue

    def key(s: LoopRunState) -> float:
        moment = parse_rfc3339(s.updated_at)
        return moment.timestamp() if moment else 0.0

    out.sort(key=key, reverse=True)
    return out


def loop_step_sessions(workspace: Path, keep_steps: int) -> frozenset[str]:
    """The sessions of each loop's last `keep_steps` steps: what retention must not remove, so a
    loop's own history never points at sessions that are gone."""
    if keep_steps <= 0:
        return frozenset()
    return frozenset(
        step.session_id for state in list_states(workspace) for step in state.steps[-keep_steps:]
    )


def add_usage(
    totals: CumulativeTokens, *, input_tokens: int, output_tokens: int, cost: float | None
) -> CumulativeTokens:
    return CumulativeTokens(
        input_tokens=totals.input_tokens + input_tokens,
        output_tokens=totals.output_tokens + output_tokens,
        total_cost_usd=round(totals.total_cost_usd + (cost or 0.0), 10),
    )


def last_step(state: LoopRunState) -> LoopStep | None:
    return state.steps[-1] if state.steps else None
