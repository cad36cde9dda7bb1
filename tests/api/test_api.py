"""The public Python API (`import vtcode`): its names are locked, it resolves lazily, and a run
started from Python is the same run the CLI makes (same session files, same events, valid)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import vtcode
from tests.exec_support import SCRIPTS
from vtcode.events.types import ThreadCompletedEvent, ThreadStartedEvent

REPO = Path(__file__).resolve().parents[2]

# Changing this list is an API change: docs/api.md and the changelog say so, not only this test.
PUBLIC = [
    "ConfigInvalid",
    "EVENT_SCHEMA_VERSION",
    "ItemDetails",
    "RunSummary",
    "SessionSummary",
    "ThreadEvent",
    "ThreadItem",
    "Usage",
    "ValidateReport",
    "VtcodeConfig",
    "VtcodeError",
    "__version__",
    "decode_event",
    "encode_event",
    "list_sessions",
    "load_config",
    "read_session",
    "run",
    "validate_log",
]


def test_public_names_are_locked_and_resolve() -> None:
    assert sorted(vtcode.__all__) == sorted(PUBLIC)
    for name in PUBLIC:
        assert getattr(vtcode, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = vtcode.nope  # type: ignore[attr-defined]


def test_docs_api_names_every_public_name() -> None:
    page = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    missing = [n for n in PUBLIC if f"`{n}" not in page]
    assert missing == []


def test_import_vtcode_stays_cheap() -> None:
    """Every CLI command imports the package first: the API's heavy modules load on use only."""
    code = "import sys, vtcode; print(sorted(m for m in sys.modules if m.startswith('vtcode')))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['vtcode']"


def test_run_from_python_is_a_real_session(tmp_path: Path) -> None:
    seen: list[vtcode.ThreadEvent] = []
    summary = vtcode.run(
        "say hello",
        workspace=tmp_path,
        script=str(SCRIPTS / "scenario-success.toml"),
        on_event=seen.append,
    )
    assert (summary.exit_code, summary.subtype, summary.outcome_code) == (0, "success", "success")
    assert summary.ok and summary.error is None and summary.num_turns >= 1
    # the callback saw exactly what the session log holds, in order
    stored = list(vtcode.read_session(tmp_path, summary.session_id))
    assert [vtcode.encode_event(e) for e in seen] == [vtcode.encode_event(e) for e in stored]
    assert isinstance(stored[0], ThreadStartedEvent)
    assert isinstance(stored[-1], ThreadCompletedEvent)
    assert stored[-1].result == summary.result
    events = tmp_path / ".vtcode" / "sessions" / summary.session_id / "events.jsonl"
    report = vtcode.validate_log(events, strict=True)
    assert report.valid and report.exit_code == 0
    assert [s.session_id for s in vtcode.list_sessions(tmp_path)] == [summary.session_id]


def test_run_that_cannot_start_raises_and_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(vtcode.VtcodeError, match=r"missing\.toml"):
        vtcode.run("hi", workspace=tmp_path, script=str(tmp_path / "missing.toml"))
    assert vtcode.list_sessions(tmp_path) == []


def test_load_config_reports_located_problems(tmp_path: Path) -> None:
    (tmp_path / "vtcode.toml").write_text("[agent]\nmax_turns = 'many'\n", encoding="utf-8")
    with pytest.raises(vtcode.ConfigInvalid) as info:
        vtcode.load_config(tmp_path)
    assert "vtcode.toml" in str(info.value) and "max_turns" in str(info.value)


def test_run_sends_images_as_exec_i_does(tmp_path: Path) -> None:
    (tmp_path / "dot.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 16)
    script = tmp_path / "s.toml"
    turn = '[[turn]]\ntext = "A dot."\nstop_reason = "end_turn"\n'
    script.write_text(turn)
    with pytest.raises(vtcode.VtcodeError, match="takes no images"):
        vtcode.run("look", workspace=tmp_path, script=str(script), images=["dot.png"])
    assert vtcode.list_sessions(tmp_path) == []
    with pytest.raises(vtcode.VtcodeError, match=r"images \S*nope\.png: no such file"):
        vtcode.run("look", workspace=tmp_path, script=str(script), images=["nope.png"])
    script.write_text("[provider]\nimages = true\n\n" + turn)
    summary = vtcode.run("look", workspace=tmp_path, script=str(script), images=["dot.png"])
    assert summary.ok, summary
    session = tmp_path / ".vtcode" / "sessions" / summary.session_id
    assert [p.suffix for p in (session / "images").iterdir()] == [".png"]
    assert '"media_type":"image/png"' in (session / "transcript.jsonl").read_text()
