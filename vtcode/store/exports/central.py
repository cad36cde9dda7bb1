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
import gc
import re
import sys
from collections.abc import Iterator
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


Line = tuple[int, bytes, dict[str, Any]]  # (seq, the line's exact bytes, its object)


def _read(workspace: Path, session_id: str, offset: int) -> bytes:
    path = session_dir(workspace, session_id) / "events.jsonl"
    try:
        with open(open_own(path), "rb") as f:
            f.seek(offset)
            return f.read()
    except FileNotFoundError:
        return b""


def _split(raw: bytes) -> list[bytes]:
    """The whole lines of `raw` (a final fragment without its newline is not one yet)."""
    whole = raw.rfind(b"\n") + 1
    return raw[: whole - 1].split(b"\n") if whole else []


def _parse(parts: list[bytes]) -> tuple[list[Line], int]:
    """The lines of `parts` before the first torn or invalid one (blank ones skipped), and how
    many parts that consumed."""
    try:
        # The usual case, every line whole and valid: one comprehension, with the cyclic GC
        # paused (50,000 fresh dicts would trigger ~70 collections that find nothing), a third
        # of the cost of the loop below (bench/fleet.py).
        with _gc_paused():
            objs = [orjson.loads(p) for p in parts]
            return [(int(o["seq"]), p, o) for p, o in zip(parts, objs, strict=True)], len(parts)
    except (orjson.JSONDecodeError, ValueError, KeyError, TypeError):
        pass
    out: list[Line] = []
    for n, line in enumerate(parts):
        if line.strip():
            try:
                obj = orjson.loads(line)
                seq = int(obj["seq"])
            except (orjson.JSONDecodeError, ValueError, KeyError, TypeError):
                return out, n  # torn: the local recovery owns it; copy what is whole before it
            out.append((seq, line, obj))
    return out, len(parts)


def _consumed(parts: list[bytes], used: int) -> int:
    return sum(len(p) for p in parts[:used]) + used  # each with its newline


def _lines(workspace: Path, session_id: str, offset: int) -> tuple[list[Line], int]:
    """The whole lines of the log from byte `offset` on, and the offset after the last one."""
    parts = _split(_read(workspace, session_id, offset))
    rows, used = _parse(parts)
    return rows, offset + _consumed(parts, used)


_COPY_FROM = 200  # rows from which COPY beats one INSERT per row
_CHUNK = 2048  # lines per COPY write in `_sync_copy`
_INGEST_LOCK = 7342002  # with hashtext(session_id): one copier per session (db.py has 7342001)


_NEEDS_ESCAPE = re.compile(rb"[\\\t\r\n]")
_NEEDS_ESCAPE_TEXT = re.compile(r"[\\\t\r\n]")
_NULL = "\\N"  # COPY text format's NULL


def _copy_field(value: bytes) -> bytes:
    """One field in COPY's text format: backslash, tab, CR and newline escaped."""
    if _NEEDS_ESCAPE.search(value) is None:
        return value
    value = value.replace(b"\\", b"\\\\").replace(b"\t", b"\\t")
    return value.replace(b"\r", b"\\r").replace(b"\n", b"\\n")


def _copy_text(session_id: str, rows: list[Line]) -> bytes | None:
    """The rows as one COPY text-format buffer (NULL is \\N), or None when a `ts` or `type` is
    not a string (then psycopg's own adaptation decides, as for the small batches). A session
    id needs no escaping (ids.py allows letters, digits, `_.-`)."""
    out: list[bytes] = []
    add = out.append
    for seq, line, obj in rows:
        ts = obj.get("ts")
        kind = (obj.get("event") or {}).get("type", "")
        if not (ts is None or type(ts) is str) or type(kind) is not str:
            return None
        stamp = _NULL if ts is None else ts
        head = f"{session_id}\t{seq}\t{stamp}\t{kind}\t".encode()
        if _NEEDS_ESCAPE_TEXT.search(kind) or (ts is not None and _NEEDS_ESCAPE_TEXT.search(ts)):
            stamp_b = _NULL.encode() if ts is None else _copy_field(ts.encode())
            kind_b = _copy_field(kind.encode())
            head = b"\t".join((session_id.encode(), b"%d" % seq, stamp_b, kind_b, b""))
        add(head)
        add(_copy_field(line) if b"\\" in line or b"\t" in line or b"\r" in line else line)
        add(b"\n")
    return b"".join(out)


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _insert(
    conn: psycopg.Connection[tuple[object, ...]], session_id: str, rows: list[Line]
) -> None:
    """Insert what is not there yet: small batches row by row, large ones through a scratch
    table and one INSERT ... ON CONFLICT DO NOTHING (the careful path: `_sync_copy` is the
    usual one for a large batch)."""
    tuples = [
        (session_id, s, o.get("ts"), (o.get("event") or {}).get("type", ""), line.decode())
        for s, line, o in rows
    ]
    with conn.cursor() as cur:
        if len(rows) < _COPY_FROM:
            cur.executemany(
                "INSERT INTO vtcode_events (session_id, seq, ts, type, line)"
                " VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                tuples,
            )
            return
        cur.execute(
            "CREATE TEMP TABLE IF NOT EXISTS vtcode_events_in (LIKE vtcode_events)"
            " ON COMMIT DELETE ROWS"
        )
        with cur.copy("COPY vtcode_events_in (session_id, seq, ts, type, line) FROM STDIN") as copy:
            for row in tuples:
                copy.write_row(row)
        cur.execute(
            "INSERT INTO vtcode_events SELECT * FROM vtcode_events_in ON CONFLICT DO NOTHING"
        )


def _locked_max_seq(conn: psycopg.Connection[tuple[object, ...]], session_id: str) -> int:
    """Take the session's ingest lock (until the transaction ends), then its stored max seq:
    every copier takes it, so no row above that max can appear before this one commits."""
    conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_INGEST_LOCK, session_id))
    row = conn.execute(
        "SELECT coalesce(max(seq), 0) FROM vtcode_events WHERE session_id = %s", (session_id,)
    ).fetchone()
    return int(row[0]) if row else 0  # type: ignore[call-overload]


def _note_ends(rows: list[Line], summary: dict[str, Any]) -> None:
    """What a thread.completed line says about the session, into `summary`."""
    for _seq, _line, obj in rows:
        ev = obj.get("event") or {}
        if ev.get("type") == "thread.completed":
            summary.update(
                ended_at=obj.get("ts"),
                subtype=ev.get("subtype"),
                outcome_code=ev.get("outcome_code"),
                num_turns=ev.get("num_turns"),
                cost_usd=ev.get("total_cost_usd"),
            )


def _upsert_session(
    conn: psycopg.Connection[tuple[object, ...]],
    workspace: Path,
    session_id: str,
    loop_id: str | None,
    host: str,
    summary: dict[str, Any],
) -> None:
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
            "started_at": None,
            "ended_at": None,
            "subtype": None,
            "outcome_code": None,
            "num_turns": None,
            "cost_usd": None,
            **summary,
        },
    )


class _Careful(Exception):
    """`_sync_copy` met what only the careful path handles; its transaction rolled back."""


def _sync_copy(
    conn: psycopg.Connection[tuple[object, ...]],
    workspace: Path,
    session_id: str,
    parts: list[bytes],
    offset: int,
    *,
    loop_id: str | None,
    host: str,
) -> tuple[int, int]:
    """A large batch (a catch-up): one COPY straight into vtcode_events, written chunk by
    chunk, so the server ingests a chunk while the next is parsed (bench/fleet.py: parsing in
    Python costs about what the server's COPY does; overlapped, not added). The ingest lock
    makes the rows above the max new. Raises `_Careful`, with nothing written, for a `ts` or
    `type` that is not a string, for rows there already (a copier that does not take the
    lock: an older vtcode), or when the first chunk holds no valid line."""
    import psycopg

    summary: dict[str, Any] = {}
    inserted = used_total = 0
    try:
        with conn.transaction():
            have = _locked_max_seq(conn, session_id)
            sql = "COPY vtcode_events (session_id, seq, ts, type, line) FROM STDIN"
            with conn.cursor() as cur, cur.copy(sql) as copy:
                for start in range(0, len(parts), _CHUNK):
                    chunk = parts[start : start + _CHUNK]
                    rows, used = _parse(chunk)
                    if start == 0:
                        if not rows:
                            raise _Careful
                        summary["started_at"] = rows[0][2].get("ts") if offset == 0 else None
                    _note_ends(rows, summary)
                    text = _copy_text(session_id, [r for r in rows if r[0] > have])
                    if text is None:
                        raise _Careful
                    copy.write(text)
                    inserted += text.count(b"\n")
                    used_total += used
                    if used < len(chunk):
                        break  # a torn line: the local recovery owns it
            _upsert_session(conn, workspace, session_id, loop_id, host, summary)
    except psycopg.errors.UniqueViolation:
        raise _Careful from None
    return inserted, offset + _consumed(parts, used_total)


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
    the database lacks; returns (rows inserted, the offset to pass next time).

    Every copier of a session first takes its ingest lock and reads its stored max seq, so two
    copiers (the live exporter, the worker's catch-up, a re-run) never insert the same rows."""
    parts = _split(_read(workspace, session_id, offset))
    if len(parts) >= _COPY_FROM:
        with contextlib.suppress(_Careful):
            return _sync_copy(
                conn, workspace, session_id, parts, offset, loop_id=loop_id, host=host
            )
    lines, used = _parse(parts)
    next_offset = offset + _consumed(parts, used)
    if not lines:
        return 0, next_offset
    summary: dict[str, Any] = {"started_at": lines[0][2].get("ts") if offset == 0 else None}
    _note_ends(lines, summary)
    with conn.transaction():
        have = _locked_max_seq(conn, session_id)
        new = [row for row in lines if row[0] > have]
        _insert(conn, session_id, new)
        _upsert_session(conn, workspace, session_id, loop_id, host, summary)
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
