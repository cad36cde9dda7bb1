"""`exec resume --fork`: the minimal resume artifact of a session (upstream's
`build_summarized_fork_history`): summary, memory envelope and retained user messages, and
deliberately no continuity tail. The summary is the local deterministic one, so forking is
offline, instant and reproducible.
"""

from __future__ import annotations

from vtcode.clock import rfc3339
from vtcode.config.model import VtcodeConfig
from vtcode.context.compaction import CompactionBudget, compact_history
from vtcode.context.digest import digest_history
from vtcode.context.envelope import build_envelope, render_envelope
from vtcode.context.summary import local_summary
from vtcode.messages import Message

__all__ = ["fork_history"]


def fork_history(history: list[Message], config: VtcodeConfig) -> list[Message]:
    """[summary, envelope, retained user messages] built from `history`."""
    digest = digest_history(history)
    summary = local_summary(digest)
    envelope = build_envelope(digest, session_id="", summary=summary, generated_at=rfc3339())
    result = compact_history(
        history,
        summary=summary,
        envelope_text=render_envelope(envelope, include_summary=False),
        budget=CompactionBudget(
            retained_user_messages=config.context.dynamic.retained_user_messages
        ),
        include_tail=False,
        spool=False,  # the fork has no workspace to spool into; previews say so
    )
    return result.messages
