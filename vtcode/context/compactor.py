"""One compaction, start to finish, shared by the loop (auto, recovery) and `vtcode compact`.

The order is the contract's, with the artifact written *before* the hook so `pre_compact`
receives a path that exists: build the compacted history -> write the history archive and the
envelope (and spool files) -> `pre_compact` hook -> swap the history -> emit
`thread.compact_boundary` -> `session_start` hook with `source = "compact"`. The caller owns the
swap and the emission (the loop through its recorder, `vtcode compact` through the store's
writer), this module everything else.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from vtcode.clock import rfc3339
from vtcode.config.model import VtcodeConfig
from vtcode.context.archive import (
    ArchivePaths,
    plan_archive,
    write_archive,
    write_compaction_summary,
    write_spools,
)
from vtcode.context.compaction import (
    CompactedHistory,
    CompactionBudget,
    compact_history,
    history_budget,
)
from vtcode.context.digest import HistoryDigest, digest_history
from vtcode.context.envelope import build_envelope, render_envelope
from vtcode.context.models import HistoryArchiveMeta, SessionMemoryEnvelope
from vtcode.context.segments import SegmentTransition
from vtcode.context.thresholds import Thresholds
from vtcode.context.tokens import TokenEstimator
from vtcode.events.enums import CompactionMode, CompactionTrigger
from vtcode.events.types import ThreadCompactBoundaryEvent
from vtcode.hooks.models import PreCompactPayload
from vtcode.messages import Message
from vtcode.steering.models import QueuedFollowUpIntent

__all__ = [
    "CompactionWouldNotShrink",
    "PreparedCompaction",
    "boundary_event",
    "compaction_budget",
    "finish_compaction",
    "pre_compact_payload",
    "prepare_compaction",
    "would_not_shrink",
]

# vtcode builds every compacted history itself, so upstream's `mode` (who compacted) is always
# `local`; whether the provider wrote the summary text is `summary_source` in the archive.
MODE = CompactionMode.LOCAL
MIN_COMPACTED_TOKENS = 1024


def compaction_budget(
    config: VtcodeConfig, thresholds: Thresholds, capacity: int | None, fixed_tokens: int = 0
) -> CompactionBudget:
    """Caps for the compacted history: upstream's history budget (ctx - ctx/8 - 512) and half
    of what the soft threshold leaves after the system prompt and tools (`fixed_tokens`), so a
    compacted history has room to grow before the next compaction."""
    retained = config.context.dynamic.retained_user_messages
    target = CompactionBudget(retained_user_messages=retained).total()
    if capacity:
        target = min(target, history_budget(capacity) - fixed_tokens)
    if thresholds.soft is not None:
        target = min(target, (thresholds.soft - fixed_tokens) // 2)
    return CompactionBudget.within(
        max(target, MIN_COMPACTED_TOKENS),
        retained_user_messages=retained,
        preserve_recent=config.context.preserve_recent_turns,
    )


class CompactionWouldNotShrink(Exception):
    """The compacted history would not be smaller than the history: nothing was written.

    A short history is mostly the verbatim tail already; adding the summary and the memory
    envelope to it makes it longer (13 messages became 15), which costs tokens, archives a copy
    and records a boundary for nothing. Smaller means fewer estimated tokens, the measure every
    threshold uses (a history can shrink in tokens while gaining a message, when a large tool
    output is replaced by a spooled preview)."""

    def __init__(self, original: tuple[int, int], compacted: tuple[int, int]) -> None:
        self.original_count, self.original_tokens = original
        self.compacted_count, self.compacted_tokens = compacted
        super().__init__(
            f"nothing to compact: the compacted history would be {self.compacted_count} "
            f"messages (about {self.compacted_tokens} tokens) for {self.original_count} "
            f"(about {self.original_tokens} tokens); the history is left as it is"
        )


def would_not_shrink(
    history: list[Message], *, summary: str, budget: CompactionBudget, estimator: TokenEstimator
) -> CompactionWouldNotShrink | None:
    """A dry run (no I/O) with `summary` and no envelope: when even this lighter result is not
    smaller, the real one (which adds the envelope) is not either. Lets `/compact` skip asking
    the provider for a summary that would be thrown away."""
    result = compact_history(
        history, summary=summary, envelope_text="", budget=budget, estimator=estimator, spool=False
    )
    before = estimator.messages(history)
    if result.total_tokens < before:
        return None
    return CompactionWouldNotShrink(
        (result.original_count, before), (result.compacted_count, result.total_tokens)
    )


@dataclasses.dataclass(frozen=True, slots=True)
class PreparedCompaction:
    trigger: str
    summary: str
    summary_source: str  # "provider" | "local"
    result: CompactedHistory
    envelope: SessionMemoryEnvelope
    archive: ArchivePaths | None

    @property
    def history(self) -> list[Message]:
        return self.result.messages

    @property
    def artifact_path(self) -> str | None:
        return None if self.archive is None else self.archive.relative


def prepare_compaction(
    history: list[Message],
    *,
    workspace: Path,
    session_id: str,
    config: VtcodeConfig,
    trigger: str,
    summary: str,
    summary_source: str,
    turn: int,
    budget: CompactionBudget,
    estimator: TokenEstimator,
    digest: HistoryDigest | None = None,
    previous_envelope: SessionMemoryEnvelope | None = None,
    pending_intents: Sequence[QueuedFollowUpIntent] = (),
    applied_intent_ids: Sequence[str] = (),
    shrink_only: bool = False,
) -> PreparedCompaction:
    """Build the compacted history and write its archive, envelope and spool files.

    `shrink_only` (a compaction someone asked for: `vtcode compact`, `/compact`): raise
    `CompactionWouldNotShrink`, before writing anything, when the result would not have fewer
    estimated tokens than `history`. The automatic triggers run because a threshold, a context
    overflow or a model switch says so, and keep their own rules.
    """
    d = digest if digest is not None else digest_history(history)
    dyn = config.context.dynamic
    archive = (
        plan_archive(workspace, session_id, turn) if dyn.enabled and dyn.persist_history else None
    )
    envelope = build_envelope(
        d,
        session_id=session_id,
        summary=summary,
        generated_at=rfc3339(),
        previous=previous_envelope,
        pending_intents=pending_intents,
        applied_intent_ids=applied_intent_ids,
        history_artifact_path=None if archive is None else archive.relative,
    )
    result = compact_history(
        history,
        summary=summary,
        envelope_text=render_envelope(envelope, include_summary=False),
        budget=budget,
        estimator=estimator,
    )
    before = estimator.messages(history) if shrink_only else None
    if before is not None and result.total_tokens >= before:
        raise CompactionWouldNotShrink(
            (result.original_count, before), (result.compacted_count, result.total_tokens)
        )
    write_spools(workspace, result.spools)
    if archive is not None:
        meta = HistoryArchiveMeta(
            session_id=session_id,
            turn=turn,
            created_at=envelope.generated_at,
            trigger=trigger,
            mode=MODE.value,
            summary_source=summary_source,
            original_message_count=result.original_count,
            compacted_message_count=result.compacted_count,
        )
        write_archive(archive, meta, history, envelope)
    return PreparedCompaction(trigger, summary, summary_source, result, envelope, archive)


def pre_compact_payload(
    prep: PreparedCompaction, *, session_id: str, workspace: Path, transcript_path: str | None
) -> PreCompactPayload:
    """The exact `pre_compact` payload of the contract (with the real artifact path)."""
    return PreCompactPayload(
        session_id=session_id,
        cwd=str(workspace),
        transcript_path=transcript_path,
        trigger=prep.trigger,
        mode=MODE.value,
        original_message_count=prep.result.original_count,
        compacted_message_count=prep.result.compacted_count,
        history_artifact_path=prep.artifact_path,
    )


def finish_compaction(prep: PreparedCompaction, *, workspace: Path, session_id: str) -> None:
    """After the swap: the summary the next session's orientation shows."""
    write_compaction_summary(
        workspace,
        prep.summary,
        session_id=session_id,
        trigger=prep.trigger,
        history_artifact_path=prep.artifact_path,
    )


def boundary_event(
    prep: PreparedCompaction, *, thread_id: str, transition: SegmentTransition | None = None
) -> ThreadCompactBoundaryEvent:
    """`thread.compact_boundary` for this compaction (segment fields from `transition`)."""
    t = transition
    prev = t.previous if t is not None else None
    new = t.new if t is not None else None
    return ThreadCompactBoundaryEvent(
        thread_id=thread_id,
        trigger=CompactionTrigger(prep.trigger),
        mode=MODE,
        original_message_count=prep.result.original_count,
        compacted_message_count=prep.result.compacted_count,
        history_artifact_path=prep.artifact_path,
        previous_segment_id=prev.id if prev else None,
        new_segment_id=new.id if new else None,
        previous_prefix_hash=prev.prefix_hash if prev else None,
        new_prefix_hash=new.prefix_hash if new else None,
        previous_catalog_hash=prev.catalog_hash if prev else None,
        new_catalog_hash=new.catalog_hash if new else None,
    )
