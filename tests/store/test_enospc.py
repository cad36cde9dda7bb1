"""The terminal event survives a full disk, and a hostile price never breaks it (issue 11).

As root, a 2 MiB tmpfs is the workspace; a filler file leaves 10 different amounts of free
space, and `vtcode exec --json` runs a script that writes more than any of them. In every case
the log ends with a thread-level `error` event naming the full disk and `thread.completed`
(error_during_execution, stop_reason `error`) and passes `vtcode validate`, stdout's last line
is that same event, the exit code is 1 with a located message and no traceback, and the
session's reserve file is gone. Before
issue 11, 6 of 9 levels ended with neither stdout nor the log holding `thread.completed`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from tests.exec_support import raw_events, vtcode

SESSION = "full-disk"
TMPFS_BYTES = 2 * 1024 * 1024
LEVELS = 10


def _big_script(turns: int = 60) -> str:
    """Each turn streams ~12 KB of text and lists files: ~40 KB of log a turn, 2.4 MB in all."""
    parts = ['[provider]\nmodel = "replay-1"\n']
    for i in range(turns):
        parts.append(
            f'[[turn]]\ntext = "{f"chunk{i} " * 1500}"\n'
            "usage = { input_tokens = 100, output_tokens = 10 }\n"
            '[[turn.tool_calls]]\nname = "list_files"\n'
            f'arguments = {{ path = ".", max_entries = {i + 1} }}\n'
        )
    parts.append('[[turn]]\ntext = "Done."\n')
    return "\n".join(parts)


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CAP_SYS_ADMIN)")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_BYTES}", "tmpfs", str(mnt)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _fill(mnt: Path, free: int) -> None:
    """Leave about `free` bytes free on `mnt` (a filler file of real blocks)."""
    st = os.statvfs(mnt)
    avail = st.f_bavail * st.f_frsize
    with open(mnt / "filler", "wb") as f:
        os.posix_fallocate(f.fileno(), 0, max(0, avail - free))


def _closing_shape(events: list[dict[str, Any]]) -> dict[str, Any]:
    """How the log ends, without what depends on where the disk filled up: the log's own write
    (`the session log could not be written: cannot write events.jsonl|the manifest: ...`) or,
    when the transcript or a tool hit it first, the runner's error. Either way the thread-level
    `error` event names the full disk and `thread.completed` says `error`, one shape for both
    (the CI run that found them differing: prose in stop_reason from the gate, a code from the
    runner)."""
    end = events[-1]
    errors = [e["message"] for e in events if e["type"] == "error"]
    return {
        "type": end["type"],
        "subtype": end["subtype"],
        "outcome_code": end["outcome_code"],
        "stop_reason": end.get("stop_reason"),
        "names_the_full_disk": bool(errors) and "No space left on device" in errors[-1],
        "has_cost": "total_cost_usd" in end,
    }


def _run_on_full_disk(tmpfs: Path, tmp_path: Path, script: Path, free: int) -> dict[str, Any]:
    """One `exec --json` with about `free` bytes left; the closing shape, every promise checked."""
    home = tmp_path / "home"
    ws = tmpfs / "ws"
    ws.mkdir()
    _fill(tmpfs, free)
    proc = vtcode(
        ["exec", "--json", "--session-id", SESSION, "--script", str(script), "go"],
        ws,
        env={"VTCODE_HOME": str(home)},
        timeout=300,
    )
    where = f"free={free}"
    assert proc.returncode == 1, f"{where}: {proc.stderr[-2000:]}"
    assert "Traceback" not in proc.stderr, where
    assert "No space left on device" in proc.stderr, f"{where}: {proc.stderr[-2000:]}"
    assert re.search(r"^error: .*events\.jsonl: ", proc.stderr, re.M), where
    sdir = ws / ".vtcode" / "sessions" / SESSION
    log = sdir / "events.jsonl"
    check = vtcode(["validate", str(log)], tmp_path, env={"VTCODE_HOME": str(home)})
    assert check.returncode == 0, f"{where}: {check.stdout}{check.stderr}"
    logged = [json.loads(line)["event"] for line in log.read_text().splitlines()]
    shown = raw_events(proc.stdout)
    assert logged and logged[0]["type"] == "thread.started", where
    assert logged[-1]["type"] == "thread.completed", where
    assert shown[-1] == logged[-1], where  # stdout ends with the same terminal event
    assert shown == logged[: len(shown)], where  # and never showed what the log lacks
    assert not (sdir / ".reserve").exists(), where
    shutil.rmtree(ws)
    (tmpfs / "filler").unlink()
    return _closing_shape(logged)


def test_full_disk_at_ten_levels_still_ends_with_thread_completed(
    tmpfs: Path, tmp_path: Path, snapshot: SnapshotAssertion
) -> None:
    script = tmp_path / "big.toml"
    script.write_text(_big_script())
    # from just above the default reserve (256 KiB) to 1.5 MiB free: ENOSPC at every stage
    levels = [300_000 + i * 130_000 for i in range(LEVELS)]
    shapes = [_run_on_full_disk(tmpfs, tmp_path, script, free) for free in levels]
    assert all(s == shapes[0] for s in shapes), list(zip(levels, shapes, strict=True))
    assert shapes[0] == snapshot


def test_a_disk_full_before_the_first_line_still_opens_and_closes_the_thread(
    tmpfs: Path, tmp_path: Path
) -> None:
    """Just above the reserve, the session's own files take the last blocks and the first event
    line cannot be written: the log used to stay empty (no thread.completed anywhere). The
    closing writes `thread.started` too, so the log is a whole (failed) thread. Page by page
    from the reserve up, so wherever this filesystem puts that edge, it is crossed."""
    script = tmp_path / "big.toml"
    script.write_text(_big_script())
    reserve = 256 * 1024
    shapes = [
        _run_on_full_disk(tmpfs, tmp_path, script, reserve + page * 4096) for page in range(12)
    ]
    assert all(s == shapes[0] for s in shapes), shapes
    assert shapes[0]["names_the_full_disk"] and shapes[0]["stop_reason"] == "error"


HOSTILE = """[provider]
model = "replay-hostile"
pricing = { input_per_mtok = inf, output_per_mtok = 1e309 }

[[turn]]
text = "Priced beyond belief."
usage = { input_tokens = 1000, output_tokens = 20 }
"""


def test_a_non_finite_price_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    """A price of inf (or 1e309) would make every cost non-finite and the budget never trip:
    since issue 26.4 it is a located script error, exit 2, and no session is started."""
    script = tmp_path / "hostile.toml"
    script.write_text(HOSTILE)
    proc = vtcode(
        ["exec", "--json", "--session-id", SESSION, "--script", str(script), "go"], tmp_path
    )
    assert proc.returncode == 2, proc.stderr
    assert f"{script}:3:" in proc.stderr and "input_per_mtok" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""
    assert not (tmp_path / ".vtcode" / "sessions" / SESSION).exists()
