"""Wall-clock helpers: every timestamp vtcode writes is RFC 3339 UTC with microseconds."""

from __future__ import annotations

import datetime as _dt
import time


def utcnow() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


def rfc3339(moment: _dt.datetime | None = None) -> str:
    """`2026-08-23T05:11:10.123456+00:00`, chrono's `to_rfc3339()` shape as upstream writes it."""
    return (moment or utcnow()).isoformat(timespec="microseconds")


def compact_stamp(moment: _dt.datetime | None = None) -> str:
    """`20260823T051110Z`, for file names."""
    return (moment or utcnow()).strftime("%Y%m%dT%H%M%SZ")


def parse_rfc3339(text: str) -> _dt.datetime | None:
    """Parse an RFC 3339 time (None when unparsable, so callers can keep what they cannot date)."""
    try:
        value = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=_dt.UTC)


def monotonic_ms() -> int:
    return int(time.monotonic() * 1000)
