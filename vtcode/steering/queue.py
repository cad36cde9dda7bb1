"""Follow-up intents: a durable, bounded, cross-process inbox per session.

`vtcode steer` (another process) enqueues; the running loop drains after each turn. The running
loop holds the session's *writer* lock for its whole life, so the queue has a lock of its own
(`.vtcode/sessions/.locks/steering/<id>.lock`, never deleted, like every lock file), held only
for the read-modify-replace of `queue.json` (atomic replace, so readers never need the lock).

Rules (upstream `steering.rs`): each intent has a UUIDv4; at most 16 pending (the 17th is refused
with a clear error, never dropped); applied ids are kept in a 64-id window; recovery replays only
pending ids absent from that window and from tagged user history (`Message.intent_id`).
Delivery is two-phase: the loop first *delivers* an intent (it becomes a user message in the
transcript), and marks it applied afterwards, so a crash in between replays nothing twice.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from pathlib import Path

import orjson

from vtcode.clock import rfc3339
from vtcode.errors import ExitCode, UsageError, VtcodeError
from vtcode.fsutil import atomic_write_json, ensure_private_dir, read_regular
from vtcode.ids import check_id
from vtcode.jsontypes import DecodeError, decode, encode
from vtcode.ordered import merge_latest
from vtcode.steering.models import (
    MAX_APPLIED_FOLLOW_UP_INTENT_IDS,
    MAX_QUEUED_FOLLOW_UP_INTENTS,
    QueuedFollowUpIntent,
    SteeringQueueState,
)
from vtcode.store.layout import LOCKS_DIR, session_dir, sessions_root
from vtcode.store.locks import session_lock

__all__ = ["MAX_INTENT_BYTES", "SteeringQueue", "SteeringQueueFull", "queue_path"]

MAX_INTENT_BYTES = 64 * 1024
QUEUE_FILE = "queue.json"


class SteeringQueueFull(VtcodeError):
    """16 intents are already pending: retry once the run has applied some (exit 75)."""

    exit_code = ExitCode.LOCK_BUSY


def queue_path(workspace: Path, session_id: str) -> Path:

    return session_dir(workspace, session_id) / "steering" / QUEUE_FILE


def _lock_path(workspace: Path, session_id: str) -> Path:

    return sessions_root(workspace) / LOCKS_DIR / "steering" / f"{check_id(session_id)}.lock"


class SteeringQueue:
    """The inbox of one session. Cheap to create; every method reads the file afresh."""

    def __init__(self, workspace: Path, session_id: str, *, lock_timeout: float = 2.0) -> None:
        self.workspace = Path(workspace)
        self.session_id = check_id(session_id)
        self.path = queue_path(self.workspace, session_id)
        self.lock_timeout = lock_timeout

    # ------------------------------------------------------------------ reading

    def state(self) -> SteeringQueueState:
        """The current state (empty when the file does not exist); never takes the lock."""
        try:
            raw = read_regular(self.path, limit=4 * 1024 * 1024)
        except FileNotFoundError:
            return SteeringQueueState(session_id=self.session_id, updated_at="")
        try:
            return decode(SteeringQueueState, orjson.loads(raw))
        except (orjson.JSONDecodeError, DecodeError, RecursionError) as e:
            raise UsageError(f"unreadable steering queue: {e}", location=str(self.path)) from e

    def pending(self) -> list[QueuedFollowUpIntent]:
        if not self.path.exists():
            return []
        return self.state().pending

    # ------------------------------------------------------------------ writing

    def _locked(self) -> _QueueLock:
        return _QueueLock(_lock_path(self.workspace, self.session_id), self.lock_timeout)

    def _write(self, state: SteeringQueueState) -> None:
        ensure_private_dir(self.path.parent)
        atomic_write_json(self.path, encode(state), pretty=True)

    def enqueue(self, text: str) -> QueuedFollowUpIntent:
        """Add one intent; `SteeringQueueFull` when 16 are pending (nothing is dropped)."""
        if not text.strip():
            raise UsageError("a follow-up needs some text")
        if len(text.encode("utf-8", "surrogatepass")) > MAX_INTENT_BYTES:
            raise UsageError(f"a follow-up is limited to {MAX_INTENT_BYTES} bytes")
        with self._locked():
            st = self.state()
            if len(st.pending) >= MAX_QUEUED_FOLLOW_UP_INTENTS:
                raise SteeringQueueFull(
                    f"follow-up intent queue is full (capacity {MAX_QUEUED_FOLLOW_UP_INTENTS})",
                    location=str(self.path),
                    hint="the run applies pending follow-ups after each turn; try again later",
                )
            intent = QueuedFollowUpIntent(id=str(uuid.uuid4()), text=text)
            self._write(
                SteeringQueueState(
                    session_id=self.session_id,
                    pending=[*st.pending, intent],
                    applied_intent_ids=st.applied_intent_ids,
                    updated_at=rfc3339(),
                )
            )
            return intent

    def mark_applied(self, ids: Iterable[str]) -> None:
        """Move `ids` from pending into the applied window (idempotent)."""
        done = list(dict.fromkeys(ids))
        if not done:
            return
        with self._locked():
            st = self.state()
            gone = set(done)
            self._write(
                SteeringQueueState(
                    session_id=self.session_id,
                    pending=[i for i in st.pending if i.id not in gone],
                    applied_intent_ids=merge_latest(
                        st.applied_intent_ids, done, MAX_APPLIED_FOLLOW_UP_INTENT_IDS
                    ),
                    updated_at=rfc3339(),
                )
            )

    def replayable(self, tagged_history_ids: Iterable[str]) -> list[QueuedFollowUpIntent]:
        """Recovery: pending intents not yet applied and not already in the history.

        Pending ids that are in the applied window or in tagged user history were delivered
        before a crash; they are marked applied now and never replayed.
        """
        if not self.path.exists():
            return []
        st = self.state()
        seen = set(st.applied_intent_ids) | set(tagged_history_ids)
        stale = [i.id for i in st.pending if i.id in seen]
        if stale:
            self.mark_applied(stale)
        return [i for i in st.pending if i.id not in seen]


class _QueueLock:
    """The queue's cross-process lock, held only around one read-modify-replace."""

    def __init__(self, path: Path, timeout: float) -> None:

        ensure_private_dir(path.parent)
        self._lock = session_lock(path)
        self._timeout = timeout

    def __enter__(self) -> None:
        self._lock.acquire(self._timeout, what="steering queue")

    def __exit__(self, *exc: object) -> None:
        self._lock.release()
