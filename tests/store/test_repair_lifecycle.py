"""`sessions repair` always leaves a log `vtcode validate` accepts (issue 23 item 10).

A real session log (two turns, a streamed answer, an exec_command call and its output) is
damaged the ways a disk, an editor or a crash damage it: a UTF-8 BOM, CRLF line ends, a corrupt
middle line, a lost line, a truncated last line mid-turn, an item left open. Through the CLI:
repair exits 0, validate exits 0 (no --partial), `exec resume` appends a run and the log still
validates. Then a fuzz-style loop through the API (the same functions, in-process, to afford
over a thousand cases): cut the log at every byte of its last two lines, drop each line, break each
line; repair + validate must pass every time. `exec resume` of a log that does not validate is
refused with exit 2 and the log is left as it was.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.exec_support import vtcode
from vtcode.config.model import StoreConfig
from vtcode.store.repair import repair_session
from vtcode.validate.engine import validate_path
from vtcode.validate.report import FileStatus, ValidateOptions

SCRIPT = """[provider]
model = "replay-1"

[[turn]]
text = "Reading the folder first, then I will answer."
[[turn.tool_calls]]
name = "exec_command"
[turn.tool_calls.arguments]
command = "echo hi; echo there"
yield_time_ms = 30000

[[turn]]
text = "Done: the folder holds what you expected, and nothing else was changed."
"""
LOG = Path(".vtcode") / "sessions" / "s1" / "events.jsonl"


@pytest.fixture(scope="module")
def fixture_log(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A real log written by `vtcode exec` and `exec resume`: two runs (module-wide)."""
    root = tmp_path_factory.mktemp("fixture")
    (root / "script.toml").write_text(SCRIPT)
    ws = root / "ws"
    ws.mkdir()
    script = str(root / "script.toml")
    proc = vtcode(["exec", "--script", script, "--session-id", "s1", "go"], ws)
    assert proc.returncode == 0, proc.stderr
    resumed = vtcode(["exec", "--script", script, "resume", "s1", "again"], ws)  # a second run
    assert resumed.returncode == 0, resumed.stderr
    data = (ws / LOG).read_bytes()
    assert data.count(b'"thread.started"') == 2 and data.count(b"\n") >= 26
    return data


def _plant(ws: Path, data: bytes) -> Path:
    """`data` as the log of session s1 in `ws`, without the caches (they no longer match)."""
    sdir = ws / LOG.parent
    if sdir.exists():
        shutil.rmtree(sdir)
    (sdir / "index").mkdir(parents=True)  # the layout `vtcode exec` creates
    (sdir / "events.jsonl").write_bytes(data)
    return sdir / "events.jsonl"


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def _type(line: bytes) -> str:
    return str(json.loads(line)["event"]["type"])


def _damaged(data: bytes) -> dict[str, bytes]:
    lines = _lines(data)
    types = [_type(ln) for ln in lines]
    turn_end = types.index("turn.completed")
    item_done = types.index("item.completed")
    started = [i for i, t in enumerate(types) if t == "item.started"]
    return {
        "bom": b"\xef\xbb\xbf" + data,
        "crlf": data.replace(b"\n", b"\r\n"),
        "nul-padding": b"".join(lines[:3]) + b"\0" * 64 + b"".join(lines[3:]),
        "not-utf8": data.replace(b'"Done:', b'"\xff\xfeDone:', 1),
        "corrupt-first-line": b'{"schema_version":\n' + b"".join(lines[1:]),
        "corrupt-middle-turn-end": b"".join(lines[:turn_end])
        + b"garbage\n"
        + b"".join(lines[turn_end + 1 :]),
        "lost-item-started": b"".join(ln for i, ln in enumerate(lines) if i != started[1]),
        "item-left-open": b"".join(ln for i, ln in enumerate(lines) if i != item_done),
        "truncated-mid-turn": b"".join(lines[: turn_end + 3]) + lines[turn_end + 3][:25],
        "bom-and-corrupt-middle": b"\xef\xbb\xbf"
        + b"".join(lines[:5])
        + b"{]\n"
        + b"".join(lines[6:]),
    }


@pytest.mark.parametrize(
    "case",
    [
        "bom",
        "crlf",
        "nul-padding",
        "not-utf8",
        "corrupt-first-line",
        "corrupt-middle-turn-end",
        "lost-item-started",
        "item-left-open",
        "truncated-mid-turn",
        "bom-and-corrupt-middle",
    ],
)
def test_repair_then_validate_then_resume(tmp_path: Path, fixture_log: bytes, case: str) -> None:
    ws = tmp_path / "ws"
    log = _plant(ws, _damaged(fixture_log)[case])
    (tmp_path / "script.toml").write_text(SCRIPT)
    before = log.read_bytes()
    broken = validate_path(log, ValidateOptions(partial=True), jobs=1).status
    if broken is not FileStatus.VALID:  # resuming is refused until the log is repaired
        args = ["exec", "--script", str(tmp_path / "script.toml"), "resume", "s1", "more"]
        refused = vtcode(args, ws)
        assert refused.returncode == 2, refused.stderr
        assert "sessions repair s1" in refused.stderr and "Traceback" not in refused.stderr
        assert log.read_bytes() == before  # nothing appended to the broken log
    repaired = vtcode(["sessions", "repair", "s1", "--json"], ws)
    assert repaired.returncode == 0, repaired.stderr
    report = json.loads(repaired.stdout)
    if broken is not FileStatus.VALID:
        assert report["changed"] is True
        backups = list(log.parent.glob("events.jsonl.bak-*"))
        assert [b.read_bytes() for b in backups] == [before]
    if case in ("bom", "nul-padding", "not-utf8"):
        assert report["dropped"] == [] and report["salvaged"], report  # nothing quarantined
    checked = vtcode(["validate", str(log)], ws)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    resumed = vtcode(
        ["exec", "--script", str(tmp_path / "script.toml"), "resume", "s1", "more"], ws
    )
    assert resumed.returncode == 0, resumed.stderr
    again = vtcode(["validate", str(log)], ws)
    assert again.returncode == 0, again.stdout + again.stderr


def _repair_and_validate(ws: Path, data: bytes) -> str | None:
    """None when repair + validate pass, else what failed."""
    log = _plant(ws, data)
    repair_session(ws, "s1", StoreConfig())
    report = validate_path(log, ValidateOptions(), jobs=1)
    if report.status is FileStatus.VALID:
        return None
    return "; ".join(f"{p.line}: {p.code}: {p.message}" for p in report.problems[:3])


def test_fuzz_cut_at_every_byte_of_the_last_lines(tmp_path: Path, fixture_log: bytes) -> None:
    lines = _lines(fixture_log)
    start = len(b"".join(lines[:-2]))
    failures = {}
    for cut in range(start, len(fixture_log)):
        why = _repair_and_validate(tmp_path / "ws", fixture_log[:cut])
        if why is not None:
            failures[cut] = why
    assert failures == {}


def test_fuzz_drop_or_break_each_line(tmp_path: Path, fixture_log: bytes) -> None:
    lines = _lines(fixture_log)
    failures = {}
    for i in range(len(lines)):
        rest = lines[:i] + lines[i + 1 :]
        variants = {
            "dropped": b"".join(rest),
            "broken": b"".join(
                [*lines[:i], lines[i][: len(lines[i]) // 2] + b"\n", *lines[i + 1 :]]
            ),
            "doubled": b"".join([*lines[: i + 1], lines[i], *lines[i + 1 :]]),
            "bom": b"".join([*lines[:i], b"\xef\xbb\xbf" + lines[i], *lines[i + 1 :]]),
        }
        for name, data in variants.items():
            why = _repair_and_validate(tmp_path / "ws", data)
            if why is not None:
                failures[f"line {i + 1} {name}"] = why
    assert failures == {}


def test_a_folder_where_a_state_file_belongs_is_exit_2_with_the_path(tmp_path: Path) -> None:
    state = tmp_path / ".vtcode" / "state"
    (state / "notes.md").mkdir(parents=True)
    (state / "decisions.md").mkdir()
    for args, name in (
        (["notes", "add", "hi"], "notes.md"),
        (["decisions", "add", "x"], "decisions.md"),
        (["notes", "list"], "notes.md"),
    ):
        proc = vtcode(args, tmp_path)
        assert proc.returncode == 2, (args, proc.stderr)
        assert str(state / name) in proc.stderr and "internal error" not in proc.stderr
