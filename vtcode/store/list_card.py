"""A closed session's `sessions list` row, kept in the closed-session index so a listing of
20,000 sessions does not read 20,000 manifests.

A card is one compact ASCII JSON array (the third field of an index line, closed_index.py):

    [1, ino, size, mtime_ns, ctime_ns,                  version, then the manifest_stat
     created_at, updated_at, turns, events, runs, num_turns,
     last_seq, last_subtype, last_outcome_code, last_num_turns]   the last run (nulls: none)

An array rather than an object because a listing checks 20,000 of them: their shape is one
comparison of element types.

It is made from a completed manifest and the `manifest_stat` of the very file that was read
(recovery.read_manifest). A listing trusts a card only while `lstat(manifest.json)` still gives
that stat: the store replaces a manifest by renaming a new file over it, so any later change (a
resumed run, a repair, a rebuild, a hand edit, a deleted or swapped file) shows as another inode,
size or time, and the listing reads that session as it always did. A matching card is shown as
`completed` without probing the session's lock: a card is made only from a manifest read while
the lock was free, and every taker of the lock moves the manifest's mtime
(manifest_io.mark_in_use). A card that does not parse or has the wrong shape is ignored the
same way; it never becomes a row.
"""

from __future__ import annotations

import functools
import json
from typing import Any, NamedTuple

import orjson

from vtcode.store.manifest_io import ManifestStat
from vtcode.store.models import RunSummary, SessionManifest, SessionStatus

CARD_VERSION = 1


class ListCard(NamedTuple):
    """What `sessions list` shows of a completed session, and the manifest it came from (a
    NamedTuple: a listing builds 20,000 of them)."""

    manifest_stat: ManifestStat
    created_at: str
    updated_at: str
    turns: int
    events: int
    runs: int
    num_turns: int
    last_run: RunSummary | None


def make_card(m: SessionManifest, stat: ManifestStat) -> str | None:
    """The card of a completed manifest read with `stat` (None for any other status: only a
    completed manifest lists the same way until the store changes it)."""
    if m.status is not SessionStatus.COMPLETED:
        return None
    runs = m.runs or []
    last = runs[-1] if runs else None
    card: list[Any] = [
        CARD_VERSION,
        *stat,
        m.created_at,
        m.updated_at,
        m.turn_count,
        m.event_count,
        len(runs),
        sum(r.num_turns for r in runs),
    ]
    if last is None:
        card += [None, None, None, None]
    else:
        card += [last.seq, last.subtype, last.outcome_code, last.num_turns]
    # ensure_ascii: the index is ASCII, and no character of a card can be a newline
    return json.dumps(card, separators=(",", ":"), ensure_ascii=True)


_HEAD = (int,) * 5 + (str, str) + (int,) * 4
_WITH_RUN = (*_HEAD, int, str, str, int)
_NO_RUN = (*_HEAD, *(type(None),) * 4)


@functools.lru_cache(maxsize=1024)
def _run(seq: int, subtype: str, outcome_code: str, num_turns: int) -> RunSummary:
    """One shared (immutable) RunSummary per distinct last run: most sessions of a workspace
    ended the same few ways, and building a frozen dataclass costs more than a lookup."""
    return RunSummary(seq=seq, subtype=subtype, outcome_code=outcome_code, num_turns=num_turns)


def parse_card(text: str) -> ListCard | None:
    """The card in `text`, or None when it is not one this version wrote (damaged, foreign,
    another version): the caller then reads the session itself."""
    if not text.isascii():
        return None  # a card is ASCII; the index reader turned a stray byte into U+FFFD
    try:
        c = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    if type(c) is not list or not c or c[0] != CARD_VERSION:
        return None
    shape = tuple(map(type, c))  # bool is not int here: `type`, not isinstance
    if shape == _WITH_RUN:
        if min(c[7], c[8], c[9], c[10], c[11], c[14]) < 0 or c[9] == 0:
            return None
        last = _run(c[11], c[12], c[13], c[14])
    elif shape == _NO_RUN:
        if min(c[7], c[8], c[10]) < 0 or c[9] != 0:
            return None
        last = None
    else:
        return None
    # positional: a listing parses 20,000 cards
    return ListCard((c[1], c[2], c[3], c[4]), c[5], c[6], c[7], c[8], c[9], c[10], last)
