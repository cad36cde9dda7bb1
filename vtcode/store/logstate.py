"""What the manifest and turn index say about a log, derived from its lines in order.

`LogState` is the one place that turns a sequence of events into manifest and index values, so
the drain (incrementally), recovery (from a durable checkpoint) and rebuild (from byte 0) cannot
disagree. `check_line` is the one definition of a valid canonical line.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson

from vtcode.clock import rfc3339
from vtcode.events.codec import decode_event
from vtcode.events.types import ThreadCompletedEvent
from vtcode.jsontypes import DecodeError, encode
from vtcode.store.models import (
    SESSION_STORE_SCHEMA_VERSION,
    RunSummary,
    SandboxRecord,
    SessionManifest,
    SessionStatus,
    TurnIndex,
    TurnIndexEntry,
)

TURN_END = frozenset({"turn.completed", "turn.failed"})
BOUNDARY = TURN_END | {"thread.completed"}
LIFECYCLE = BOUNDARY | {"thread.started", "turn.started"}
# A line may carry the envelope and an event of up to `max_event_bytes`; allow envelope overhead.
LINE_SLACK = 4096


class BadLine(ValueError):
    """A complete line that is not a valid canonical envelope line (the reason is the message)."""


@dataclasses.dataclass(frozen=True, slots=True)
class LineInfo:
    """The facts of a valid line the store needs."""

    etype: str
    seq: int
    ts: str | None
    run: RunSummary | None = None  # for a `thread.completed` line: how the run ended


def run_summary(event: object, seq: int) -> RunSummary | None:
    """The manifest's record of a run, when `event` is the run's `thread.completed`."""
    if not isinstance(event, ThreadCompletedEvent):
        return None
    return RunSummary(
        seq=seq,
        subtype=event.subtype.value,
        outcome_code=event.outcome_code,
        num_turns=event.num_turns,
    )


def parse_line(raw: bytes, expected_seq: int | None, max_line: int) -> tuple[LineInfo, Any]:
    """Validate one line (without its newline): its facts and the parsed envelope object.

    Valid: a JSON object with a string `schema_version`, an `event` object with a string `type`,
    a `seq` equal to `expected_seq` (a line without `seq`, as upstream writes, takes the expected
    value), and, for the five lifecycle types, an event that decodes exactly. Unknown event types
    are valid (forward compatibility). Raises `BadLine` with the reason otherwise.
    """
    if len(raw) > max_line:
        raise BadLine(f"line is longer than {max_line} bytes")
    try:
        obj: Any = orjson.loads(raw)
    except (orjson.JSONDecodeError, RecursionError) as e:
        raise BadLine(f"not JSON ({e})") from None
    if not isinstance(obj, dict):
        raise BadLine("not a JSON object")
    if not isinstance(obj.get("schema_version"), str):
        raise BadLine("missing or non-string `schema_version`")
    event = obj.get("event")
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise BadLine("missing `event` object with a string `type`")
    etype: str = event["type"]
    seq = obj.get("seq")
    if seq is None:
        seq = expected_seq if expected_seq is not None else 1
    elif not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        raise BadLine("`seq` is not a positive integer")
    elif expected_seq is not None and seq != expected_seq:
        raise BadLine(f"seq {seq} where {expected_seq} was expected")
    run = None
    if etype in LIFECYCLE:
        try:
            run = run_summary(decode_event(event, "/event"), seq)
        except (DecodeError, RecursionError) as e:
            raise BadLine(f"invalid {etype} event ({e})") from None
    ts = obj.get("ts")
    return LineInfo(etype=etype, seq=seq, ts=ts if isinstance(ts, str) else None, run=run), obj


def check_line(raw: bytes, expected_seq: int | None, max_line: int) -> LineInfo:
    """`parse_line` when only the facts matter."""
    return parse_line(raw, expected_seq, max_line)[0]


@dataclasses.dataclass(slots=True)
class _Turn:
    start_offset: int
    end_offset: int
    event_count: int
    ts: str
    start_seq: int
    closed: bool = False


@dataclasses.dataclass(slots=True)
class LogState:
    """Manifest and index values of a log prefix; `size` is the byte length of that prefix."""

    session_id: str
    created_at: str
    updated_at: str
    status: SessionStatus = SessionStatus.ACTIVE
    turns: list[_Turn] = dataclasses.field(default_factory=list)
    event_count: int = 0
    first_seq: int | None = None
    last_seq: int = 0
    size: int = 0
    sandbox: dict[str, Any] | None = None  # the run's effective sandbox (not in the log)
    runs: list[RunSummary] = dataclasses.field(default_factory=list)  # retained thread.completed

    @classmethod
    def empty(cls, session_id: str, created_at: str | None = None) -> LogState:
        now = created_at or rfc3339()
        return cls(session_id=session_id, created_at=now, updated_at=now)

    @property
    def in_turn(self) -> bool:
        return bool(self.turns) and not self.turns[-1].closed

    @property
    def turn_count(self) -> int:
        return sum(1 for t in self.turns if t.closed)

    @property
    def next_seq(self) -> int:
        return self.last_seq + 1

    @property
    def expected_seq(self) -> int | None:
        """The seq the next line must carry (None before the first line: any start is valid)."""
        return self.last_seq + 1 if self.event_count else None

    def apply(
        self, etype: str, seq: int, ts: str | None, length: int, run: RunSummary | None = None
    ) -> bool:
        """Account for one line of `length` bytes; True when it is a durability boundary.

        `run` is the line's `run_summary` (a `thread.completed`), kept for `sessions list`."""
        start = self.size
        end = start + length
        if self.first_seq is None:
            self.first_seq = seq
        self.last_seq = seq
        self.event_count += 1
        self.size = end
        if ts is not None:
            self.updated_at = ts
            if self.event_count == 1:  # a rebuilt manifest dates the session by its first line
                self.created_at = min(self.created_at, ts)
        if etype == "turn.started":
            self.status = SessionStatus.ACTIVE
            self.turns.append(_Turn(start, end, 1, ts or self.updated_at, seq))
            return False
        if etype == "thread.started":
            self.status = SessionStatus.ACTIVE
        if self.in_turn:
            cur = self.turns[-1]
            cur.end_offset = end
            cur.event_count += 1
            if etype in TURN_END:
                cur.closed = True
        if etype == "thread.completed":
            self.status = SessionStatus.COMPLETED
            if run is not None:
                self.runs.append(dataclasses.replace(run, seq=seq))
        return etype in BOUNDARY

    # ----------------------------------------------------------------------------------------
    # eviction

    def eviction_cut(self, max_events: int) -> int | None:
        """Index of the first turn to keep when the log holds more than `max_events` events.

        Only whole, closed turns from the oldest on are evicted, and the newest turn is always
        kept, so a single huge turn may leave the log above the cap. None: nothing to evict.
        """
        if self.event_count <= max_events or len(self.turns) < 2 or self.first_seq is None:
            return None
        keep_from = 0
        for i in range(1, len(self.turns)):
            if not self.turns[i - 1].closed:
                break
            keep_from = i
            if self.event_count - (self.turns[i].start_seq - self.first_seq) <= max_events:
                break
        return keep_from or None

    def evict(self, keep_from: int) -> int:
        """Drop everything before turn `keep_from`; returns the byte offset that was cut."""
        first = self.turns[keep_from]
        cut = first.start_offset
        assert self.first_seq is not None
        dropped = first.start_seq - self.first_seq
        self.turns = self.turns[keep_from:]
        for t in self.turns:
            t.start_offset -= cut
            t.end_offset -= cut
        self.event_count -= dropped
        self.first_seq = first.start_seq
        self.runs = [r for r in self.runs if r.seq >= first.start_seq]  # as a rebuild would
        self.size -= cut
        return cut

    # ----------------------------------------------------------------------------------------
    # the cached files

    def manifest(self) -> SessionManifest:
        return SessionManifest(
            session_id=self.session_id,
            created_at=self.created_at,
            updated_at=self.updated_at,
            turn_count=self.turn_count,
            event_count=self.event_count,
            status=self.status,
            last_seq=self.last_seq if self.event_count else None,
            log_bytes=self.size,
            first_seq=self.first_seq,
            sandbox=None if self.sandbox is None else SandboxRecord(**self.sandbox),
            runs=list(self.runs) or None,
        )

    def index(self) -> TurnIndex:
        return TurnIndex(
            entries=[
                TurnIndexEntry(
                    turn_number=i + 1,
                    start_offset=t.start_offset,
                    end_offset=t.end_offset,
                    event_count=t.event_count,
                    ts=t.ts,
                    start_seq=t.start_seq,
                )
                for i, t in enumerate(self.turns)
            ]
        )

    def manifest_json(self) -> dict[str, Any]:
        """`encode(self.manifest())`, built directly (the drain writes it at every boundary)."""
        out: dict[str, Any] = {
            "session_id": self.session_id,
            "schema_version": SESSION_STORE_SCHEMA_VERSION,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "turn_count": self.turn_count,
            "event_count": self.event_count,
            "status": self.status.value,
        }
        if self.event_count:
            out["last_seq"] = self.last_seq
        out["log_bytes"] = self.size
        if self.first_seq is not None:
            out["first_seq"] = self.first_seq
        if self.sandbox is not None:
            out["sandbox"] = self.sandbox
        if self.runs:
            out["runs"] = [
                {
                    "seq": r.seq,
                    "subtype": r.subtype,
                    "outcome_code": r.outcome_code,
                    "num_turns": r.num_turns,
                }
                for r in self.runs
            ]
        return out

    def index_json(self) -> dict[str, Any]:
        """`encode(self.index())`, built directly (the index grows with every turn)."""
        return {
            "entries": [
                {
                    "turn_number": i,
                    "start_offset": t.start_offset,
                    "end_offset": t.end_offset,
                    "event_count": t.event_count,
                    "ts": t.ts,
                    "start_seq": t.start_seq,
                }
                for i, t in enumerate(self.turns, 1)
            ]
        }

    @classmethod
    def from_cache(cls, manifest: SessionManifest, index: TurnIndex) -> LogState | None:
        """Resume accounting from a manifest + index pair, or None when they do not fit together."""
        entries = index.entries
        open_turns = len(entries) - manifest.turn_count
        if manifest.log_bytes is None or open_turns not in (0, 1):
            return None
        if manifest.event_count and (manifest.last_seq is None or manifest.first_seq is None):
            return None
        turns: list[_Turn] = []
        prev_end = 0
        for i, e in enumerate(entries):
            if (
                e.turn_number != i + 1
                or e.start_seq is None
                or not (prev_end <= e.start_offset < e.end_offset <= manifest.log_bytes)
                or e.event_count < 1
            ):
                return None
            prev_end = e.end_offset
            turns.append(
                _Turn(e.start_offset, e.end_offset, e.event_count, e.ts, e.start_seq, closed=True)
            )
        if open_turns and turns:
            turns[-1].closed = False
        return cls(
            session_id=manifest.session_id,
            created_at=manifest.created_at,
            updated_at=manifest.updated_at,
            status=manifest.status,
            turns=turns,
            event_count=manifest.event_count,
            first_seq=manifest.first_seq,
            last_seq=manifest.last_seq or 0,
            size=manifest.log_bytes,
            runs=list(manifest.runs or ()),
            # kept until a run records its own: opening to append (resume, compact, repair)
            # must not drop what the manifest says about the latest run's sandbox
            sandbox=None if manifest.sandbox is None else encode(manifest.sandbox),
        )
