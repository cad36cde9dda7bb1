"""`vtcode compact SESSION_ID`: compact a session's transcript offline (trigger `manual`).

1. Refuse at once (exit 75) when a run holds the session, and with a located error (exit 2) when
   the transcript has unreadable lines: rewriting would silently drop them.
2. Without any lock: build the compacted history with the local deterministic summary; when it
   would not be smaller than the transcript, stop there (`compacted` false, nothing written,
   no hook run). Otherwise write
   the history archive, the envelope and spool files, then run the `pre_compact` hook (hooks
   never run under a lock of ours).
3. Under the session lock (the store's writer): check the transcript did not change meanwhile
   (else exit 75, nothing rewritten), replace `transcript.jsonl` atomically, save the context
   state, append `thread.compact_boundary` through the writer, close (fsync).
4. After the lock: `.vtcode/memories/compaction_summary.md`, the `session_start` hook with
   `source = "compact"`.

The boundary lands between runs, after the last run's `thread.completed`. Its segment ids and
prefix hashes are absent (no request segment exists offline); the catalog hashes are those of
the tool catalog the next run will offer.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from pathlib import Path

import orjson

from vtcode.config.model import VtcodeConfig
from vtcode.context.compactor import (
    CompactionWouldNotShrink,
    boundary_event,
    compaction_budget,
    finish_compaction,
    pre_compact_payload,
    prepare_compaction,
)
from vtcode.context.digest import digest_history
from vtcode.context.segments import catalog_hash
from vtcode.context.state import ContextState, load_state, save_state
from vtcode.context.summary import local_summary
from vtcode.context.thresholds import resolve_thresholds
from vtcode.context.tokens import default_estimator
from vtcode.errors import LockBusyError, NotFoundError, UsageError
from vtcode.fsutil import atomic_write_bytes, read_regular
from vtcode.hooks.config import plan_hooks
from vtcode.hooks.models import SessionStartPayload
from vtcode.hooks.runner import HookRunner
from vtcode.ids import check_id
from vtcode.steering.queue import SteeringQueue
from vtcode.store import read_session_events, session_dir, session_exists
from vtcode.store.closeout import open_for_append
from vtcode.store.layout import lock_path
from vtcode.store.locks import lock_is_held
from vtcode.store.transcript import TRANSCRIPT_NAME, load_transcript, message_to_json
from vtcode.tools.registry import default_registry

__all__ = ["ManualCompaction", "compact_session"]


@dataclasses.dataclass(frozen=True, slots=True)
class ManualCompaction:
    session_id: str
    original_message_count: int
    compacted_message_count: int
    history_artifact_path: str | None
    seq: int | None  # of the appended boundary event in events.jsonl (None: not compacted)
    warnings: list[str]
    # False when compacting would not have shrunk the history: nothing was changed or run
    compacted: bool = True
    reason: str | None = None

    def to_json(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def _digest_bytes(path: Path) -> str:
    try:
        return hashlib.sha256(read_regular(path)).hexdigest()
    except FileNotFoundError:
        return ""


def compact_session(
    workspace: Path,
    session_id: str,
    config: VtcodeConfig,
    *,
    env: Mapping[str, str] | None = None,
) -> ManualCompaction:

    ws = Path(workspace).absolute()
    check_id(session_id)
    if not session_exists(ws, session_id):
        raise NotFoundError(
            f"no session {session_id!r} in {ws / '.vtcode' / 'sessions'}",
            hint="`vtcode sessions list` shows the sessions of this workspace",
        )
    if lock_is_held(lock_path(ws, session_id)):
        raise LockBusyError(
            f"session {session_id} is being written by a running vtcode",
            hint="a running session compacts itself; try again after it ends",
        )
    path = session_dir(ws, session_id) / TRANSCRIPT_NAME
    before = _digest_bytes(path)
    loaded = load_transcript(path)
    if loaded.skipped_lines:
        raise UsageError(
            f"unreadable transcript line(s) {loaded.skipped_lines[:5]}: not compacting, "
            "nothing was changed",
            location=f"{path}:{loaded.skipped_lines[0]}",
        )
    history = loaded.messages
    if not history:
        raise UsageError(f"session {session_id} has no transcript to compact", location=str(path))

    warnings: list[str] = []
    state = load_state(ws, session_id)
    turn = state.turns if state is not None else sum(m.role == "assistant" for m in history)
    thresholds = resolve_thresholds(
        config.agent.harness.auto_compaction_threshold_tokens,
        None,
        config.context.max_context_tokens,
    )
    queue = SteeringQueue(ws, session_id)
    try:
        qstate = queue.state()
        pending, applied = list(qstate.pending), list(qstate.applied_intent_ids)
    except UsageError as e:
        warnings.append(str(e))
        pending, applied = [], []
    digest = digest_history(history)
    try:
        prep = prepare_compaction(
            history,
            workspace=ws,
            session_id=session_id,
            config=config,
            trigger="manual",
            summary=local_summary(digest),
            summary_source="local",
            turn=turn,
            budget=compaction_budget(config, thresholds, None),
            estimator=default_estimator(),
            digest=digest,
            previous_envelope=state.envelope if state is not None else None,
            pending_intents=pending,
            applied_intent_ids=applied,
            shrink_only=True,
        )
    except CompactionWouldNotShrink as e:
        # No hook, archive or transcript change. Opening the session still closes a run that a
        # crash left open, as every open for writing does (nothing is written otherwise).
        with open_for_append(ws, session_id, config.store):
            pass
        return ManualCompaction(
            session_id=session_id,
            original_message_count=e.original_count,
            compacted_message_count=e.original_count,
            history_artifact_path=None,
            seq=None,
            warnings=warnings,
            compacted=False,
            reason=str(e),
        )

    plan = plan_hooks(ws, config, env=env)
    warnings.extend(plan.problems)
    if plan.skipped_untrusted:
        warnings.append(
            f"skipped {plan.skipped_untrusted} workspace hook(s): the workspace is not trusted"
        )
    hooks = (
        None
        if plan.empty
        else HookRunner(
            plan, workspace=ws, session_id=session_id, transcript_path=str(path), parent_env=env
        )
    )
    if hooks is not None:
        payload = pre_compact_payload(
            prep, session_id=session_id, workspace=ws, transcript_path=str(path)
        )
        warnings.extend(
            f for r in hooks.run("pre_compact", payload, subject="manual") if (f := r.failure())
        )

    thread_id = session_id
    for env_line in read_session_events(ws, session_id):
        thread_id = getattr(env_line.event, "thread_id", None) or session_id
        break

    registry = default_registry(config)
    try:
        catalog = catalog_hash(registry.specs(config.automation.full_auto.allowed_tools))
    finally:
        registry.close()
    event = dataclasses.replace(
        boundary_event(prep, thread_id=thread_id),
        previous_catalog_hash=catalog,
        new_catalog_hash=catalog,
    )

    with open_for_append(ws, session_id, config.store) as writer:
        if _digest_bytes(path) != before:
            raise LockBusyError(
                f"session {session_id} changed while it was being compacted; nothing rewritten",
                hint="try again",
            )
        body = b"".join(orjson.dumps(message_to_json(m)) + b"\n" for m in prep.history)
        atomic_write_bytes(path, body)
        previous = state or ContextState(session_id=session_id)
        save_state(
            ws,
            dataclasses.replace(
                previous,
                compaction_pending=False,
                prompt_tokens=0,
                turns=turn,
                compactions=previous.compactions + 1,
                last_history_artifact_path=prep.artifact_path,
                envelope=prep.envelope,
                updated_at=prep.envelope.generated_at,
            ),
        )
        seq = writer.submit(event)

    finish_compaction(prep, workspace=ws, session_id=session_id)
    if hooks is not None:
        payload2 = SessionStartPayload(
            session_id=session_id, cwd=str(ws), transcript_path=str(path), source="compact"
        )
        warnings.extend(
            f for r in hooks.run("session_start", payload2, subject="compact") if (f := r.failure())
        )
    return ManualCompaction(
        session_id=session_id,
        original_message_count=prep.result.original_count,
        compacted_message_count=prep.result.compacted_count,
        history_artifact_path=prep.artifact_path,
        seq=seq,
        warnings=warnings,
    )
