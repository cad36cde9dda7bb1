"""`vtcode eval` end to end on the replay provider: outcomes and failure classes, the result
document against its schema and each run's own log, exit codes, and the `--agent-cmd` agent."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from tests.eval.support import WRITE_HELLO, replay_task, runner_suite, write_task
from tests.exec_support import vtcode
from vtcode.schemas import fast_validator

VOLATILE = {"wall_seconds", "seconds", "started_at", "finished_at", "created_at"}


def _eval(args: list[str], cwd: Path, timeout: float = 120) -> tuple[int, str, str]:
    proc = vtcode(["eval", *args], cwd, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


def _masked(value: Any, root: Path) -> Any:
    """The document with what varies run to run masked: times, the temp root, the eval id."""
    if isinstance(value, dict):
        return {
            k: "<volatile>" if k in VOLATILE and v is not None else _masked(v, root)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_masked(v, root) for v in value]
    if isinstance(value, str):
        text = value.replace(str(root), "<root>")
        text = re.sub(r"eval-\d{8}T\d{6}Z-[0-9a-f]{6}", "<eval-id>", text)
        return re.sub(r"\d+\.\d+s", "<secs>", text)
    if isinstance(value, float) and not isinstance(value, bool):
        return value
    return value


@pytest.fixture(scope="module")
def outcome_eval(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict[str, Any], dict[str, str]]:
    root = tmp_path_factory.mktemp("eval")
    expected = runner_suite(root / "suite")
    rc, out, err = _eval(["suite", "--jobs", "2", "--json", "--id", "e1"], root)
    assert rc == 0, err
    return root, json.loads(out), expected


def test_each_outcome_gets_its_failure_class(
    outcome_eval: tuple[Path, dict[str, Any], dict[str, str]],
) -> None:
    _, doc, expected = outcome_eval
    got = {r["task_id"]: r.get("failure") or "" for r in doc["runs"]}
    assert got == expected
    by = {r["task_id"]: r for r in doc["runs"]}
    assert by["pass"]["passed"] and by["pass"]["exit_code"] == 0
    assert by["timeout"]["timed_out"] and by["timeout"]["wall_seconds"] < 30
    assert by["timeout"]["outcome_subtype"] == "cancelled"  # SIGTERM: vtcode closed its session
    assert by["turn-limit"]["outcome_subtype"] == "error_max_turns"
    assert by["crash"]["exit_code"] == 2 and "txet" in by["crash"]["error"]
    assert by["protected"]["protected_changed"] == ["keep.txt"]
    assert by["protected"]["check"]["passed"]  # the check passed, the protected file decides
    assert doc["complete"] and doc["k"] == 1
    [summary] = doc["summary"]
    assert (summary["runs"], summary["passed"]) == (9, 1)
    assert summary["pass_at_1"] == round(1 / 9, 4)
    assert summary["prompt_tokens"] == sum(r.get("prompt_tokens", 0) for r in doc["runs"])


def test_the_document_validates_against_the_published_schema(
    outcome_eval: tuple[Path, dict[str, Any], dict[str, str]],
) -> None:
    _, doc, _ = outcome_eval
    validator = fast_validator("eval-report")
    errors = [e.message for e in validator.iter_errors(doc)]
    assert errors == []


def test_every_record_agrees_with_its_own_session_log(
    outcome_eval: tuple[Path, dict[str, Any], dict[str, str]],
) -> None:
    root, doc, _ = outcome_eval
    checked = 0
    for run in doc["runs"]:
        if run.get("log") is None:
            assert run.get("failure") == "agent_crashed"
            continue
        log = Path(run["log"])
        assert log.is_relative_to(root / ".vtcode" / "evals" / "e1" / "runs")
        proc = vtcode(["validate", str(log)], root)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        events = [json.loads(line)["event"] for line in log.read_text().splitlines()]
        [done] = [e for e in events if e["type"] == "thread.completed"]
        assert run["outcome_subtype"] == done["subtype"]
        assert run["outcome_code"] == done["outcome_code"]
        assert run["turns"] == done["num_turns"]
        assert run["prompt_tokens"] == done["usage"]["input_tokens"]
        assert run["completion_tokens"] == done["usage"]["output_tokens"]
        assert run.get("cost_usd") == done.get("total_cost_usd")
        assert run["model_requests"] == sum(e["type"] == "turn.started" for e in events)
        ws = Path(run["workspace"])
        show = vtcode(["-C", str(ws), "sessions", "show", run["session_id"]], root)
        assert show.returncode == 0 and run["session_id"] in show.stdout
        checked += 1
    assert checked == 8


def test_the_document_snapshot(
    outcome_eval: tuple[Path, dict[str, Any], dict[str, str]], snapshot_json: SnapshotAssertion
) -> None:
    root, doc, _ = outcome_eval
    masked = _masked(doc, root)
    # A run cancelled mid-request reports the request's estimated size, which moves with the
    # system prompt: masked here, checked against its own log in the test above.
    estimated = ("prompt_tokens", "first_prompt_tokens", "mean_prompt_tokens")
    for entry in masked["runs"] + masked["tasks"]:
        entry["error"] = "<stderr>" if entry.get("error") else entry.get("error")
        if entry["task_id"] == "timeout":
            entry.update({k: "<estimated>" for k in estimated if k in entry})
    for summary in masked["summary"]:
        summary["prompt_tokens"] = "<sum>"
    for summary in masked["tasks"] + masked["summary"]:
        for key in ("median_wall_seconds", "median_wall_seconds_solved"):
            if summary.get(key) is not None:
                summary[key] = "<volatile>"
    assert masked == snapshot_json


def test_the_checker_files_stay_out_of_the_kept_workspace(
    outcome_eval: tuple[Path, dict[str, Any], dict[str, str]],
) -> None:
    _, doc, _ = outcome_eval
    for run in doc["runs"]:
        ws = Path(run["workspace"])
        assert (ws / "keep.txt").is_file()
        assert not (ws / "check.py").exists() and not (ws / "replay.toml").exists()


def test_a_finished_eval_reruns_nothing_and_reports_the_same(
    outcome_eval: tuple[Path, dict[str, Any], dict[str, str]],
) -> None:
    root, doc, _ = outcome_eval
    records = sorted((root / ".vtcode/evals/e1/runs").glob("*.json"))
    before = {p: p.stat().st_mtime_ns for p in records}
    rc, out, err = _eval(["--resume", "e1", "--json"], root)
    assert rc == 0, err
    assert json.loads(out) == doc
    assert {p: p.stat().st_mtime_ns for p in records} == before


def test_min_pass_rate_and_html(
    outcome_eval: tuple[Path, dict[str, Any], dict[str, str]],
) -> None:
    root, _, _ = outcome_eval
    rc, _, err = _eval(["--resume", "e1", "--min-pass-rate", "0.1", "-q"], root)
    assert rc == 0, err
    with_env = vtcode(["eval", "--resume", "e1", "-q"], root, env={"VTCODE_PROVIDER": "openai"})
    assert with_env.returncode == 0, with_env.stderr  # the environment is not the command line
    rc, out, err = _eval(["--resume", "e1", "--min-pass-rate", "0.5"], root)
    assert rc == 1
    assert "below --min-pass-rate 0.5" in err
    assert "pass@1" in out and "no-tool" in out
    rc, _, err = _eval(["--resume", "e1", "--min-pass-rate", "1.5"], root)
    assert rc == 2 and "1.5" in err
    page = root / "report.html"
    rc, _, err = _eval(["--resume", "e1", "--html", str(page), "-q"], root)
    assert rc == 0, err
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<script" not in html
    assert "pass@1 per task" in html and "unparsable_tool_call" in html and "<svg" in html
    rc, out, _ = _eval(["--resume", "e1", "--html", "-", "-q"], root)
    assert rc == 0 and out.startswith("<!DOCTYPE html>") and out.endswith("</html>\n")
    rc, _, err = _eval(["--resume", "e1", "--html", "-", "--json"], root)
    assert rc == 2 and "choose one" in err


def test_agent_cmd_runs_a_real_process_in_the_workspace(tmp_path: Path) -> None:
    replay_task(tmp_path / "suite", "pass", WRITE_HELLO)
    agent = (
        'python3 -c \'import pathlib, sys; pathlib.Path(sys.argv[2], "hello.txt")'
        '.write_text("hello" if "hello" in sys.argv[1] else "no")\' {prompt} {workspace}'
    )
    rc, out, err = _eval(
        ["suite", "--agent", "vtcode", "--agent-cmd", agent, "--json", "-k", "2"], tmp_path
    )
    assert rc == 0, err
    doc = json.loads(out)
    runs = {(r["agent"], r["repetition"]): r for r in doc["runs"]}
    assert len(runs) == 4 and all(r["passed"] for r in runs.values())
    cmd = runs[("cmd", 0)]
    assert cmd.get("turns") is None and cmd["exit_code"] == 0 and cmd.get("log") is None
    assert [s["agent"] for s in doc["summary"]] == ["vtcode", "cmd"]
    assert doc["agents"][1]["command"] == agent
    rc, out, _ = _eval(["suite", "--agent-cmd", "exit 3 # {prompt}", "--json"], tmp_path)
    assert rc == 0
    [run] = json.loads(out)["runs"]
    assert (run["failure"], run["exit_code"]) == ("agent_crashed", 3)


def test_usage_errors_exit_2_with_a_located_message(tmp_path: Path) -> None:
    replay_task(tmp_path / "suite", "make-hello", WRITE_HELLO)
    rc, _, err = _eval(["suite", "--task", "make-helo"], tmp_path)
    assert rc == 2 and "did you mean 'make-hello'?" in err
    rc, _, err = _eval(["suite", "--tag", "nope"], tmp_path)
    assert rc == 2 and "no task matches" in err
    rc, _, err = _eval([], tmp_path)
    assert rc == 2 and "no SUITE" in err
    rc, _, err = _eval(["--resume", "nope"], tmp_path)
    assert rc == 2 and "no eval 'nope'" in err
    rc, _, err = _eval(["--resume", "x", "suite"], tmp_path)
    assert rc == 2 and "drop SUITE" in err
    rc, _, err = _eval(["suite", "--id", "../x"], tmp_path)
    assert rc == 2 and "invalid eval id" in err
    write_task(
        tmp_path / "bad", "t", 'id = "t"\nprompt = "p"\nchek = ["true"]\n[setup]\nfiles = {}\n'
    )
    rc, _, err = _eval(["bad"], tmp_path)
    assert rc == 2
    assert f"{tmp_path / 'bad' / 't' / 'task.toml'}:3:1" in err and "did you mean 'check'?" in err
    assert "Traceback" not in err
    assert not (tmp_path / ".vtcode" / "evals").exists() or not any(
        (tmp_path / ".vtcode" / "evals").iterdir()
    )


def test_an_existing_id_with_another_plan_is_refused(tmp_path: Path) -> None:
    replay_task(tmp_path / "suite", "make-hello", WRITE_HELLO)
    assert _eval(["suite", "--id", "same", "-q"], tmp_path)[0] == 0
    rc, _, err = _eval(["suite", "--id", "same", "-k", "2"], tmp_path)
    assert rc == 2 and "k differ" in err and "--resume same" in err
    assert _eval(["suite", "--id", "same", "-q"], tmp_path)[0] == 0  # same plan: resumes


def test_a_missing_peer_names_how_to_install_it(tmp_path: Path) -> None:
    replay_task(tmp_path / "suite", "make-hello", WRITE_HELLO)
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "python3").symlink_to(os.path.realpath("/usr/bin/python3"))
    for agent in ("codex", "claude"):
        proc = vtcode(["eval", "suite", "--agent", agent], tmp_path, env={"PATH": str(bare)})
        assert proc.returncode == 2, proc.stderr
        assert f"`{agent}` is not on PATH" in proc.stderr
        assert "npm install -g @openai/codex @anthropic-ai/claude-code" in proc.stderr


def test_what_a_hostile_agent_leaves_is_kept_across_file_systems_without_blocking(
    tmp_path: Path,
) -> None:
    """The runs work under TMPDIR; with TMPDIR on another file system (tmpfs) the run folder
    is copied, and a FIFO, a dangling symlink and a deep tree the agent made must neither
    block nor break keeping it."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("no second file system for TMPDIR")
    replay_task(tmp_path / "suite", "pass", WRITE_HELLO)
    agent = (
        "mkfifo pipe && ln -s /nonexistent dangling && mkdir -p a/b/c/d && echo x > a/b/c/d/f "
        "&& echo hello > hello.txt # {prompt}"
    )
    temp = Path(tempfile.mkdtemp(dir=shm))
    try:
        proc = vtcode(
            ["eval", "suite", "--agent-cmd", agent, "--json"],
            tmp_path,
            env={"TMPDIR": str(temp)},
            timeout=120,
        )
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    assert proc.returncode == 0, proc.stderr
    [run] = json.loads(proc.stdout)["runs"]
    assert run["passed"], run
    ws = Path(run["workspace"])
    assert stat.S_ISFIFO(os.lstat(ws / "pipe").st_mode)
    assert (ws / "dangling").is_symlink() and (ws / "a/b/c/d/f").read_text() == "x\n"


def test_an_agent_that_swaps_its_workspace_for_a_link_gets_nothing_written_there(
    tmp_path: Path,
) -> None:
    """The runner checks the workspace folder itself before copying checker files into it: an
    agent that replaced it with a symlink (here to a folder of the test's) fails its check,
    and nothing of the task lands where the link points. (Inside vtcode's sandbox the agent
    cannot remove the folder at all; this is the case without one.)"""
    replay_task(tmp_path / "suite", "pass", WRITE_HELLO)
    target = tmp_path / "elsewhere"
    target.mkdir()
    agent = f"cd .. && rm -rf workspace && ln -s {target} workspace # {{prompt}}"
    # Unconfined (the sandbox would refuse to remove the folder): the runner's own guard.
    args = ["suite", "--agent-cmd", agent, "--sandbox", "danger-full-access", "--json"]
    proc = vtcode(["eval", *args], tmp_path)
    assert proc.returncode == 0, proc.stderr
    [run] = json.loads(proc.stdout)["runs"]
    assert not run["passed"]
    assert run["failure"] == "protected_changed"  # keep.txt is gone with the folder
    assert "no longer a folder" in run["check"]["output"]
    assert list(target.iterdir()) == []  # no check.py was copied through the link
