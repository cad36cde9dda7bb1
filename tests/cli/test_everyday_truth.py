"""Small outputs that must mean what they say (issue 26 item 9), each through the real CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.exec_support import SCRIPTS, end_run_and_its_job, spawn_vtcode, vtcode, wait_for_path
from vtcode.report import build_report
from vtcode.report.fmt import fmt_duration


def test_hooks_list_json_trust_matches_the_warning(tmp_path: Path) -> None:
    """An untrusted workspace's loosening key is warned about; --json said `"trusted": true`
    beside it because the workspace defines no hooks."""
    (tmp_path / "vtcode.toml").write_text('[sandbox]\nmode = "danger-full-access"\n')
    env = {"VTCODE_TRUST_WORKSPACE": ""}
    proc = vtcode(["hooks", "list", "--json"], tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "the workspace is not trusted" in proc.stderr
    data = json.loads(proc.stdout)
    assert (data["trusted"], data["config_trusted"], data["hooks_trusted"]) == (False, False, True)
    trusted = vtcode(["hooks", "list", "--json"], tmp_path, env={"VTCODE_TRUST_WORKSPACE": "1"})
    assert "not trusted" not in trusted.stderr
    assert json.loads(trusted.stdout)["trusted"] is True


def test_sessions_list_counts_the_events_a_killed_run_left(tmp_path: Path) -> None:
    """SIGKILL leaves the manifest as the run opened it (0 events); the listing counts the log."""
    proc = spawn_vtcode(
        ["exec", "-q", "--session-id", "killed", "--script", str(SCRIPTS / "scenario-cancel.toml"),
         "go"],
        tmp_path,
    )  # fmt: skip
    wait_for_path(tmp_path / "started.flag", proc, "the command")
    proc.kill()
    proc.communicate(timeout=30)
    log = tmp_path / ".vtcode/sessions/killed/events.jsonl"
    held = sum(1 for line in log.read_bytes().splitlines(keepends=True) if line.endswith(b"\n"))
    assert held >= 2
    listed = vtcode(["sessions", "list", "--json"], tmp_path)
    row = json.loads(listed.stdout)["sessions"][0]
    assert (row["session_id"], row["status"], row["events"]) == ("killed", "abandoned", held)
    table = vtcode(["sessions", "list"], tmp_path).stdout.splitlines()
    assert table[0].split()[6] == "EVENTS" and table[1].split()[6] == str(held), table


def test_loop_status_counts_the_running_step(tmp_path: Path) -> None:
    """`step: 0 of max N` while step 1 ran: step_index counts ended steps only."""
    proc = spawn_vtcode(
        ["-q", "loop", "run", "--id", "L", "--script", "loop-slow-step", "long work"], tmp_path
    )
    job = tmp_path / "job.pid"
    try:
        wait_for_path(job, proc, "the step's command")
        text = vtcode(["loop", "status", "L"], tmp_path).stdout
        doc = json.loads(vtcode(["loop", "status", "--json", "L"], tmp_path).stdout)
    finally:
        end_run_and_its_job(proc, job)
    step = next(line for line in text.splitlines() if line.startswith("step:"))
    assert step.split(None, 1)[1].startswith("1 (running; 0 ended) of max "), text
    assert (doc["running_step"], doc["step_index"], doc["running_now"]) == (1, 0, True)
    after = json.loads(vtcode(["loop", "status", "--json", "L"], tmp_path).stdout)
    assert after["running_step"] is None  # nobody runs it now: interrupted, not running


def test_schema_list_columns_line_up(tmp_path: Path) -> None:
    rows = vtcode(["schema", "list"], tmp_path).stdout.splitlines()
    assert len(rows) > 5
    titles = {len(re.match(r"\S+\s+\S+\s+", row).group(0)) for row in rows}  # type: ignore[union-attr]
    assert len(titles) == 1, rows  # every title starts in the same column


def test_usage_errors_have_no_padded_lines(tmp_path: Path) -> None:
    proc = vtcode(["exec", "--bogus"], tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "Usage: vtcode exec [OPTIONS] [PROMPT|-] | resume (SESSION_ID|--last) [PROMPT]",
        "Try 'vtcode exec --help' for help.",
        "",
        "Error: No such option '--bogus'.",
    ]
    assert all(line == line.rstrip() for line in proc.stderr.splitlines())


def test_html_duration_adds_up_the_runs_and_the_page_is_0644(tmp_path: Path) -> None:
    """Two runs with a pause between them: Duration is their sum, the wall time beside it. The
    page is 0644 (a CI artifact server reads it as another user), 0600 with --private."""
    script = str(SCRIPTS / "scenario-success.toml")
    for args in (["--session-id", "two", "go"], ["resume", "two", "again"]):
        proc = vtcode(["exec", "-q", "--script", script, *args], tmp_path)
        assert proc.returncode == 0, proc.stderr
    report = build_report(tmp_path, "two")
    runs = [r.duration_s for r in report.runs]
    assert len(runs) == 2 and all(d is not None for d in runs)
    assert report.duration_s == sum(runs)  # type: ignore[arg-type]
    # the second run started a process later: the wall time holds that pause, the sum does not
    assert report.wall_s is not None and report.wall_s > report.duration_s
    page = tmp_path / "page.html"
    proc = vtcode(["sessions", "show", "two", "--html", str(page)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert page.stat().st_mode & 0o777 == 0o644
    assert f">{fmt_duration(report.duration_s)}<" in page.read_text()
    assert "sum of 2 runs, wall " in page.read_text()
    private = tmp_path / "private.html"
    proc = vtcode(["sessions", "show", "two", "--html", str(private), "--private"], tmp_path)
    assert proc.returncode == 0 and private.stat().st_mode & 0o777 == 0o600
    bad = vtcode(["sessions", "show", "two", "--private"], tmp_path)
    assert bad.returncode == 2 and "--private applies to --html" in bad.stderr


def test_a_recovery_that_grew_the_history_is_not_called_compaction(tmp_path: Path) -> None:
    """A transient failure on a 3-message history: the recovery adds a summary (3 -> 5). The
    progress said `[COMPACT] 3 -> 5 messages`."""
    proc = vtcode(
        ["-c", "agent.task_retry_backoff_secs=0", "exec", "--session-id", "rec", "--script",
         str(SCRIPTS / "context-recovery.toml"), "go"],
        tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "[COMPACT]" not in proc.stderr
    line = next(ln for ln in proc.stderr.splitlines() if ln.startswith("[CONTEXT]"))
    assert line == (
        "[CONTEXT] recovery/local: nothing older to compact; a summary was added (3 -> 5 messages)"
    )
    shown = vtcode(["sessions", "show", "rec"], tmp_path).stdout
    assert "summary added, nothing older to compact (recovery, local): 3 -> 5" in shown
    assert "\ncompaction (" not in shown
