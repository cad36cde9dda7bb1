"""The per-loop lease: claim a due loop, renew the lease while its step runs, release it after.

These statements are what makes "at most one step of a loop anywhere" hold, so they live in one
place: the worker runs them around its `loop run` children, and bench/fleet_engines.py runs the
very same ones around trivial steps to compare this claim path with a job library's.

- claim: one UPDATE over a `FOR UPDATE SKIP LOCKED` pick of a waiting loop (or one whose lease
  expired: its worker stalled), plus a `vtcode_fleet_steps` row, in one transaction;
- renew: push `lease_until` of the loops this owner still holds; the ones it lost are reported;
- release: record the step's outcome, guarded by the owner token, so a stalled worker's late
  release cannot clobber the row of the worker that took the loop over.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

__all__ = ["Claim", "Outcome", "claim", "fail_to_start", "release", "renew"]

Conn = psycopg.Connection[tuple[object, ...]]

_CLAIM = """UPDATE vtcode_fleet_loops SET running_on = %(host)s, lease_owner = %(me)s,
       lease_until = now() + make_interval(secs => %(stall)s), queued = false,
       state = 'idle', updated_at = now()
   WHERE loop_id = (SELECT loop_id FROM vtcode_fleet_loops
       WHERE queue = ANY(%(queues)s) AND NOT paused AND state <> 'complete'
         AND ((running_on IS NULL AND queued)
              OR (running_on IS NOT NULL AND lease_until < now()))
         AND NOT (loop_id = ANY(%(mine)s))
       ORDER BY updated_at FOR UPDATE SKIP LOCKED LIMIT 1)
   RETURNING loop_id, workspace, prompt, options, max_steps"""


@dataclass(frozen=True)
class Claim:
    """A loop this owner now holds, and the `vtcode_fleet_steps` row of the step it will run."""

    loop_id: str
    workspace: Path
    prompt: str
    options: dict[str, Any]
    max_steps: int | None
    step_row: int


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """What a finished step leaves on the loop's row (from the loop's state in its workspace)."""

    steps_done: int
    state: str  # idle | complete | failed
    last_session_id: str | None = None
    last_outcome: str | None = None
    cost_usd: float = 0.0
    tokens: int = 0
    again: bool = False  # queue the loop again (lock busy, cancelled step)


def claim(
    db: Conn,
    *,
    host: str,
    owner: str,
    stall_timeout: float,
    queues: Iterable[str],
    exclude: Iterable[str] = (),
) -> Claim | None:
    """Take the lease of one due loop of `queues` (not one of `exclude`), or None."""
    with db.transaction():
        row = db.execute(
            _CLAIM,
            {
                "host": host,
                "me": owner,
                "stall": stall_timeout,
                "queues": list(queues),
                "mine": list(exclude),
            },
        ).fetchone()
        if row is None:
            return None
        loop_id, workspace, prompt, options, max_raw = row
        step_row = db.execute(
            "INSERT INTO vtcode_fleet_steps (loop_id, host) VALUES (%s, %s) RETURNING id",
            (loop_id, owner),
        ).fetchone()
    assert step_row is not None
    return Claim(
        loop_id=str(loop_id),
        workspace=Path(str(workspace)),
        prompt=str(prompt),
        options=dict(options) if isinstance(options, dict) else {},
        max_steps=None if max_raw is None else int(str(max_raw)),
        step_row=int(str(step_row[0])),
    )


def renew(db: Conn, *, owner: str, stall_timeout: float, loop_ids: Iterable[str]) -> set[str]:
    """Extend the leases `owner` still holds among `loop_ids`; returns those it still holds."""
    rows = db.execute(
        "UPDATE vtcode_fleet_loops SET lease_until = now() + make_interval(secs => %s)"
        " WHERE lease_owner = %s AND loop_id = ANY(%s) RETURNING loop_id",
        (stall_timeout, owner, list(loop_ids)),
    ).fetchall()
    return {str(r[0]) for r in rows}


def release(
    db: Conn, *, loop_id: str, owner: str, step_row: int, exit_code: int, outcome: Outcome
) -> None:
    """Give the lease back with the step's outcome (a no-op if the lease was taken over)."""
    with db.transaction():
        db.execute(
            """UPDATE vtcode_fleet_loops SET running_on = NULL, lease_owner = NULL,
                   lease_until = NULL, steps_done = %s, state = %s,
                   last_session_id = %s, last_outcome = %s, cost_usd = %s, tokens = %s,
                   queued = queued OR %s OR (schedule IS NULL AND %s = 'idle'),
                   updated_at = now()
               WHERE loop_id = %s AND lease_owner = %s""",
            (
                outcome.steps_done,
                outcome.state,
                outcome.last_session_id,
                outcome.last_outcome,
                outcome.cost_usd,
                outcome.tokens,
                outcome.again,
                outcome.state,
                loop_id,
                owner,
            ),
        )
        db.execute(
            "UPDATE vtcode_fleet_steps SET ended_at = now(), exit_code = %s WHERE id = %s",
            (exit_code, step_row),
        )


def fail_to_start(db: Conn, *, loop_id: str, owner: str, reason: str) -> None:
    """The step could not even start on this host (its workspace is missing): the loop is
    `failed` with the reason, visibly, instead of being retried forever."""
    db.execute(
        "UPDATE vtcode_fleet_loops SET running_on = NULL, lease_owner = NULL,"
        " lease_until = NULL, state = 'failed', last_outcome = %s, updated_at = now()"
        " WHERE loop_id = %s AND lease_owner = %s",
        (reason, loop_id, owner),
    )
