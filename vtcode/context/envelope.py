"""The session memory envelope (schema v3): built at each boundary, merged, rendered, persisted.

The envelope carries what must survive any number of compactions: the objective, constraints,
touched files, grounded facts, open questions, pending steering intents and the applied-intent
window. Lists are capped at 5 (`MEMORY_LIST_LIMIT`, newest kept), the applied window at 64.
Rendered into the compacted history as a system message under "[Session Memory Envelope]" with
upstream's section order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from vtcode.context.digest import HistoryDigest, describe_result, one_line
from vtcode.context.models import MEMORY_LIST_LIMIT, GroundedFactRecord, SessionMemoryEnvelope
from vtcode.ordered import merge_latest
from vtcode.steering.models import MAX_APPLIED_FOLLOW_UP_INTENT_IDS, QueuedFollowUpIntent

__all__ = [
    "ENVELOPE_HEADER",
    "build_envelope",
    "render_envelope",
]

ENVELOPE_HEADER = "[Session Memory Envelope]"
_ITEM_CHARS = 300


def _facts(d: HistoryDigest) -> list[GroundedFactRecord]:
    out: list[GroundedFactRecord] = []
    for ev in d.recent_tools:
        if ev.result is None:
            continue
        state = "failed" if ev.failed else "ok"
        out.append(
            GroundedFactRecord(
                fact=f"{state}: {describe_result(ev.result, 200) or '(no output)'}", source=ev.name
            )
        )
    return out


def build_envelope(
    digest: HistoryDigest,
    *,
    session_id: str,
    summary: str,
    generated_at: str,
    previous: SessionMemoryEnvelope | None = None,
    pending_intents: Sequence[QueuedFollowUpIntent] = (),
    applied_intent_ids: Sequence[str] = (),
    history_artifact_path: str | None = None,
    task_summary: str | None = None,
) -> SessionMemoryEnvelope:
    """A new envelope from this history, merged over the previous boundary's envelope."""
    lim = MEMORY_LIST_LIMIT
    prev = previous or SessionMemoryEnvelope(summary="", generated_at=generated_at)
    facts_old = [(f.source, f.fact) for f in prev.grounded_facts]
    facts_new = [(f.source, f.fact) for f in _facts(digest)]
    merged_keys = merge_latest(
        [f"{s}\x00{f}" for s, f in facts_old], [f"{s}\x00{f}" for s, f in facts_new], lim
    )
    facts = [
        GroundedFactRecord(source=k.split("\x00", 1)[0], fact=k.split("\x00", 1)[1])
        for k in merged_keys
    ]
    return SessionMemoryEnvelope(
        session_id=session_id,
        summary=summary,
        objective=prev.objective or digest.objective,
        task_summary=task_summary or prev.task_summary,
        spec_summary=prev.spec_summary,
        evaluation_summary=prev.evaluation_summary,
        verification_summary=prev.verification_summary,
        constraints=merge_latest(prev.constraints, digest.constraints, lim),
        grounded_facts=facts,
        touched_files=merge_latest(prev.touched_files, digest.touched_files, lim),
        open_questions=merge_latest(prev.open_questions, digest.open_questions, lim),
        verification_todo=list(prev.verification_todo[-lim:]),
        delegation_notes=list(prev.delegation_notes[-lim:]),
        pending_intents=list(pending_intents),
        applied_intent_ids=merge_latest(
            prev.applied_intent_ids, applied_intent_ids, MAX_APPLIED_FOLLOW_UP_INTENT_IDS
        ),
        history_artifact_path=history_artifact_path,
        generated_at=generated_at,
    )


def with_artifact(env: SessionMemoryEnvelope, path: str | None) -> SessionMemoryEnvelope:
    return dataclasses.replace(env, history_artifact_path=path)


def render_envelope(
    env: SessionMemoryEnvelope, *, include_summary: bool = True, summary_chars: int = 1200
) -> str:
    """The in-context text. Every value is bounded, so the rendering is bounded too.

    Compaction passes `include_summary=False`: the summary message right before the envelope
    already carries the summary, and saying it twice only spends tokens.
    """

    def text(value: str | None, limit: int = _ITEM_CHARS) -> str | None:
        return one_line(value, limit) if value else None

    def items(values: Sequence[str]) -> str | None:
        cut = [f"- {one_line(v, _ITEM_CHARS)}" for v in values[-MEMORY_LIST_LIMIT:] if v.strip()]
        return "\n".join(cut) if cut else None

    sections: list[tuple[str, str | None]] = [
        ("Summary", text(env.summary, summary_chars) if include_summary else None),
        ("Objective", text(env.objective, 600)),
        ("Task Tracker", text(env.task_summary)),
        ("Spec Summary", text(env.spec_summary)),
        ("Evaluation Summary", text(env.evaluation_summary)),
        ("Verification Status", text(env.verification_summary)),
        ("Constraints", items(env.constraints)),
        ("Touched Files", items(env.touched_files)),
        ("Grounded Facts", items([f"[{f.source}] {f.fact}" for f in env.grounded_facts])),
        ("Open Questions", items(env.open_questions)),
        ("Verification Todo", items(env.verification_todo)),
        ("Delegation Notes", items(env.delegation_notes)),
        ("History Artifact", env.history_artifact_path),
    ]
    body = "\n\n".join(f"{title}:\n{value}" for title, value in sections if value)
    return f"{ENVELOPE_HEADER}\n\n{body}" if body else ENVELOPE_HEADER
