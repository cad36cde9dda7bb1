"""File tools and path confinement: attacks are refused, answers are bounded, patches atomic.

Races, escapes and non-regular files for every tool are in test_tools_beneath.py.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.exec_support import SESSION, canonical_snapshot, normalise, raw_events, vtcode
from tests.hang_check import run_python
from vtcode.events.enums import FileChangeKind
from vtcode.tools import files
from vtcode.tools.base import FileChange, ToolContext, ToolError
from vtcode.tools.file_edits import ApplyPatchTool
from vtcode.tools.paths import relative, resolve_path
from vtcode.tools.registry import ToolRegistry


def run(reg: ToolRegistry, ctx: ToolContext, name: str, **args: object) -> str:
    return reg.run(name, args, ctx).output


@pytest.fixture
def ws(tool_ctx: ToolContext) -> Path:
    root = tool_ctx.workspace
    (root / "src").mkdir()
    (root / "src/app.py").write_text("def main():\n    return 1\n")
    (root / "README.md").write_text("hello\n")
    (root / ".git").mkdir()
    (root / ".git/config").write_text("[core]\n")
    (root / ".vtcode").mkdir()
    (root / ".vtcode/state.json").write_text("{}")
    return root


# -- confinement ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "write", "message"),
    [
        ("../outside.txt", False, "outside the workspace"),
        ("src/../../outside.txt", True, "outside the workspace"),
        ("/etc/passwd", False, "outside the workspace"),
        ("~/x", False, "outside the workspace"),
        ("link-out/secret", False, "through a symlink"),
        ("link-out", True, "through a symlink"),
        (".vtcode/state.json", True, "inside .vtcode/"),
        ("./.vtcode/new", True, "inside .vtcode/"),
        (".git/config", True, "inside a .git/ folder"),
        ("src/.git/hooks/pre-commit", True, "inside a .git/ folder"),
        ("link-vt/x", True, "inside .vtcode/"),
        ("a\x00b", False, "NUL byte"),
        ("", False, "non-empty"),
    ],
)
def test_confinement_refuses(ws: Path, tmp_path: Path, raw: str, write: bool, message: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret").write_text("s")
    (ws / "link-out").symlink_to(outside)
    (ws / "link-vt").symlink_to(ws / ".vtcode")
    with pytest.raises(ToolError, match=message):
        resolve_path(ws, raw, write=write)


def test_confinement_allows_inside_paths(ws: Path) -> None:
    (ws / "link-in").symlink_to(ws / "src")
    assert resolve_path(ws, "link-in/app.py") == (ws / "src/app.py").resolve()
    assert resolve_path(ws, str(ws / "README.md"), write=True) == (ws / "README.md").resolve()
    assert resolve_path(ws, ".vtcode/state.json") == (ws / ".vtcode/state.json").resolve()
    assert relative(ws, resolve_path(ws, "new/dir/file.txt", write=True)) == "new/dir/file.txt"
    assert relative(ws, resolve_path(ws, ".")) == "."


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("read_file", {"path": "../x"}),
        ("write_file", {"path": ".vtcode/x", "content": "x"}),
        ("write_file", {"path": "/tmp/vtcode-escape.txt", "content": "x"}),
        ("list_files", {"path": ".."}),
        ("grep", {"pattern": "x", "path": "/"}),
        ("apply_patch", {"input": "*** Begin Patch\n*** Add File: ../x\n+x\n*** End Patch"}),
        ("apply_patch", {"input": "*** Begin Patch\n*** Delete File: .git/config\n*** End Patch"}),
    ],
)
def test_every_file_tool_is_confined(
    tool_registry: ToolRegistry, tool_ctx: ToolContext, ws: Path, tool: str, args: dict[str, str]
) -> None:
    with pytest.raises(ToolError):
        tool_registry.run(tool, args, tool_ctx)
    assert (ws / ".git/config").read_text() == "[core]\n"
    assert not Path("/tmp/vtcode-escape.txt").exists()


# -- read / list / grep --------------------------------------------------------------------


def test_read_file_pages_by_lines(tool_registry: ToolRegistry, tool_ctx: ToolContext) -> None:
    (tool_ctx.workspace / "n.txt").write_text("".join(f"l{i}\n" for i in range(1, 11)))
    res = tool_registry.run("read_file", {"path": "n.txt", "offset": 3, "limit": 2}, tool_ctx)
    assert res.output.startswith("l3\nl4\n[showing lines 3-4 of 10; ")
    assert "offset=5" in res.output
    assert res.data == {
        "path": "n.txt",
        "start_line": 3,
        "end_line": 4,
        "total_lines": 10,
        "truncated": True,
    }
    whole = tool_registry.run("read_file", {"path": "n.txt"}, tool_ctx)
    assert whole.output == "\n".join(f"l{i}" for i in range(1, 11))
    assert whole.data is not None and whole.data["truncated"] is False


def test_read_file_refuses_binary_missing_and_folders(
    tool_registry: ToolRegistry, tool_ctx: ToolContext
) -> None:
    (tool_ctx.workspace / "bin").write_bytes(b"\x00\x01\x02")
    (tool_ctx.workspace / "d").mkdir()
    for path, msg in (("bin", "binary"), ("missing", "does not exist"), ("d", "directory")):
        with pytest.raises(ToolError, match=msg):
            tool_registry.run("read_file", {"path": path}, tool_ctx)


def test_read_file_bounds_long_lines(tool_registry: ToolRegistry, tool_ctx: ToolContext) -> None:
    (tool_ctx.workspace / "wide.txt").write_text("x" * 100_000 + "\nend\n")
    out = run(tool_registry, tool_ctx, "read_file", path="wide.txt")
    assert out.startswith("x" * 2000 + " [line truncated]\nend")
    assert len(out) < 3000


def test_read_file_last_line_without_newline_and_huge_files(
    tool_registry: ToolRegistry, tool_ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tool_ctx.workspace / "t.txt").write_text("a\nlast")
    assert run(tool_registry, tool_ctx, "read_file", path="t.txt") == "a\nlast"
    # past READ_COUNT_MAX_BYTES the line count is not exact any more, and is not claimed
    monkeypatch.setattr(files, "READ_COUNT_MAX_BYTES", 4096)
    (tool_ctx.workspace / "huge.txt").write_bytes(b"0123456789abcdef\n" * 1000)
    res = tool_registry.run("read_file", {"path": "huge.txt", "limit": 2}, tool_ctx)
    assert res.output.startswith("0123456789abcdef\n0123456789abcdef\n[showing lines 1-2 (the file")
    assert res.data is not None and "total_lines" not in res.data and res.data["truncated"]


def test_list_files_skips_internals_and_bounds(
    tool_registry: ToolRegistry, tool_ctx: ToolContext, ws: Path
) -> None:
    assert run(tool_registry, tool_ctx, "list_files") == "README.md\nsrc/"
    out = run(tool_registry, tool_ctx, "list_files", recursive=True)
    assert out == "README.md\nsrc/\nsrc/app.py"
    for i in range(20):
        (ws / f"f{i:02}").touch()
    res = tool_registry.run("list_files", {"max_entries": 5}, tool_ctx)
    assert res.output.splitlines()[:5] == ["README.md", "f00", "f01", "f02", "f03"]
    assert "[listing cut at 5 entries" in res.output
    assert res.data is not None and res.data["truncated"] is True


def test_list_files_recursive_order_lists_a_folder_before_its_subfolders(
    tool_registry: ToolRegistry, tool_ctx: ToolContext
) -> None:
    ws = tool_ctx.workspace
    for rel in ("a/x", "a/b/y", "c/z"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).touch()
    out = run(tool_registry, tool_ctx, "list_files", recursive=True)
    assert out.splitlines() == ["a/", "c/", "a/b/", "a/x", "a/b/y", "c/z"]
    res = tool_registry.run("list_files", {"recursive": True, "max_entries": 4}, tool_ctx)
    assert res.output.splitlines()[:4] == ["a/", "c/", "a/b/", "a/x"]
    assert res.data is not None and res.data["truncated"] is True
    exact = tool_registry.run("list_files", {"recursive": True, "max_entries": 6}, tool_ctx)
    assert exact.data is not None and exact.data["truncated"] is False


def test_list_files_does_not_follow_symlinked_folders(
    tool_registry: ToolRegistry, tool_ctx: ToolContext, ws: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.txt").touch()
    (ws / "link").symlink_to(outside)
    out = run(tool_registry, tool_ctx, "list_files", recursive=True)
    assert "link" in out and "secret.txt" not in out


def test_grep_searches_with_globs_and_skips_internals(
    tool_registry: ToolRegistry, tool_ctx: ToolContext, ws: Path
) -> None:
    (ws / "src/deep").mkdir()
    (ws / "src/deep/util.py").write_text("x = 1\ndef main2():\n")
    (ws / "notes.txt").write_text("def main in prose\n")
    (ws / "blob.bin").write_bytes(b"\x00def main")
    assert run(tool_registry, tool_ctx, "grep", pattern=r"def main\(") == "src/app.py:1:def main():"
    out = run(tool_registry, tool_ctx, "grep", pattern="def main", glob="*.py")
    assert out == "src/app.py:1:def main():\nsrc/deep/util.py:2:def main2():"
    out = run(tool_registry, tool_ctx, "grep", pattern="main", glob="src/deep/**")
    assert out == "src/deep/util.py:2:def main2():"
    assert run(tool_registry, tool_ctx, "grep", pattern="core") == "[no matches]"  # .git skipped
    assert "HELLO" not in run(tool_registry, tool_ctx, "grep", pattern="HELLO")
    out = run(tool_registry, tool_ctx, "grep", pattern="HELLO", case_insensitive=True)
    assert out == "README.md:1:hello"
    with pytest.raises(ToolError, match="invalid regular expression"):
        tool_registry.run("grep", {"pattern": "("}, tool_ctx)


def test_grep_stops_at_max_matches(tool_registry: ToolRegistry, tool_ctx: ToolContext) -> None:
    (tool_ctx.workspace / "many.txt").write_text("hit\n" * 50)
    res = tool_registry.run("grep", {"pattern": "hit", "max_matches": 3}, tool_ctx)
    assert res.output.splitlines()[:3] == ["many.txt:1:hit", "many.txt:2:hit", "many.txt:3:hit"]
    assert "[stopped at 3 matches" in res.output


def test_grep_stops_on_time_budget_and_cancel(
    tool_registry: ToolRegistry, tool_ctx: ToolContext, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "GREP_TIME_BUDGET_SECS", -1.0)
    res = tool_registry.run("grep", {"pattern": "hello"}, tool_ctx)
    assert res.output == "[no matches]\n[search stopped after 0 files: time budget of -1 s used up]"
    assert res.data is not None and res.data["truncated"] is True
    monkeypatch.setattr(files, "GREP_TIME_BUDGET_SECS", 20.0)
    tool_ctx.cancel.set()
    assert "cancelled" in tool_registry.run("grep", {"pattern": "hello"}, tool_ctx).output


# -- write_file ----------------------------------------------------------------------------


def test_write_file_creates_then_updates_atomically(
    tool_registry: ToolRegistry, tool_ctx: ToolContext
) -> None:
    res = tool_registry.run("write_file", {"path": "a/b/c.txt", "content": "one\n"}, tool_ctx)
    assert res.file_changes == (FileChange(path="a/b/c.txt", kind=FileChangeKind.ADD),)
    target = tool_ctx.workspace / "a/b/c.txt"
    assert target.read_text() == "one\n"
    target.chmod(0o751)
    res = tool_registry.run("write_file", {"path": "a/b/c.txt", "content": "two\n"}, tool_ctx)
    assert res.file_changes == (FileChange(path="a/b/c.txt", kind=FileChangeKind.UPDATE),)
    assert target.read_text() == "two\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751  # the mode survives the replace
    leftovers = [p.name for p in target.parent.iterdir() if p.name != "c.txt"]
    assert leftovers == []  # no temp files left behind


def test_write_file_through_inside_symlink_updates_the_target(
    tool_registry: ToolRegistry, tool_ctx: ToolContext, ws: Path
) -> None:
    (ws / "alias.md").symlink_to(ws / "README.md")
    tool_registry.run("write_file", {"path": "alias.md", "content": "new\n"}, tool_ctx)
    assert (ws / "README.md").read_text() == "new\n"
    assert (ws / "alias.md").is_symlink()


# -- apply_patch ---------------------------------------------------------------------------

GOOD_PATCH = """*** Begin Patch
*** Add File: docs/new.md
+# New
+text
*** Update File: src/app.py
@@ def main():
-    return 1
+    return 2
*** Delete File: README.md
*** End Patch
"""


def test_apply_patch_add_update_delete(
    tool_registry: ToolRegistry, tool_ctx: ToolContext, ws: Path
) -> None:
    res = tool_registry.run("apply_patch", {"input": GOOD_PATCH}, tool_ctx)
    assert res.file_changes == (
        FileChange(path="docs/new.md", kind=FileChangeKind.ADD),
        FileChange(path="src/app.py", kind=FileChangeKind.UPDATE),
        FileChange(path="README.md", kind=FileChangeKind.DELETE),
    )
    assert (ws / "docs/new.md").read_text() == "# New\ntext\n"
    assert (ws / "src/app.py").read_text() == "def main():\n    return 2\n"
    assert not (ws / "README.md").exists()


def test_apply_patch_move_and_eof_hunks(
    tool_registry: ToolRegistry, tool_ctx: ToolContext, ws: Path
) -> None:
    (ws / "list.txt").write_text("a\nb\na\nb\n")
    patch = (
        "*** Begin Patch\n*** Update File: list.txt\n*** Move to: moved/list.txt\n"
        "@@\n a\n-b\n+B\n*** End of File\n*** End Patch"
    )
    res = tool_registry.run("apply_patch", {"input": patch}, tool_ctx)
    assert not (ws / "list.txt").exists()
    assert (ws / "moved/list.txt").read_text() == "a\nb\na\nB\n"  # the last a/b pair changed
    assert [c.kind for c in res.file_changes] == [FileChangeKind.ADD, FileChangeKind.DELETE]


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (
            GOOD_PATCH.replace("-    return 1", "-    return 99"),
            r"patch line 6: hunk does not match",
        ),
        (GOOD_PATCH.replace("@@ def main():", "@@ def nope():"), "context 'def nope"),
        (GOOD_PATCH.replace("README.md", "missing.md"), "does not exist"),
        (GOOD_PATCH.replace("docs/new.md", "src/app.py"), "more than one operation"),
        (GOOD_PATCH.replace("docs/new.md", ".vtcode/x"), r"inside \.vtcode/"),
        (GOOD_PATCH.replace("*** End Patch\n", ""), "must end with"),
        ("garbage", "must start with"),
        (GOOD_PATCH.replace("+# New", "# New"), "must start with '\\+'"),
    ],
)
def test_apply_patch_is_all_or_nothing(
    tool_registry: ToolRegistry, tool_ctx: ToolContext, ws: Path, patch: str, message: str
) -> None:
    before = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    with pytest.raises(ToolError, match=message):
        tool_registry.run("apply_patch", {"input": patch}, tool_ctx)
    after = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
    assert after == before  # nothing added, changed or deleted


def test_apply_patch_restores_earlier_files_when_a_write_fails(
    tool_ctx: ToolContext, ws: Path
) -> None:
    # A real short write: RLIMIT_FSIZE makes the second (big) file fail with EFBIG mid-patch,
    # after the first file was already replaced. Works as root, unlike permission bits.
    big = "".join(f"+{'x' * 99}\n" for _ in range(100))  # ~10 KB
    patch = (
        "*** Begin Patch\n*** Update File: src/app.py\n-    return 1\n+    return 3\n"
        f"*** Add File: big.txt\n{big}*** End Patch"
    )
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, hard))
    try:
        with pytest.raises(ToolError, match="restored"):
            ApplyPatchTool().run({"input": patch}, tool_ctx)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, old_handler)
    assert (ws / "src/app.py").read_text() == "def main():\n    return 1\n"
    assert not (ws / "big.txt").exists()
    assert sorted(p.name for p in ws.iterdir()) == [".git", ".vtcode", "README.md", "src"]


def test_apply_patch_refuses_a_file_where_a_folder_must_be(
    tool_registry: ToolRegistry, tool_ctx: ToolContext, ws: Path
) -> None:
    patch = (
        "*** Begin Patch\n*** Update File: src/app.py\n-    return 1\n+    return 3\n"
        "*** Add File: README.md/inner.txt\n+x\n*** End Patch"
    )
    with pytest.raises(ToolError, match=r"'README\.md' is not a folder"):
        tool_registry.run("apply_patch", {"input": patch}, tool_ctx)
    assert (ws / "src/app.py").read_text() == "def main():\n    return 1\n"


def test_apply_patch_tolerates_whitespace_drift(
    tool_registry: ToolRegistry, tool_ctx: ToolContext, ws: Path
) -> None:
    (ws / "t.py").write_text("x = 1   \ny = 2\n")
    patch = "*** Begin Patch\n*** Update File: t.py\n-x = 1\n+x = 10\n y = 2\n*** End Patch"
    tool_registry.run("apply_patch", {"input": patch}, tool_ctx)
    assert (ws / "t.py").read_text() == "x = 10\ny = 2\n"


def test_apply_patch_deletes_a_symlink_not_its_target(
    tool_registry: ToolRegistry, tool_ctx: ToolContext, ws: Path, tmp_path: Path
) -> None:
    (ws / "alias.md").symlink_to(ws / "README.md")
    outside = tmp_path / "keep.txt"
    outside.write_text("outside\n")
    (ws / "out-link").symlink_to(outside)
    for name in ("alias.md", "out-link"):
        patch = f"*** Begin Patch\n*** Delete File: {name}\n*** End Patch"
        tool_registry.run("apply_patch", {"input": patch}, tool_ctx)
        assert not (ws / name).is_symlink()
    assert (ws / "README.md").read_text() == "hello\n"
    assert outside.read_text() == "outside\n"
    (ws / "src/.git").symlink_to(ws / "README.md")
    with pytest.raises(ToolError, match=r"inside a \.git/ folder"):
        patch = "*** Begin Patch\n*** Delete File: src/.git\n*** End Patch"
        tool_registry.run("apply_patch", {"input": patch}, tool_ctx)


# -- through the real CLI ------------------------------------------------------------------

FIFO_SCRIPT = """
[[turn]]
usage = { input_tokens = 100, output_tokens = 10 }
[[turn.tool_calls]]
name = "read_file"
arguments = { path = "pipe" }

[[turn]]
usage = { input_tokens = 120, output_tokens = 10 }
expect_last_tool_output_contains = "not a regular file: pipe (fifo)"
[[turn.tool_calls]]
name = "read_file"
arguments = { path = "notes.txt" }

[[turn]]
usage = { input_tokens = 140, output_tokens = 10 }
expect_last_tool_output_contains = "still here"
text = "The pipe is not a file; the notes say: still here."
"""


def test_exec_read_file_on_a_fifo_fails_the_call_and_the_run_goes_on(
    tmp_path: Path, snapshot_json: Any
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    os.mkfifo(ws / "pipe")
    (ws / "notes.txt").write_text("still here\n")
    script = tmp_path / "fifo.toml"
    script.write_text(FIFO_SCRIPT)
    try:
        proc = vtcode(
            ["exec", "--json", "--session-id", SESSION, "--script", str(script), "read it"],
            ws,
            timeout=60,  # a blocked open would hang here and fail the test
        )
    finally:
        # wake a reader a regression left blocked (the run is over either way)
        with contextlib.suppress(OSError):
            os.close(os.open(ws / "pipe", os.O_WRONLY | os.O_NONBLOCK))
    assert proc.returncode == 0, proc.stderr
    events = raw_events(proc.stdout)  # each validated against the thread-event schema
    assert events[-1]["type"] == "thread.completed" and events[-1]["subtype"] == "success"
    outputs = [
        (e["item"]["status"], e["item"]["output"])
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "tool_output"
    ]
    assert outputs == [
        ("failed", "not a regular file: pipe (fifo)"),
        ("completed", "still here"),
    ]
    assert [normalise(e, ws) for e in events] == snapshot_json(name="raw")
    assert canonical_snapshot(ws) == snapshot_json(name="canonical")  # schema-validated too
    log = ws / ".vtcode/sessions" / SESSION / "events.jsonl"
    check = vtcode(["validate", "--json", str(log)], ws)
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_pattern_that_backtracks_forever_stops_at_the_budget(tmp_path: Path) -> None:
    """The model writes the pattern: `(a|aa)+$` on a line of 40 `a` and a `!` backtracks for
    hours. The budget bounds the search inside that one line's match too (it was checked only
    between files). Run in a subprocess, so a regression times out instead of hanging here."""
    (tmp_path / "long.txt").write_text("a" * 40 + "!\nplain line\n")
    code = (
        "import sys\nfrom pathlib import Path\nfrom vtcode.tools import files\n"
        "from vtcode.tools.base import ToolContext\n"
        "files.GREP_TIME_BUDGET_SECS = 0.5\n"
        "ws = Path(sys.argv[1])\n"
        "ctx = ToolContext(workspace=ws, session_id='s', spool_dir=ws / 'spool')\n"
        "tool = files.GrepTool()\n"
        "print(tool.run({'pattern': '(a|aa)+$'}, ctx).output)"
    )
    done = run_python(code, str(tmp_path))
    assert done.stdout.strip().endswith(
        "[search stopped after 1 files: time budget of 0.5 s used up]"
    )
