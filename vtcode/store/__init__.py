"""The canonical session store: dispatch gate, drain, events.jsonl, manifest, turn index,
recovery, retention and exports. `vtcode/store/layout.py` describes the files on disk.

The names below resolve lazily (PEP 562), as `vtcode`'s own do: importing any store module
runs this file first, and importing the gate and the writer here eagerly cost `vtcode sessions
list` about 0.1 s of its start-up (`python -X importtime -c "import vtcode.store.listing"`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vtcode.store.gate import DispatchGate, Exporter
    from vtcode.store.layout import session_dir, session_exists, sessions_root
    from vtcode.store.listing import (
        DisplayStatus,
        SessionSummary,
        latest_session_id,
        list_sessions,
    )
    from vtcode.store.reader import read_session_events
    from vtcode.store.recovery import Recovery
    from vtcode.store.retention import RetentionReport, apply_retention
    from vtcode.store.writer import SessionWriter

# public name -> the module that defines it (one definition each; this is only the address book)
_LAZY: dict[str, str] = {
    "DispatchGate": "vtcode.store.gate",
    "Exporter": "vtcode.store.gate",
    "session_dir": "vtcode.store.layout",
    "sessions_root": "vtcode.store.layout",
    "session_exists": "vtcode.store.layout",
    "DisplayStatus": "vtcode.store.listing",
    "SessionSummary": "vtcode.store.listing",
    "latest_session_id": "vtcode.store.listing",
    "list_sessions": "vtcode.store.listing",
    "read_session_events": "vtcode.store.reader",
    "Recovery": "vtcode.store.recovery",
    "RetentionReport": "vtcode.store.retention",
    "apply_retention": "vtcode.store.retention",
    "SessionWriter": "vtcode.store.writer",
}

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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # resolved once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
