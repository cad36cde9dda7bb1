"""Context facts that outlive one run of a session: `.vtcode/sessions/<id>/context/state.json`.

Written once at the end of each run (atomic replace), read when the session is resumed, so
that the next outer turn boundary (the resumed run's start) can act on what the last run
learned: a pending soft-threshold compaction, the provider-reported prompt size, the model it
talked to (a different model on resume is a `model_switch` compaction), the turn counter used in
history archive names, and the last envelope (merged into the next one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import orjson

from vtcode.context.models import SessionMemoryEnvelope
from vtcode.fsutil import atomic_write_json, ensure_private_dir, read_regular
from vtcode.jsontypes import U32, U64, DecodeError, decode, encode
from vtcode.redact import Redactor

__all__ = ["CONTEXT_STATE_SCHEMA_VERSION", "ContextState", "load_state", "save_state", "state_path"]

CONTEXT_STATE_SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextState:
    schema_version: U32 = CONTEXT_STATE_SCHEMA_VERSION
    session_id: str
    compaction_pending: bool = False
    prompt_tokens: U64 = 0
    model: str | None = None
    provider: str | None = None
    turns: U64 = 0
    compactions: U64 = 0
    last_history_artifact_path: str | None = None
    envelope: SessionMemoryEnvelope | None = None
    updated_at: str = field(default="")


def state_path(workspace: Path, session_id: str) -> Path:
    from vtcode.store.layout import session_dir

    return session_dir(workspace, session_id) / "context" / "state.json"


def load_state(workspace: Path, session_id: str) -> ContextState | None:
    """The saved state, or None (missing or unreadable: a resumed run simply starts fresh)."""
    try:
        raw = read_regular(state_path(workspace, session_id), limit=4 * 1024 * 1024)
        return decode(ContextState, orjson.loads(raw))
    except (OSError, orjson.JSONDecodeError, DecodeError, RecursionError):
        return None


def save_state(workspace: Path, state: ContextState) -> None:
    path = state_path(workspace, state.session_id)
    ensure_private_dir(path.parent)
    # It holds the envelope (task, summary): no credential in it is kept (`vtcode.redact`).
    atomic_write_json(path, Redactor.from_environ().value(encode(state)), pretty=True)
