"""A compaction someone asks for (`vtcode compact`, `/compact`) runs only when it shrinks.

A short history is mostly the verbatim tail already; the summary and memory envelope on top made
it longer (`vtcode compact` turned 13 messages into 15). Now nothing is written, no hook runs,
no boundary is recorded, and the user is told why (exit 0: nothing to do is not a failure).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.exec_support import SCRIPTS, SESSION, vtcode
from vtcode.config.model import VtcodeConfig
from vtcode.events.types import ErrorItem, ItemCompletedEvent, ThreadEvent
from vtcode.loop.recorder import Recorder
from vtcode.messages import Message
from vtcode.providers.replay import ReplayProvider
from vtcode.providers.script import parse_script
from vtcode.runtime.hooks import context_parts
from vtcode.store.transcript import load_transcript

HOOK = "import sys; open('hook-ran', 'w').write(sys.stdin.read())"
TRUST = {"VTCODE_TRUST_WORKSPACE": "1"}


def _session(ws: Path, prompt: str) -> None:
    argv = json.dumps([sys.executable, "-c", HOOK])
    (ws / "vtcode.toml").write_text(
        f"[[hooks.lifecycle.pre_compact]]\nhooks = [{{ argv = {argv} }}]\n"
    )
    script = str(SCRIPTS / "scenario-tool-loop.toml")
    proc = vtcode(
        ["exec", "-q", "--session-id", SESSION, "--script", script, prompt], ws, env=TRUST
    )
    assert proc.returncode == 0, proc.stderr


def _files(ws: Path) -> dict[str, bytes]:
    folder = ws / ".vtcode" / "sessions" / SESSION
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def test_compacting_a_short_history_changes_nothing_and_says_so(tmp_path: Path) -> None:
    _session(tmp_path, "go")
    before = _files(tmp_path)
    proc = vtcode(["compact", SESSION], tmp_path, env=TRUST)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert f"{SESSION}: nothing to compact: the compacted history would be" in proc.stderr
    assert "the history is left as it is" in proc.stderr
    assert _files(tmp_path) == before  # transcript, events.jsonl and manifest byte-identical
    assert not (tmp_path / ".vtcode" / "history").exists()  # no archive
    assert not (tmp_path / "hook-ran").exists()  # pre_compact did not run
    report = json.loads(vtcode(["compact", "--json", SESSION], tmp_path, env=TRUST).stdout)
    assert report["compacted"] is False and report["seq"] is None
    assert report["compacted_message_count"] == report["original_message_count"] == 8
    assert report["reason"].startswith("nothing to compact: the compacted history would be 10")


def test_compacting_a_long_history_still_compacts(tmp_path: Path) -> None:
    _session(tmp_path, "go " + "with a long description " * 2000)
    proc = vtcode(["compact", "--json", SESSION], tmp_path, env=TRUST)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["compacted"] is True and report["reason"] is None
    assert (tmp_path / "hook-ran").exists()
    transcript = tmp_path / ".vtcode" / "sessions" / SESSION / "transcript.jsonl"
    assert len(load_transcript(transcript).messages) == report["compacted_message_count"]
    last = json.loads(
        (tmp_path / ".vtcode/sessions" / SESSION / "events.jsonl").read_text().splitlines()[-1]
    )
    assert last["event"]["type"] == "thread.compact_boundary" and last["seq"] == report["seq"]


def test_slash_compact_on_a_short_history_keeps_it_and_warns(tmp_path: Path) -> None:
    """`/compact` in chat reaches the context part with trigger `manual`."""
    (tmp_path / ".vtcode" / "sessions" / "s").mkdir(parents=True)
    part = context_parts(
        workspace=tmp_path,
        session_id="s",
        config=VtcodeConfig(),
        provider=ReplayProvider(parse_script("[[turn]]\ntext = 'unused'\n")),
        env={"VTCODE_HOME": str(tmp_path / ".home"), "PATH": "/usr/bin:/bin"},
    ).context
    events: list[ThreadEvent] = []
    history = [Message(role="user", content="hi"), Message(role="assistant", content="hello")]
    kept = part.compact(list(history), trigger="manual", recorder=Recorder(events.append))
    assert kept == history
    [warning] = events  # one warning item, no boundary
    assert isinstance(warning, ItemCompletedEvent) and isinstance(warning.item.details, ErrorItem)
    assert warning.item.details.message.startswith("nothing to compact: ")
    assert not (tmp_path / ".vtcode" / "history").exists()
