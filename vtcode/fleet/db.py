"""The fleet database: where its URL comes from, connecting, and the schema (migrate).

The URL comes from VTCODE_DATABASE_URL or `fleet.database_url` in the user config, never from a
workspace vtcode.toml (config/fleet_url.py). The schema is versioned in `vtcode_fleet_meta`;
`migrate` applies the missing steps in one transaction and refuses a database a newer vtcode
migrated.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from typing import TYPE_CHECKING

from vtcode.config.fleet_url import fleet_database_url
from vtcode.errors import ConfigError, VtcodeError

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "SCHEMA_VERSION",
    "connect",
    "database_url",
    "migrate",
    "require_driver",
    "require_schema",
]

SCHEMA_VERSION = 1

_STEPS: dict[int, str] = {
    1: """
CREATE TABLE vtcode_fleet_loops (
    loop_id      text PRIMARY KEY,
    workspace    text NOT NULL,
    prompt       text NOT NULL,
    queue        text NOT NULL DEFAULT 'default',
    schedule     text,
    next_fire    timestamptz,
    options      jsonb NOT NULL DEFAULT '{}',
    paused       boolean NOT NULL DEFAULT false,
    queued       boolean NOT NULL DEFAULT false,
    running_on   text,
    lease_owner  text,
    lease_until  timestamptz,
    state        text NOT NULL DEFAULT 'idle',
    steps_done   integer NOT NULL DEFAULT 0,
    max_steps    integer,
    last_session_id text,
    last_outcome text,
    cost_usd     double precision NOT NULL DEFAULT 0,
    tokens       bigint NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE vtcode_fleet_fires (
    loop_id text NOT NULL,
    tick    timestamptz NOT NULL,
    fired_by text NOT NULL,
    PRIMARY KEY (loop_id, tick)
);
CREATE TABLE vtcode_fleet_steps (
    id          bigserial PRIMARY KEY,
    loop_id     text NOT NULL,
    host        text NOT NULL,
    started_at  timestamptz NOT NULL DEFAULT now(),
    ended_at    timestamptz,
    exit_code   integer
);
CREATE TABLE vtcode_sessions (
    session_id   text PRIMARY KEY,
    loop_id      text,
    host         text,
    workspace    text,
    started_at   timestamptz,
    ended_at     timestamptz,
    subtype      text,
    outcome_code text,
    num_turns    integer,
    events       integer NOT NULL DEFAULT 0,
    cost_usd     double precision
);
CREATE TABLE vtcode_events (
    session_id text NOT NULL,
    seq        bigint NOT NULL,
    ts         timestamptz,
    type       text NOT NULL,
    line       text NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE VIEW vtcode_cost_per_loop_per_day AS
    SELECT loop_id, date_trunc('day', started_at) AS day, count(*) AS sessions,
           coalesce(sum(cost_usd), 0) AS cost_usd
    FROM vtcode_sessions GROUP BY loop_id, date_trunc('day', started_at);
CREATE VIEW vtcode_failures_by_outcome AS
    SELECT loop_id, coalesce(outcome_code, 'unfinished') AS outcome_code, count(*) AS sessions
    FROM vtcode_sessions WHERE outcome_code IS DISTINCT FROM 'success'
    GROUP BY loop_id, coalesce(outcome_code, 'unfinished');
""",
}


def database_url(env: Mapping[str, str] | None = None) -> str:
    """VTCODE_DATABASE_URL, else `fleet.database_url` of the user config; else a usage error."""
    url = fleet_database_url(env)
    if url is None:
        raise ConfigError(
            "no fleet database: set VTCODE_DATABASE_URL or fleet.database_url in the user config",
            hint="vtcode config set --user fleet.database_url postgresql://HOST/DB",
        )
    return url


def require_driver() -> None:
    """psycopg is the `fleet` extra: without it, one clear error (exit 2), no traceback."""
    if importlib.util.find_spec("psycopg") is None:
        raise ConfigError("the fleet needs psycopg", hint="pip install 'vtcode[fleet]'")


def connect(url: str, *, autocommit: bool = True) -> psycopg.Connection[tuple[object, ...]]:
    """One connection; a refused or unreachable server is a clear error (exit 1), no traceback."""
    require_driver()
    import psycopg

    try:
        # A dead peer must surface as an error within seconds, not hang a poll (TCP keepalives,
        # a send timeout, a statement timeout).
        return psycopg.connect(
            url,
            autocommit=autocommit,
            connect_timeout=10,
            keepalives=1,
            keepalives_idle=5,
            keepalives_interval=2,
            keepalives_count=3,
            tcp_user_timeout=10_000,
            options="-c statement_timeout=15000",
        )
    except psycopg.OperationalError as e:
        raise VtcodeError(f"cannot reach the fleet database: {str(e).strip()}") from None


def _current(conn: psycopg.Connection[tuple[object, ...]]) -> int:
    conn.execute("CREATE TABLE IF NOT EXISTS vtcode_fleet_meta (version integer NOT NULL)")
    row = conn.execute("SELECT max(version) FROM vtcode_fleet_meta").fetchone()
    return int(row[0]) if row and row[0] is not None else 0  # type: ignore[call-overload]


def migrate(url: str) -> tuple[int, int]:
    """Bring the schema to SCHEMA_VERSION; returns (from, to). Idempotent; concurrent callers
    serialise on an advisory lock; a newer schema than this vtcode knows is refused."""
    with connect(url, autocommit=False) as conn:
        conn.execute("SELECT pg_advisory_xact_lock(7342001)")
        have = _current(conn)
        if have > SCHEMA_VERSION:
            raise ConfigError(
                f"the fleet database has schema {have}; this vtcode knows up to {SCHEMA_VERSION}",
                hint="upgrade vtcode on this host",
            )
        for v in range(have + 1, SCHEMA_VERSION + 1):
            conn.execute(_STEPS[v].encode())
            conn.execute("INSERT INTO vtcode_fleet_meta (version) VALUES (%s)", (v,))
        conn.commit()
    return have, SCHEMA_VERSION


def require_schema(conn: psycopg.Connection[tuple[object, ...]]) -> None:
    """Refuse to work on a database that was not migrated to exactly this version."""
    row = conn.execute("SELECT to_regclass('vtcode_fleet_meta')").fetchone()
    have = 0
    if row and row[0] is not None:
        got = conn.execute("SELECT max(version) FROM vtcode_fleet_meta").fetchone()
        have = int(got[0]) if got and got[0] is not None else 0  # type: ignore[call-overload]
    if have != SCHEMA_VERSION:
        raise ConfigError(
            f"the fleet database has schema {have}, this vtcode needs {SCHEMA_VERSION}",
            hint="vtcode fleet migrate",
        )
