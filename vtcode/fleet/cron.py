"""Cron schedules: five fields (minute hour day month weekday), or six with seconds first.

Each field is `*`, `N`, `A-B`, `*/S`, `A-B/S` or a comma list of those. Only `next_after` is
needed: the fleet fires a loop at the first tick after now and records that tick once (a
primary key), so three workers polling the same schedule fire it once per tick.
"""

from __future__ import annotations

import datetime as dt

from vtcode.errors import UsageError

__all__ = ["next_after", "parse"]

_BOUNDS = [(0, 59), (0, 59), (0, 23), (1, 31), (1, 12), (0, 6)]  # sec min hour dom mon dow

Schedule = tuple[frozenset[int], ...]


def _field(text: str, lo: int, hi: int, expr: str) -> frozenset[int]:
    out: set[int] = set()
    for part in text.split(","):
        rng, _, step_s = part.partition("/")
        try:
            step = int(step_s) if step_s else 1
            if rng == "*":
                a, b = lo, hi
            elif "-" in rng:
                a_s, b_s = rng.split("-", 1)
                a, b = int(a_s), int(b_s)
            else:
                a = int(rng)
                b = hi if step_s else a
        except ValueError:
            raise UsageError(f"bad cron field {part!r} in {expr!r}") from None
        if step < 1 or not (lo <= a <= b <= hi):
            raise UsageError(f"cron field {part!r} out of range {lo}-{hi} in {expr!r}")
        out.update(range(a, b + 1, step))
    return frozenset(out)


def parse(expr: str) -> Schedule:
    """Parse a schedule; a bad one is a usage error naming the field."""
    fields = expr.split()
    if len(fields) == 5:
        fields = ["0", *fields]
    if len(fields) != 6:
        raise UsageError(f"a cron schedule has 5 or 6 fields, got {len(fields)}: {expr!r}")
    dow = fields[5].replace("7", "0")
    fields[5] = dow
    return tuple(_field(f, lo, hi, expr) for f, (lo, hi) in zip(fields, _BOUNDS, strict=True))


def next_after(expr: str, after: dt.datetime) -> dt.datetime:
    """The first tick strictly after `after` (UTC, whole seconds), within about a year."""
    sec, minute, hour, dom, mon, dow = parse(expr)
    t = after.astimezone(dt.UTC).replace(microsecond=0) + dt.timedelta(seconds=1)
    end = t + dt.timedelta(days=366)
    while t < end:
        if t.month not in mon or t.day not in dom or (t.weekday() + 1) % 7 not in dow:
            t = (t + dt.timedelta(days=1)).replace(hour=0, minute=0, second=0)
        elif t.hour not in hour:
            t = (t + dt.timedelta(hours=1)).replace(minute=0, second=0)
        elif t.minute not in minute:
            t = (t + dt.timedelta(minutes=1)).replace(second=0)
        elif t.second not in sec:
            t += dt.timedelta(seconds=1)
        else:
            return t
    raise UsageError(f"cron schedule {expr!r} never fires")
