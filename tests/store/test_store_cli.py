"""`vtcode sessions ...` as a real subprocess, and `repair` behaviour."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
from test_retention import make
from test_store import CFG, run_session, script

from tests.conftest import RunVtcode
from vtcode.events.types import TurnStartedEvent
from vtcode.store import SessionWriter, read_session_events, sessions_root
from vtcode.store.layout import lock_path
from vtcode.store.repair import repair_session


def test_list_show_json(tmp_path: Path, run_vtcode: RunVtcode) -> None:
    run_session(tmp_path, "a", script("a", turns=2))
    w = SessionWriter.create(tmp_path, "b", CFG)
    w.submit(TurnStartedEvent())
    w.close()  # abandoned
    rc, out, err = run_vtcode(["--workspace", str(tmp_path), "sessions", "list", "--json"])
    assert rc == 0, err
    rows = {r["session_id"]: r for r in orjson.loads(out)["sessions"]}
    assert rows["a"]["status"] == "completed" and rows["a"]["turns"] == 2
    assert rows["b"]["status"] == "abandoned" and rows["b"]["live"] is False
    rc, out, err = run_vtcode(["--workspace", str(tmp_path), "sessions", "show", "a", "--json"])
    assert rc == 0, err
    doc = orjson.loads(out)
    assert [t["outcome"] for t in doc["turns"]] == ["completed", "completed"]
    assert doc["completion"]["subtype"] == "success"
    assert doc["manifest"]["event_count"] == 10
    rc, out, _ = run_vtcode(["--workspace", str(tmp_path), "sessions", "show", "a"])
    assert rc == 0 and "turn 2  completed" in out and "completed success" in out


def test_show_escapes_terminal_controls(tmp_path: Path, run_vtcode: RunVtcode) -> None:
    from test_store import message

    gate_events = [*script("a", turns=1)[:2], message(9, "\x1b[31mred\x1b[0m"), *script("a")[-2:]]
    run_session(tmp_path, "a", gate_events)
    rc, out, _ = run_vtcode(["--workspace", str(tmp_path), "sessions", "show", "a"])
    # Escape sequences are removed whole (vtcode.termtext.inert), the text around them kept.
    assert (
        rc == 0
        and "\x1b" not in out
        and "[31m" not in out
        and "agent_message     completed   red" in out
    )


def test_usage_errors_exit_2(tmp_path: Path, run_vtcode: RunVtcode) -> None:
    for args in (["show", "nope"], ["show", "../etc"], ["export", "nope"], ["repair", "--", "-x"]):
        rc, _out, err = run_vtcode(["--workspace", str(tmp_path), "sessions", *args])
        assert rc == 2, (args, err)
        assert "Traceback" not in err and err.startswith("error:")
    assert not (tmp_path / ".vtcode").exists()


def test_gc_cli(tmp_path: Path, run_vtcode: RunVtcode) -> None:
    make(tmp_path, "old", age_days=40)
    make(tmp_path, "new", age_days=1)
    base = ["--workspace", str(tmp_path), "sessions", "gc"]
    rc, out, err = run_vtcode([*base, "--dry-run", "--json"])
    assert rc == 0, err
    assert orjson.loads(out)["deleted"] == ["old"]
    assert (sessions_root(tmp_path) / "old").exists()
    rc, out, err = run_vtcode([*base, "--max-sessions", "1"])
    assert rc == 0, err
    assert sorted(out.split()) == sorted(["removed", "old"])
    assert (sessions_root(tmp_path) / "new").exists()
    # 0 means no limit (issue 26.3): nothing more goes.
    rc, out, err = run_vtcode([*base, "--max-sessions", "0"])
    assert (rc, out) == (0, ""), err
    assert (sessions_root(tmp_path) / "new").exists()


def test_export_cli(tmp_path: Path, run_vtcode: RunVtcode) -> None:
    sdir = run_session(tmp_path, "a", script("a"))
    base = ["--workspace", str(tmp_path), "sessions", "export", "a"]
    rc, out, err = run_vtcode([*base, "--format", "wrapped"])
    assert rc == 0, err
    assert out.encode() == (sdir / "events.jsonl").read_bytes()
    target = tmp_path / "t.json"
    rc, _, err = run_vtcode([*base, "--format", "atif", "-o", str(target)])
    assert rc == 0, err
    assert orjson.loads(target.read_bytes())["schema_version"] == "ATIF-v1.4"
    rc, out, _ = run_vtcode([*base, "--format", "open-responses"])
    assert rc == 0 and out.rstrip().endswith("data: [DONE]") and out.count("[DONE]") == 1


def test_repair_cli_fixes_corruption(tmp_path: Path, run_vtcode: RunVtcode) -> None:
    sdir = run_session(tmp_path, "a", script("a", turns=2))
    lines = (sdir / "events.jsonl").read_bytes().splitlines(keepends=True)
    original = b"".join(lines)
    lines[3] = b"garbage that is not json\n"
    corrupt = b"".join([*lines, lines[5]])  # plus an exact duplicate at the end
    (sdir / "events.jsonl").write_bytes(corrupt)
    rc, out, err = run_vtcode(["--workspace", str(tmp_path), "sessions", "repair", "a", "--json"])
    assert rc == 0, err
    rep = orjson.loads(out)
    assert [d["line"] for d in rep["dropped"]] == [4]
    assert rep["duplicates"] == [11]
    assert [(r["from_seq"], r["to_seq"]) for r in rep["renumbered"]][:2] == [(5, 4), (6, 5)]
    backup = Path(rep["backup"])
    assert backup.read_bytes() == corrupt
    assert Path(rep["quarantine"]).read_bytes() == b"garbage that is not json\n"
    seqs = [e.seq for e in read_session_events(tmp_path, "a")]
    assert seqs == list(range(1, len(original.splitlines())))
    w = SessionWriter.open_existing(tmp_path, "a", CFG)  # appendable again
    w.close()
    rc, out, _ = run_vtcode(["--workspace", str(tmp_path), "sessions", "repair", "a"])
    assert rc == 0 and "nothing to repair" in out


def test_repair_of_a_clean_log_changes_nothing(tmp_path: Path) -> None:
    sdir = run_session(tmp_path, "a", script("a"))
    before = (sdir / "events.jsonl").read_bytes()
    rep = repair_session(tmp_path, "a", CFG)
    assert not rep.changed and rep.backup is None
    assert (sdir / "events.jsonl").read_bytes() == before
    assert not [n for n in os.listdir(sdir) if ".bak-" in n]


def test_repair_while_locked_exits_75(tmp_path: Path, run_vtcode: RunVtcode) -> None:
    run_session(tmp_path, "a", script("a"))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from filelock import FileLock\n"
            f"l = FileLock({str(lock_path(tmp_path, 'a'))!r}, mode=0o600, timeout=5)\n"
            "l.acquire(); print('held', flush=True); sys.stdin.read()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        rc, _, err = run_vtcode(
            [
                "--workspace",
                str(tmp_path),
                "-c",
                "store.lock_timeout_secs=0.1",
                "sessions",
                "repair",
                "a",
            ]
        )
    finally:
        holder.communicate("", timeout=30)
    assert rc == 75, err
    assert "in use by another process" in err
