"""The catalog of published schemas, generated from the Python definitions.

`schemas/*.schema.json` are this module's output, committed so that users (and third-party
validators) can read them; a test regenerates them and fails on any difference, so the files and
the code cannot drift. Run `python -m vtcode.schemagen` after changing a definition.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vtcode import EVENT_SCHEMA_VERSION
from vtcode.config.model import VtcodeConfig
from vtcode.context.models import (
    HISTORY_ARCHIVE_SCHEMA_VERSION,
    SESSION_MEMORY_ENVELOPE_SCHEMA_VERSION,
    HistoryArchiveMeta,
    SessionMemoryEnvelope,
)
from vtcode.eval.results import EVAL_REPORT_SCHEMA_VERSION, EvalReport
from vtcode.events.types import THREAD_EVENT
from vtcode.hooks.models import HOOK_PAYLOAD, HookOutput
from vtcode.jsontypes_schema import SchemaMode, schema_for
from vtcode.orient.models import HandoffRequest, LoopRunState, ProgressLedger
from vtcode.providers.script import REPLAY_SCRIPT_SCHEMA_VERSION, ReplayScript
from vtcode.steering.models import STEERING_QUEUE_SCHEMA_VERSION, SteeringQueueState
from vtcode.store.models import SESSION_STORE_SCHEMA_VERSION, SessionManifest, TurnIndex
from vtcode.validate.report import REPORT_SCHEMA_VERSION, ValidateReport

BASE = "https://vtcode.dev/schemas"
SEMVER = r"^[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$"


def schema_id(name: str, version: str | int) -> str:
    return f"{BASE}/{name}/{version}.json"


def _events(mode: SchemaMode) -> dict[str, Any]:
    reader = mode is SchemaMode.READER
    name = "thread-event-reader" if reader else "thread-event"
    desc = (
        "A ThreadEvent as upstream readers accept it: unknown event types, unknown catch-all enum "
        "strings and extra fields are tolerated."
        if reader
        else "A ThreadEvent exactly as vtcode writes it (one raw `exec --json` line)."
    )
    return schema_for(
        THREAD_EVENT,
        schema_id=schema_id(name, EVENT_SCHEMA_VERSION),
        title=f"ThreadEvent {EVENT_SCHEMA_VERSION}" + (" (reader)" if reader else ""),
        mode=mode,
        description=desc,
    )


def _envelope(mode: SchemaMode) -> dict[str, Any]:
    reader = mode is SchemaMode.READER
    inner = _events(mode)
    name = "versioned-thread-event-reader" if reader else "versioned-thread-event"
    out: dict[str, Any] = {
        "$schema": inner["$schema"],
        "$id": schema_id(name, EVENT_SCHEMA_VERSION),
        "title": f"VersionedThreadEvent {EVENT_SCHEMA_VERSION}" + (" (reader)" if reader else ""),
        "description": "One canonical events.jsonl line: the event inside a versioned envelope. "
        "`seq` (1-based, gapless) and `ts` (RFC 3339 UTC) are vtcode's additions.",
        "type": "object",
        "properties": {
            "schema_version": (
                {"type": "string", "pattern": SEMVER} if reader else {"const": EVENT_SCHEMA_VERSION}
            ),
            "event": {"$ref": "#/$defs/ThreadEvent"},
            "seq": {"type": "integer", "minimum": 1},
            "ts": {"type": "string", "format": "date-time"},
        },
        "required": ["schema_version", "event"],
        "$defs": inner["$defs"],
    }
    if not reader:
        out["additionalProperties"] = False
    return out


def _simple(
    root: Any, name: str, version: str | int, title: str, *, defaults_optional: bool = False
) -> Callable[[], dict[str, Any]]:
    def build() -> dict[str, Any]:
        return schema_for(
            root,
            schema_id=schema_id(name, version),
            title=title,
            mode=SchemaMode.WRITER,
            defaults_optional=defaults_optional,
        )

    return build


def _manifest() -> dict[str, Any]:
    return _simple(
        SessionManifest, "session-manifest", SESSION_STORE_SCHEMA_VERSION, "Session manifest"
    )()


CATALOG: dict[str, Callable[[], dict[str, Any]]] = {
    "thread-event": lambda: _events(SchemaMode.WRITER),
    "thread-event-reader": lambda: _events(SchemaMode.READER),
    "versioned-thread-event": lambda: _envelope(SchemaMode.WRITER),
    "versioned-thread-event-reader": lambda: _envelope(SchemaMode.READER),
    "session-manifest": _manifest,
    "turn-index": _simple(TurnIndex, "turn-index", SESSION_STORE_SCHEMA_VERSION, "Turn index"),
    "loop-state": _simple(LoopRunState, "loop-state", 1, "Loop run state"),
    "progress-ledger": _simple(ProgressLedger, "progress-ledger", 1, "Progress ledger"),
    "handoff-request": _simple(HandoffRequest, "handoff-request", 1, "Handoff request"),
    "session-memory-envelope": _simple(
        SessionMemoryEnvelope,
        "session-memory-envelope",
        SESSION_MEMORY_ENVELOPE_SCHEMA_VERSION,
        "Session memory envelope",
    ),
    "hook-payload": _simple(HOOK_PAYLOAD, "hook-payload", 1, "Lifecycle hook payload (stdin)"),
    "hook-output": _simple(HookOutput, "hook-output", 1, "Lifecycle hook answer (stdout)"),
    "vtcode-toml": _simple(VtcodeConfig, "vtcode-toml", 1, "vtcode.toml", defaults_optional=True),
    "replay-script": _simple(
        ReplayScript,
        "replay-script",
        REPLAY_SCRIPT_SCHEMA_VERSION,
        "Replay provider script",
        defaults_optional=True,
    ),
    "history-archive-meta": _simple(
        HistoryArchiveMeta,
        "history-archive-meta",
        HISTORY_ARCHIVE_SCHEMA_VERSION,
        "First line of a compaction history archive (.vtcode/history/*.jsonl)",
    ),
    "steering-queue": _simple(
        SteeringQueueState,
        "steering-queue",
        STEERING_QUEUE_SCHEMA_VERSION,
        "Steering follow-up queue (.vtcode/sessions/<id>/steering/queue.json)",
    ),
    "eval-report": _simple(
        EvalReport, "eval-report", EVAL_REPORT_SCHEMA_VERSION, "vtcode eval --json result"
    ),
    "validate-report": _simple(
        ValidateReport, "validate-report", REPORT_SCHEMA_VERSION, "vtcode validate --json report"
    ),
}


def render(name: str) -> str:
    """The exact text of `schemas/<name>.schema.json`."""
    return json.dumps(CATALOG[name](), indent=2, ensure_ascii=False) + "\n"


def write_all(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for name in CATALOG:
        p = directory / f"{name}.schema.json"
        p.write_text(render(name), encoding="utf-8")
        out.append(p)
    return out


if __name__ == "__main__":  # pragma: no cover - developer entry point
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parents[1] / "schemas"
    for p in write_all(target):
        print(p)
