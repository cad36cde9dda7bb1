"""The central store (`vtcode fleet`): a session's local log copied into PostgreSQL, idempotent
on (session_id, seq). The tables are created by `vtcode fleet migrate` (vtcode/fleet/db.py).

Write-ahead by construction: rows come from the canonical `events.jsonl` only, so the database
never holds an event the local log does not. Re-running the copy (a retry, a worker that lost its
connection and catches up, a stalled step re-run) inserts only the lines not there yet, and each
line is stored as the exact text the log holds (`fleet events` prints those bytes back).

`CentralExporter` is the live path, an exporter behind the dispatch gate: when the gate hands it
an event, the log already holds that event's line, so it copies the new complete lines of the
log (not a re-encoding of the event). It never fails a run: a lost database disables it with
one warning, and whoever runs the session next (the fleet worker after the step) catches up
with `sync_session` from the same log.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from vtcode.events.types import ThreadEvent
from vtcode.ownfile import open_own
from vtcode.store.layout import session_dir

if TYPE_CHECKING:
    import psycopg

__all__ = ["CentralExporter", "sync_session"]

_SYNC_AT = frozenset(
    {"thread.started", "item.completed", "turn.completed", "turn.failed", "thread.completed"}
)


def _lines(
    workspace: Path, session_id: str, offset: int
) -> tuple[list[tuple[int, str, dict[str, Any]]], int]:
    """The whole lines of the log from byte `offset` on, and the offset after the last one."""
    path = session_dir(workspace, session_id) / "events.jsonl"
    try:
        with open(open_own(path), "rb") as f:
            f.seek(offset)
            raw = f.read()
    except FileNotFoundError:
        return [], offset
    out = []
    pos = 0
    while (end := raw.find(b"\n", pos)) != -1:
        line = raw[pos:end]
        if line.strip():
            try:
                obj = orjson.loads(line)
                seq = int(obj["seq"])
            except (orjson.JSONDecodeError, ValueError, KeyError, TypeError):
                break  # a torn line: the local recovery owns it; copy what is whole before it
            out.append((seq, line.decode("utf-8"), obj))
        pos = end + 1
    return out, offset + pos


_COPY_FROM = 200  # rows from which COPY into a scratch table beats one INSERT per row


def _insert(
    conn: psycopg.Connection[tuple[object, ...]], rows: Sequence[tuple[object, ...]]
) -> None:
    """Insert what is not there yet: small batches row by row, large ones (a catch-up) by COPY
    into a transaction-scoped scratch table, then one INSERT ... SELECT (bench/fleet.py)."""
    with conn.cursor() as cur:
        if len(rows) < _COPY_FROM:
            cur.executemany(
                "INSERT INTO vtcode_events (session_id, seq, ts, type, line)"
                " VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                rows,
            )
            return
        cur.execute(
            "CREATE TEMP TABLE IF NOT EXISTS vtcode_events_in (LIKE vtcode_events)"
            " ON COMMIT DELETE ROWS"
        )
        with cur.copy("COPY vtcode_events_in (session_id, seq, ts, type, line) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        cur.execute(
            "INSERT INTO vtcode_events SELECT * FROM vtcode_events_in ON CONFLICT DO NOTHING"
        )


def sync_session(
    conn: psycopg.Connection[tuple[object, ...]],
    workspace: Path,
    session_id: str,
    *,
    loop_id: str | None,
    host: str,
    offset: int = 0,
) -> tuple[int, int]:
    """Copy what the local log has (from byte `offset`, for a caller that follows the log) that
    the database lacks; returns (rows inserted, the offset to pass next time)."""
    lines, next_offset = _lines(workspace, session_id, offset)
    if not lines:
        return 0, next_offset
    summary: dict[str, Any] = {"started_at": lines[0][2].get("ts") if offset == 0 else None}
    for _seq, _line, obj in lines:
        ev = obj.get("event") or {}
        if ev.get("type") == "thread.completed":
            summary.update(
                ended_at=obj.get("ts"),
                subtype=ev.get("subtype"),
                outcome_code=ev.get("outcome_code"),
                num_turns=ev.get("num_turns"),
                cost_usd=ev.get("total_cost_usd"),
            )
    with conn.transaction():
        have_row = conn.execute(
            "SELECT coalesce(max(seq), 0) FROM vtcode_events WHERE session_id = %s", (session_id,)
        ).fetchone()
        have = int(have_row[0]) if have_row else 0  # type: ignore[call-overload]
        new = [
            (session_id, s, o.get("ts"), (o.get("event") or {}).get("type", ""), line)
            for s, line, o in lines
            if s > have
        ]
        _insert(conn, new)
        conn.execute(
            """INSERT INTO vtcode_sessions AS s (session_id, loop_id, host, workspace, started_at,
                   ended_at, subtype, outcome_code, num_turns, cost_usd, events)
               VALUES (%(sid)s, %(loop)s, %(host)s, %(ws)s, %(started_at)s, %(ended_at)s,
                   %(subtype)s, %(outcome_code)s, %(num_turns)s, %(cost_usd)s,
                   (SELECT count(*) FROM vtcode_events WHERE session_id = %(sid)s))
               ON CONFLICT (session_id) DO UPDATE SET
                   started_at = coalesce(s.started_at, EXCLUDED.started_at),
                   ended_at = coalesce(EXCLUDED.ended_at, s.ended_at),
                   subtype = coalesce(EXCLUDED.subtype, s.subtype),
                   outcome_code = coalesce(EXCLUDED.outcome_code, s.outcome_code),
                   num_turns = coalesce(EXCLUDED.num_turns, s.num_turns),
                   cost_usd = coalesce(EXCLUDED.cost_usd, s.cost_usd),
                   events = EXCLUDED.events""",
            {
                "sid": session_id,
                "loop": loop_id,
                "host": host,
                "ws": str(workspace),
                "ended_at": None,
                "subtype": None,
                "outcome_code": None,
                "num_turns": None,
                "cost_usd": None,
                **summary,
            },
        )
    return len(new), next_offset


class CentralExporter:
    """Mirror one session into the central store as it is written (see the module docstring)."""

    name = "central store"

    def __init__(
        self, url: str, workspace: Path, session_id: str, *, loop_id: str | None, host: str
    ) -> None:
        self.url = url
        self.workspace = workspace
        self.session_id = session_id
        self.loop_id = loop_id
        self.host = host
        self._conn: psycopg.Connection[tuple[object, ...]] | None = None
        self._broken = False
        self._offset = 0  # what was copied already: each sync reads only the new lines

    def _warn(self, e: Exception) -> None:
        self._broken = True
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(
                f"warning: central store unavailable ({str(e).strip()[:200]}); the session stays"
                " in the local log and is copied when a fleet worker catches up\n"
            )

    def _sync(self) -> None:
        if self._broken:
            return
        try:
            if self._conn is None:
                import psycopg

                self._conn = psycopg.connect(self.url, autocommit=True, connect_timeout=5)
            _n, self._offset = sync_session(
                self._conn,
                self.workspace,
                self.session_id,
                loop_id=self.loop_id,
                host=self.host,
                offset=self._offset,
            )
        except Exception as e:  # never fail the run: the local log is the truth
            self._warn(e)

    def handle(self, event: ThreadEvent) -> None:
        if event.TYPE in _SYNC_AT:
            self._sync()  # a round trip per turn boundary, not per event

    def finish(self) -> None:
        self._sync()
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
