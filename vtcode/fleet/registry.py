"""The loop registry: add, remove, pause, resume, run-now, and what `status`/`sessions` show.

A loop's row is its fleet-wide truth: its workspace and `loop run` options, whether a step is
waiting (`queued`, a boolean, so a schedule never piles up more than one waiting step), and the
lease (`running_on`, `lease_until`) that lets at most one worker run a step of it at a time.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from vtcode.errors import NotFoundError, UsageError
from vtcode.events.codec import dumps, loads
from vtcode.fleet import cron
from vtcode.ids import check_id

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "LOOP_RUN_FLAGS",
    "LoopSpec",
    "add",
    "events",
    "loop_run_argv",
    "loops",
    "raw_line",
    "remove",
    "run_now",
    "sessions",
    "set_paused",
]


@dataclasses.dataclass(frozen=True, kw_only=True)
class LoopSpec:
    """What `fleet add` registers: the options of `loop run` plus queue and schedule."""

    loop_id: str
    workspace: Path
    prompt: str
    queue: str = "default"
    schedule: str | None = None
    max_steps: int | None = None
    max_cost_usd: float | None = None
    max_tokens: int | None = None
    provider: str | None = None
    model: str | None = None
    script: str | None = None
    max_turns: int | None = None

    def options(self) -> dict[str, Any]:
        """The stored `options` of the loop's row: what the worker passes to `loop run`."""
        return {k: getattr(self, k) for k in LOOP_RUN_FLAGS if getattr(self, k) is not None}


# A loop's stored option -> the `loop run` flag it is passed as (cli/loop_opts.py declares the
# flags). max_steps is a column of its own (the registry compares steps_done with it).
LOOP_RUN_FLAGS = {
    "max_cost_usd": "--max-cost",
    "max_tokens": "--max-tokens",
    "provider": "--provider",
    "model": "--model",
    "script": "--script",
    "max_turns": "--max-turns",
}


def loop_run_argv(options: dict[str, Any], max_steps: int | None) -> list[str]:
    """`loop run` flags for a loop's stored options and step budget."""
    argv: list[str] = []
    for key, flag in LOOP_RUN_FLAGS.items():
        if options.get(key) is not None:
            argv += [flag, str(options[key])]
    if max_steps is not None:
        argv += ["--max-steps", str(max_steps)]
    return argv


def add(conn: psycopg.Connection[tuple[object, ...]], spec: LoopSpec) -> None:
    """Register (or update) a loop; its workspace must exist; a schedule must parse."""
    check_id(spec.loop_id, "loop id")
    if not spec.prompt.strip():
        raise UsageError("a fleet loop needs a PROMPT")
    if not spec.workspace.is_dir():
        raise UsageError(f"--workspace {spec.workspace}: not a directory")
    next_fire = None
    if spec.schedule:
        next_fire = cron.next_after(spec.schedule, dt.datetime.now(dt.UTC))
    conn.execute(
        """INSERT INTO vtcode_fleet_loops (loop_id, workspace, prompt, queue, schedule, next_fire,
               options, max_steps, queued) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
           ON CONFLICT (loop_id) DO UPDATE SET workspace = EXCLUDED.workspace,
               queued = vtcode_fleet_loops.queued OR EXCLUDED.queued,
               state = CASE WHEN vtcode_fleet_loops.state = 'complete' THEN 'idle'
                   ELSE vtcode_fleet_loops.state END,
               prompt = EXCLUDED.prompt, queue = EXCLUDED.queue, schedule = EXCLUDED.schedule,
               next_fire = EXCLUDED.next_fire, options = EXCLUDED.options,
               max_steps = EXCLUDED.max_steps, updated_at = now()""",
        (
            spec.loop_id,
            str(spec.workspace.resolve()),
            spec.prompt,
            spec.queue,
            spec.schedule,
            next_fire,
            Jsonb(spec.options()),
            spec.max_steps,
            spec.schedule is None,  # no schedule: step after step until a budget stops it
        ),
    )


def _touch(
    conn: psycopg.Connection[tuple[object, ...]], loop_id: str, sql: str, *args: object
) -> None:
    cur = conn.execute(sql, (*args, loop_id))
    if cur.rowcount == 0:
        raise NotFoundError(f"no fleet loop {loop_id!r}", hint="vtcode fleet status")


def remove(conn: psycopg.Connection[tuple[object, ...]], loop_id: str) -> None:
    """Forget the loop (its sessions stay in the store); a running step finishes on its own."""
    _touch(conn, loop_id, "DELETE FROM vtcode_fleet_loops WHERE loop_id = %s")


def set_paused(conn: psycopg.Connection[tuple[object, ...]], loop_id: str, paused: bool) -> None:
    _touch(
        conn,
        loop_id,
        "UPDATE vtcode_fleet_loops SET paused = %s, updated_at = now() WHERE loop_id = %s",
        paused,
    )


def run_now(conn: psycopg.Connection[tuple[object, ...]], loop_id: str) -> None:
    """Ask for one step now (at most one waits; asking twice before it runs is one step)."""
    _touch(
        conn,
        loop_id,
        "UPDATE vtcode_fleet_loops SET queued = true, updated_at = now() WHERE loop_id = %s",
    )


def _state(row: dict[str, Any], now: dt.datetime) -> str:
    if row["running_on"] and row["lease_until"] and row["lease_until"] > now:
        return "running"
    if row["paused"]:
        return "paused"
    if row["state"] in ("complete", "failed"):
        return str(row["state"])
    if row["queued"] or row["running_on"]:  # an expired lease is a step waiting to be re-run
        return "queued"
    return "idle"


def loops(conn: psycopg.Connection[tuple[object, ...]]) -> list[dict[str, Any]]:
    """Every loop as `fleet status --json` shows it: its budgets (max_steps, max_cost_usd,
    max_tokens; null when unset) next to what it used so far."""
    with conn.cursor(row_factory=dict_row) as cur:
        now = cur.execute("SELECT now() AS now").fetchone()["now"]  # type: ignore[index]
        rows = cur.execute("SELECT * FROM vtcode_fleet_loops ORDER BY loop_id").fetchall()
    out = []
    for r in rows:
        state = _state(r, now)
        opts = r["options"] if isinstance(r["options"], dict) else {}
        out.append(
            {
                "loop_id": r["loop_id"],
                "workspace": r["workspace"],
                "queue": r["queue"],
                "schedule": r["schedule"],
                "steps_done": r["steps_done"],
                "max_steps": r["max_steps"],
                "state": state,
                "running_on": r["running_on"] if state == "running" else None,
                "last_session_id": r["last_session_id"],
                "last_outcome": r["last_outcome"],
                "cost_usd": r["cost_usd"],
                "max_cost_usd": opts.get("max_cost_usd"),
                "tokens": r["tokens"],
                "max_tokens": opts.get("max_tokens"),
            }
        )
    return out


def _iso(v: object) -> object:
    return v.isoformat() if isinstance(v, dt.datetime) else v


def sessions(
    conn: psycopg.Connection[tuple[object, ...]], loop_id: str | None
) -> list[dict[str, Any]]:
    """Sessions from every host, oldest first."""
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            "SELECT session_id, loop_id, host, started_at, ended_at, subtype, outcome_code,"
            " num_turns, events, cost_usd FROM vtcode_sessions"
            " WHERE %(loop)s::text IS NULL OR loop_id = %(loop)s ORDER BY started_at, session_id",
            {"loop": loop_id},
        ).fetchall()
    return [{k: _iso(v) for k, v in r.items()} for r in rows]


def raw_line(canonical: str) -> bytes:
    """The `exec --json` line of a stored canonical line: the envelope's event, encoded as the
    stdout sink encodes it (`codec.dumps`; orjson round-trips parsed JSON byte for byte)."""
    return dumps(loads(canonical)["event"]) + b"\n"


def events(conn: psycopg.Connection[tuple[object, ...]], session_id: str) -> list[str]:
    """The stored lines of one session, in order: the canonical lines of its local log."""
    rows = conn.execute(
        "SELECT line FROM vtcode_events WHERE session_id = %s ORDER BY seq", (session_id,)
    ).fetchall()
    if not rows:
        raise NotFoundError(f"no session {session_id!r} in the fleet store")
    return [str(r[0]) for r in rows]
