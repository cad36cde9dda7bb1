"""The central store's ingest (`sync_session`) on a real PostgreSQL: every line stored as the
exact bytes of the log, whatever it holds, once, by either path.

A large batch (a catch-up of `_COPY_FROM` lines or more) is one COPY straight into
vtcode_events, written in COPY's text format by vtcode (escaping is ours to get right); a small
one is INSERT ... ON CONFLICT. When the COPY meets rows a copier without the ingest lock put
there, or a `ts` that is not a string, it rolls back and the careful path (scratch table, ON
CONFLICT DO NOTHING) does the work. Speed: bench/fleet.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.fleet.support import fleet
from vtcode.store.exports import central
from vtcode.store.exports.central import sync_session

SID = "session-20260101T000000Z-ingest"
TEXTS = [
    "plain",
    'quote " and backslash \\ and a path C:\\temp\\new',
    "tab\there, newline\nthere, CR\rthere",
    "unicode: é ✓ 𝄞, NUL-escape \u0000 and \\N literally",
    "\\.",  # COPY's old end-of-data marker, as text
]


def _line(seq: int, **extra: Any) -> str:
    item = {"id": f"item_{seq}", "type": "agent_message", "text": TEXTS[seq % len(TEXTS)]}
    obj = {"schema_version": "0.11.0", "event": {"type": "item.completed", "item": item}}
    return json.dumps({**obj, "seq": seq, "ts": "2026-01-01T00:00:00+00:00", **extra})


def _log(ws: Path, lines: list[str], tail: str = "") -> None:
    folder = ws / ".vtcode" / "sessions" / SID
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "events.jsonl").write_text("".join(f"{x}\n" for x in lines) + tail)


def _stored(url: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT seq, ts IS NULL, type, line FROM vtcode_events WHERE session_id = %s"
            " ORDER BY seq",
            (SID,),
        ).fetchall()


def _sync(url: str, ws: Path, offset: int = 0) -> tuple[int, int]:
    with psycopg.connect(url, autocommit=True) as conn:
        return sync_session(conn, ws, SID, loop_id=None, host="test", offset=offset)


@pytest.fixture
def url(tmp_path: Path, database_url: str) -> str:
    assert fleet(tmp_path, database_url, "migrate").returncode == 0
    return database_url


def _lines_odd(n: int) -> list[str]:
    """`n` lines, some in shapes other writers use: spaces, a raw tab between tokens, a null ts."""
    out = []
    for seq in range(1, n + 1):
        if seq % 7 == 0:
            out.append(_line(seq).replace('"seq":', '"seq":\t'))  # JSON whitespace: a raw tab
        elif seq % 11 == 0:
            out.append(_line(seq, ts=None))
        else:
            out.append(json.dumps(json.loads(_line(seq)), separators=(",", ":")))
    return out


@pytest.mark.parametrize("n", [50, 600])  # the INSERT path and the COPY path
def test_every_line_is_stored_as_its_exact_bytes_once(url: str, tmp_path: Path, n: int) -> None:
    lines = _lines_odd(n)
    _log(tmp_path, lines, tail='{"seq": 99999, "ts": "torn')  # a torn final fragment
    done, offset = _sync(url, tmp_path)
    assert done == n
    assert offset == sum(len(x.encode()) + 1 for x in lines)
    stored = _stored(url)
    assert [r[3] for r in stored] == lines
    assert [r[0] for r in stored] == list(range(1, n + 1))
    assert [r[1] for r in stored] == [json.loads(x)["ts"] is None for x in lines]
    assert {r[2] for r in stored} == {"item.completed"}
    assert _sync(url, tmp_path) == (0, offset)  # again from 0: nothing new
    assert _sync(url, tmp_path, offset) == (0, offset)
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT events FROM vtcode_sessions WHERE session_id = %s", (SID,))
        assert row.fetchone() == (n,)


def test_a_large_batch_stops_at_an_invalid_line_and_resumes_after_repair(
    url: str, tmp_path: Path
) -> None:
    lines = _lines_odd(5000)
    bad = 3001  # in the second COPY chunk
    broken = [*lines[: bad - 1], "{not json", *lines[bad:]]
    _log(tmp_path, broken)
    done, offset = _sync(url, tmp_path)
    assert done == bad - 1
    assert offset == sum(len(x.encode()) + 1 for x in lines[: bad - 1])
    assert [r[3] for r in _stored(url)] == lines[: bad - 1]
    _log(tmp_path, lines)  # repaired
    assert _sync(url, tmp_path, offset)[0] == len(lines) - (bad - 1)
    assert [r[3] for r in _stored(url)] == lines


def test_rows_put_there_without_the_lock_send_the_copy_the_careful_way(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An older vtcode copying the same session does not take the ingest lock: the COPY then
    meets its rows, rolls back, and the scratch table inserts only what is missing."""
    lines = _lines_odd(600)
    _log(tmp_path, lines[:300])
    assert _sync(url, tmp_path)[0] == 300
    _log(tmp_path, lines)
    monkeypatch.setattr(central, "_locked_max_seq", lambda conn, sid: 0)  # as if it raced
    assert _sync(url, tmp_path)[0] == 600  # rows the careful path passed to INSERT
    stored = _stored(url)
    assert [r[3] for r in stored] == lines  # each once


def test_a_ts_that_is_not_a_string_goes_the_careful_way(url: str, tmp_path: Path) -> None:
    lines = _lines_odd(300)
    lines[5] = _line(6, ts=1767225600)
    _log(tmp_path, lines)
    with pytest.raises(psycopg.Error):  # as before: PostgreSQL refuses a number for timestamptz
        _sync(url, tmp_path)
    assert _stored(url) == []  # and nothing half-copied
