"""The canonical session store: dispatch gate, drain, events.jsonl, manifest, turn index,
recovery, retention and exports. `vtcode/store/layout.py` describes the files on disk.
"""

from vtcode.store.gate import DispatchGate, Exporter
from vtcode.store.layout import session_dir, sessions_root
from vtcode.store.reader import (
    DisplayStatus,
    SessionSummary,
    latest_session_id,
    list_sessions,
    read_session_events,
    session_exists,
)
from vtcode.store.recovery import Recovery
from vtcode.store.retention import RetentionReport, apply_retention
from vtcode.store.writer import SessionWriter

__all__ = [
    "DispatchGate",
    "DisplayStatus",
    "Exporter",
    "Recovery",
    "RetentionReport",
    "SessionSummary",
    "SessionWriter",
    "apply_retention",
    "latest_session_id",
    "list_sessions",
    "read_session_events",
    "session_dir",
    "session_exists",
    "sessions_root",
]
