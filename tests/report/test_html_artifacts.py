"""The session artifacts the page reads: write-time diffs and run records (vtcode/store/artifacts).

The diffs come from the real file tools writing real files inside a real session folder; the
expected diffs are written out by hand (git's unified format), not taken from difflib's output.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vtcode.store.artifacts import (
    ARTIFACTS_DIR,
    DIFFS,
    read_diffs,
    read_runs,
    record_run,
    unified_diff,
)
from vtcode.tools.base import ToolContext
from vtcode.tools.file_edits import ApplyPatchTool, WriteFileTool


def _ctx(ws: Path, sid: str = "s") -> ToolContext:
    return ToolContext(workspace=ws, session_id=sid, spool_dir=ws / ".vtcode" / "spool")


def _session(ws: Path, sid: str = "s") -> Path:
    folder = ws / ".vtcode" / "sessions" / sid
    folder.mkdir(parents=True)
    return folder


def test_write_file_records_add_then_update_diffs(tmp_path: Path) -> None:
    _session(tmp_path)
    tool = WriteFileTool()
    tool.run({"path": "a.txt", "content": "one\ntwo\n"}, _ctx(tmp_path))
    tool.run({"path": "a.txt", "content": "one\nTWO\nthree"}, _ctx(tmp_path))
    first, second = read_diffs(tmp_path, "s")
    assert (first.path, first.kind, first.note) == ("a.txt", "add", None)
    assert first.diff == "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"
    assert (second.kind, second.note) == ("update", None)
    assert second.diff == (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,3 @@\n one\n-two\n+TWO\n+three\n"
        "\\ No newline at end of file\n"
    )


def test_apply_patch_records_every_file_it_touched(tmp_path: Path) -> None:
    _session(tmp_path)
    (tmp_path / "keep.txt").write_text("x\ny\n")
    (tmp_path / "gone.txt").write_text("bye\n")
    patch = (
        "*** Begin Patch\n*** Update File: keep.txt\n x\n-y\n+z\n*** Delete File: gone.txt\n"
        "*** Add File: new.txt\n+hello\n*** End Patch\n"
    )
    ApplyPatchTool().run({"input": patch}, _ctx(tmp_path))
    by_path = {d.path: d for d in read_diffs(tmp_path, "s")}
    keep = "--- a/keep.txt\n+++ b/keep.txt\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n"
    assert by_path["keep.txt"].diff == keep
    assert by_path["gone.txt"].kind == "delete"
    assert by_path["gone.txt"].diff == "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n"
    assert by_path["new.txt"].diff == "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n"


def test_nothing_is_recorded_without_a_session_folder(tmp_path: Path) -> None:
    WriteFileTool().run({"path": "a.txt", "content": "x"}, _ctx(tmp_path))
    assert (tmp_path / "a.txt").read_text() == "x"
    assert not (tmp_path / ".vtcode").exists()  # the tool did not create any state
    assert read_diffs(tmp_path, "s") == []


def test_unreadable_or_huge_content_gets_a_note_not_a_diff(tmp_path: Path) -> None:
    _session(tmp_path)
    (tmp_path / "bin.dat").write_bytes(b"\x00\x01binary")
    WriteFileTool().run({"path": "bin.dat", "content": "text now"}, _ctx(tmp_path))
    (record,) = read_diffs(tmp_path, "s")
    assert record.diff is None and record.note is not None
    assert "binary" in record.note
    diff, note = unified_diff("big", None, b"x" * (2 * 1024 * 1024))
    assert diff is None and note == "too large for a diff (2,097,152 bytes)"
    assert unified_diff("latin", b"\xe9", b"e") == (None, "not UTF-8 text")


def test_torn_and_hostile_lines_are_skipped(tmp_path: Path) -> None:
    folder = _session(tmp_path)
    record_run(tmp_path, "s", first_seq=1, prompt="go", provider="replay", model="m")
    art = folder / ARTIFACTS_DIR
    with (art / "runs.jsonl").open("a") as f:
        f.write('[1, 2]\n{"first_seq": true, "ts": "x"}\n')
        f.write('{"first_seq": 9, "ts": "t", "prompt": 5}\n')
        f.write('{"first_seq": 15, "ts": "2026')  # a torn last line
    runs = read_runs(tmp_path, "s")
    assert [(r.first_seq, r.prompt, r.model) for r in runs] == [(1, "go", "m"), (9, None, None)]
    (art / DIFFS).write_text('{"ts": "t", "path": "p"}\nnot json\n')
    assert read_diffs(tmp_path, "s") == []


def test_a_huge_prompt_is_clipped(tmp_path: Path) -> None:
    _session(tmp_path)
    record_run(tmp_path, "s", first_seq=1, prompt="p" * 70_000, provider=None, model=None)
    (run,) = read_runs(tmp_path, "s")
    assert run.prompt is not None and run.prompt.endswith("(4,464 more characters)")


def test_secrets_never_reach_the_artifacts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from vtcode.redact import MARKER

    key = "sk-test-" + "k3y" * 12
    monkeypatch.setenv("OPENAI_API_KEY", key)
    _session(tmp_path)
    WriteFileTool().run({"path": "cfg.txt", "content": f"token={key}\n"}, _ctx(tmp_path))
    record_run(tmp_path, "s", first_seq=1, prompt=f"use {key}", provider="replay", model="m")
    folder = tmp_path / ".vtcode" / "sessions" / "s" / ARTIFACTS_DIR
    for name in ("runs.jsonl", DIFFS):
        assert key not in (folder / name).read_text()
    (diff,) = read_diffs(tmp_path, "s")
    assert diff.diff is not None and f"+token={MARKER}" in diff.diff
    assert read_runs(tmp_path, "s")[0].prompt == f"use {MARKER}"
