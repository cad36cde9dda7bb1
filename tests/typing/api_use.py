"""A script against the public API, type-checked under `mypy --strict` (pyproject's mypy `files`).

Not collected by pytest (no test_ prefix): it exists so that a change to a public signature
that would break users' typed scripts fails `mypy` in `bash scripts/test`.
"""

from __future__ import annotations

from pathlib import Path

import vtcode


def summarize(workspace: Path, script: str) -> tuple[int, list[str]]:
    seen: list[str] = []

    def on_event(event: vtcode.ThreadEvent) -> None:
        seen.append(type(event).__name__)

    config: vtcode.VtcodeConfig = vtcode.load_config(workspace)
    summary: vtcode.RunSummary = vtcode.run(
        "say hello", workspace=workspace, config=config, script=script, on_event=on_event
    )
    report: vtcode.ValidateReport = vtcode.validate_log(
        workspace / ".vtcode" / "sessions" / summary.session_id / "events.jsonl", strict=True
    )
    sessions: list[vtcode.SessionSummary] = vtcode.list_sessions(workspace)
    events = list(vtcode.read_session(workspace, summary.session_id))
    for event in events:
        obj: dict[str, object] = vtcode.encode_event(event)
        again = vtcode.decode_event(obj)
        assert type(again) is type(event)
    assert all(s.session_id for s in sessions)
    ok: bool = summary.ok and report.valid
    return (0 if ok else 1), seen
