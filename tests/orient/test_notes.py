"""Loop memory: upstream's format, torn-tail quarantine, 8 concurrent appenders, the CLI."""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
from pathlib import Path

import orjson

from tests.conftest import RunVtcode
from vtcode.orient.memory import MemoryKind, append_entry, read_entries, read_text

NOW = dt.datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC)
LINE = re.compile(r"^- \[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\] (.+)$")


def test_first_write_has_the_header_and_each_entry_is_one_line(tmp_path: Path) -> None:
    append_entry(tmp_path, MemoryKind.NOTES, "  first note \n", now=NOW)
    append_entry(tmp_path, MemoryKind.NOTES, "multi\n  line\n\nnote", now=NOW)
    assert append_entry(tmp_path, MemoryKind.NOTES, " \n\t ", now=NOW) is None
    path = tmp_path / ".vtcode/state/notes.md"
    assert path.read_text() == (
        "# Loop Notes\n\n"
        "- [2026-01-02T03:04:05Z] first note\n"
        "- [2026-01-02T03:04:05Z] multi line note\n"
    )
    assert (path.stat().st_mode & 0o777) == 0o600
    assert (path.parent.stat().st_mode & 0o777) == 0o700
    append_entry(tmp_path, MemoryKind.DECISIONS, "use JWT", now=NOW)
    assert (tmp_path / ".vtcode/state/decisions.md").read_text() == (
        "# Loop Decisions\n\n- [2026-01-02T03:04:05Z] use JWT\n"
    )


def test_missing_file_reads_empty(tmp_path: Path) -> None:
    assert read_text(tmp_path, MemoryKind.NOTES) == ""
    assert read_entries(tmp_path, MemoryKind.DECISIONS) == []


def test_torn_last_fragment_is_quarantined_before_the_next_append(tmp_path: Path) -> None:
    append_entry(tmp_path, MemoryKind.NOTES, "whole", now=NOW)
    path = tmp_path / ".vtcode/state/notes.md"
    with path.open("ab") as f:
        f.write(b"- [2026-01-02T03:04:05Z] half a no")
    assert [e.text for e in read_entries(tmp_path, MemoryKind.NOTES)] == ["whole"]
    append_entry(tmp_path, MemoryKind.NOTES, "after", now=NOW)
    assert path.read_text().splitlines() == [
        "# Loop Notes",
        "",
        "- [2026-01-02T03:04:05Z] whole",
        "- [2026-01-02T03:04:05Z] after",
    ]
    torn = list(path.parent.glob("notes.md.torn-*"))
    assert len(torn) == 1 and torn[0].read_bytes() == b"- [2026-01-02T03:04:05Z] half a no"


def test_a_torn_header_starts_the_file_over(tmp_path: Path) -> None:
    folder = tmp_path / ".vtcode/state"
    folder.mkdir(parents=True)
    (folder / "notes.md").write_bytes(b"# Loop No")
    append_entry(tmp_path, MemoryKind.NOTES, "x", now=NOW)
    assert (folder / "notes.md").read_text() == "# Loop Notes\n\n- [2026-01-02T03:04:05Z] x\n"
    assert [p.read_bytes() for p in folder.glob("notes.md.torn-*")] == [b"# Loop No"]


CHILD = """
import sys
from pathlib import Path
from vtcode.orient.memory import MemoryKind, append_entry
ws, who, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
for i in range(n):
    append_entry(ws, MemoryKind.NOTES, f"{who}:{i}:" + "y" * (i * 37 % 900))
"""


def test_eight_processes_append_at_once_and_every_line_is_whole(tmp_path: Path) -> None:
    n = 40
    procs = [
        subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path), f"w{w}", str(n)])
        for w in range(8)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0] * 8
    data = (tmp_path / ".vtcode/state/notes.md").read_bytes()
    assert data.startswith(b"# Loop Notes\n\n") and data.endswith(b"\n")
    assert data.count(b"# Loop Notes") == 1
    lines = data.decode().splitlines()[2:]
    assert len(lines) == 8 * n
    seen: dict[str, list[int]] = {}
    for line in lines:
        m = LINE.match(line)
        assert m, line
        who, i, pad = m.group(1).split(":")
        assert pad == "y" * (int(i) * 37 % 900)
        seen.setdefault(who, []).append(int(i))
    # Each writer's entries are all present, once each, in its own order.
    assert seen == {f"w{w}": list(range(n)) for w in range(8)}
    assert not list((tmp_path / ".vtcode/state").glob("*.torn-*"))


def test_cli_add_list_and_stdin(tmp_path: Path, run_vtcode: RunVtcode) -> None:
    rc, _, err = run_vtcode(["notes", "add", "remember", "the", "milk"], cwd=tmp_path)
    assert rc == 0, err
    rc, _, _ = run_vtcode(["notes", "add", "-"], cwd=tmp_path, input="from\nstdin\n")
    assert rc == 0
    rc, out, _ = run_vtcode(["notes", "list", "--json"], cwd=tmp_path)
    assert rc == 0
    assert [e["text"] for e in orjson.loads(out)["notes"]] == ["remember the milk", "from stdin"]
    rc, out, _ = run_vtcode(["notes", "list"], cwd=tmp_path)
    assert [LINE.match(ln).group(1) for ln in out.splitlines()] == [  # type: ignore[union-attr]
        "remember the milk",
        "from stdin",
    ]
    rc, out, _ = run_vtcode(["decisions", "add", "--json", "ship", "friday"], cwd=tmp_path)
    assert rc == 0 and orjson.loads(out)["text"] == "ship friday"
    rc, out, _ = run_vtcode(["decisions", "list"], cwd=tmp_path)
    assert out.count("\n") == 1 and "ship friday" in out


def test_cli_empty_note_is_a_usage_error_and_writes_nothing(
    tmp_path: Path, run_vtcode: RunVtcode
) -> None:
    rc, out, err = run_vtcode(["notes", "add", "   "], cwd=tmp_path)
    assert (rc, out) == (2, "") and "empty note" in err and "Traceback" not in err
    assert not (tmp_path / ".vtcode/state/notes.md").exists()


def test_symlinked_notes_file_is_refused(tmp_path: Path, run_vtcode: RunVtcode) -> None:
    folder = tmp_path / ".vtcode/state"
    folder.mkdir(parents=True)
    target = tmp_path / "elsewhere.md"
    target.write_text("keep\n")
    os.symlink(target, folder / "notes.md")
    rc, _, err = run_vtcode(["notes", "add", "x"], cwd=tmp_path)
    assert rc != 0 and "Traceback" not in err and "notes.md" in err
    assert target.read_text() == "keep\n"
