"""What `vtcode exec` prints without `--json`, and `-o`, as codex exec / `claude -p` users expect.

Text mode: stdout is the final answer (`thread.completed.result`) and one newline, on success
only; progress is on stderr. `-o/--output-last-message` (old name `--last-message-file`) holds
the answer of a successful run exactly (empty, with a warning, when the model said nothing, as
`codex exec -o` does); after any other outcome its first line is `[vtcode] not an answer:
SUBTYPE: ...`, then the model's last message, never harness text. Progress renders tool
arguments as JSON and a cancelled command as `cancelled`. A new `.vtcode/` carries a
`.gitignore` of `*`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.exec_support import SCRIPTS, SESSION, spawn_vtcode, vtcode, wait_for_path
from vtcode.cli.sinks import NOT_AN_ANSWER_PREFIX, FinalAnswerSink

ANSWER = "Hello from vtcode: nothing in the workspace needed changing."


def _exec(tmp: Path, script: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return vtcode(
        [
            "exec",
            "--session-id",
            SESSION,
            "--script",
            str(SCRIPTS / f"{script}.toml"),
            *extra,
            "go",
        ],
        tmp,
    )


def test_text_mode_stdout_is_exactly_the_answer(tmp_path: Path) -> None:
    proc = _exec(tmp_path, "scenario-success")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ANSWER + "\n"
    # the progress (which repeats the answer as [MESSAGE]/[SUMMARY]) stays on stderr
    assert "[OUTCOME] success" in proc.stderr


def test_quiet_silences_progress_not_the_answer(tmp_path: Path) -> None:
    proc = _exec(tmp_path, "scenario-success", "-q")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, ANSWER + "\n", "")


def test_json_mode_stdout_has_no_answer_line(tmp_path: Path) -> None:
    proc = _exec(tmp_path, "scenario-success", "--json")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert all(json.loads(line)["type"] for line in lines)
    assert json.loads(lines[-1])["result"] == ANSWER


@pytest.mark.parametrize(
    ("script", "extra", "rc"),
    [
        ("scenario-max-turns", ["--max-turns", "2"], 3),
        ("scenario-provider-fatal", [], 1),
        ("scenario-script-exhausted", [], 1),
    ],
)
def test_a_failed_run_prints_nothing_on_stdout(
    tmp_path: Path, script: str, extra: list[str], rc: int
) -> None:
    proc = _exec(tmp_path, script, *extra)
    assert proc.returncode == rc, proc.stderr
    assert proc.stdout == ""
    assert "[OUTCOME]" in proc.stderr


@pytest.mark.parametrize("flag", ["-o", "--output-last-message", "--last-message-file"])
def test_output_last_message_names(tmp_path: Path, flag: str) -> None:
    out = tmp_path / "last.txt"
    proc = _exec(tmp_path, "scenario-success", "-q", flag, str(out))
    assert proc.returncode == 0, proc.stderr
    assert out.read_text() == ANSWER
    assert proc.stdout == ANSWER + "\n"


def test_output_last_message_to_stdout_is_not_printed_twice(tmp_path: Path) -> None:
    proc = _exec(tmp_path, "scenario-success", "-q", "-o", "-")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ANSWER


def test_o_holds_the_models_last_message_when_the_run_fails(tmp_path: Path) -> None:
    """The provider fails after the model said "Starting.": -o has a header line naming the
    subtype, then that message; never the error text."""
    out = tmp_path / "last.txt"
    proc = _exec(tmp_path, "scenario-provider-fatal", "-q", "-o", str(out))
    assert proc.returncode == 1
    assert out.read_text() == (
        "[vtcode] not an answer: error_during_execution: the run ended without a final answer;"
        " the model's last message follows\nStarting."
    )
    assert "401" not in out.read_text()


def test_o_after_a_turn_limit_stop_is_never_taken_for_an_answer(tmp_path: Path) -> None:
    """Exit 3 used to leave the last interim message (or an empty file) where a script reading
    `-o` after `|| true` expected the answer; a stale answer of an earlier run is replaced."""
    out = tmp_path / "last.txt"
    out.write_text("the answer of an earlier run")
    proc = _exec(tmp_path, "scenario-max-turns", "--max-turns", "2", "-q", "-o", str(out))
    assert proc.returncode == 3
    assert out.read_text() == (
        "[vtcode] not an answer: error_max_turns: the run ended without a final answer\n"
    )
    assert NOT_AN_ANSWER_PREFIX + "error_max_turns" in out.read_text().splitlines()[0]
    assert "wrote an empty" not in proc.stderr and "Traceback" not in proc.stderr


def test_o_is_written_empty_with_a_warning_when_a_successful_model_said_nothing() -> None:
    """Success with no message at all: empty, as `codex exec -o` writes it (the CLI warns)."""
    sink = FinalAnswerSink()
    sink.subtype = "success"
    assert sink.output_file_text() is None


def test_progress_renders_arguments_as_json(tmp_path: Path) -> None:
    proc = _exec(tmp_path, "scenario-tool-loop")
    assert proc.returncode == 0, proc.stderr
    done = [line for line in proc.stderr.splitlines() if line.startswith("[TOOL DONE]")]
    assert done, proc.stderr
    name, outcome, args = done[0].removeprefix("[TOOL DONE] ").split(" ", 2)
    assert (name, outcome) == ("write_file", "success")
    assert json.loads(args)["path"] == "hello.sh"  # JSON, not {'path': ...}


def test_a_cancelled_command_is_shown_cancelled(tmp_path: Path) -> None:
    proc = spawn_vtcode(
        ["exec", "--session-id", SESSION, "--script", str(SCRIPTS / "scenario-cancel.toml"), "go"],
        tmp_path,
    )
    wait_for_path(tmp_path / "started.flag", proc, "the command")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert out == ""
    done = [line for line in err.splitlines() if line.startswith("[TOOL DONE]")]
    assert len(done) == 1, err
    assert done[0].startswith("[TOOL DONE] exec_command cancelled {"), err
    assert json.loads(done[0].split(" ", 4)[4])["command"].startswith("echo sleeping")
    assert "success" not in done[0]


def test_a_new_vtcode_folder_is_ignored_by_git(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    proc = _exec(tmp_path, "scenario-success", "-q")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / ".vtcode" / ".gitignore").read_text().splitlines()[-1] == "*"
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert ".vtcode" not in status.stdout


def test_an_existing_vtcode_folder_is_left_alone(tmp_path: Path) -> None:
    """Only a folder vtcode creates gets the file: a user's own `.vtcode/` is theirs."""
    (tmp_path / ".vtcode").mkdir()
    proc = _exec(tmp_path, "scenario-success", "-q")
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / ".vtcode" / ".gitignore").exists()


def test_resume_last_replays_the_sessions_script(tmp_path: Path) -> None:
    """`exec resume --last` on a replay session plays the script its last run played (it used
    to fall back to the default script, which says "nothing to do"), even from another folder:
    a script given as a relative path is remembered as an absolute one."""
    ws = tmp_path / "ws"
    (ws / "scripts").mkdir(parents=True)
    (ws / "scripts" / "mine.toml").write_text((SCRIPTS / "scenario-success.toml").read_text())
    first = vtcode(["exec", "-q", "--script", "scripts/mine.toml", "hi"], ws)
    assert (first.returncode, first.stdout) == (0, ANSWER + "\n"), first.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    again = vtcode(["-C", str(ws), "exec", "-q", "resume", "--last", "once more"], elsewhere)
    assert (again.returncode, again.stdout) == (0, ANSWER + "\n"), again.stderr
    (session,) = (ws / ".vtcode" / "sessions").glob("session-*")
    runs = [json.loads(x) for x in (session / "artifacts" / "runs.jsonl").read_text().splitlines()]
    assert [(r["prompt"], r["script"]) for r in runs] == [
        ("hi", str(ws / "scripts" / "mine.toml")),
        ("once more", str(ws / "scripts" / "mine.toml")),
    ]
    lines = [json.loads(x)["event"] for x in (session / "events.jsonl").read_text().splitlines()]
    done = [e for e in lines if e["type"] == "thread.completed"]
    assert [d["result"] for d in done] == [ANSWER, ANSWER]
    check = vtcode(["validate", "--strict", str(session / "events.jsonl")], ws)
    assert check.returncode == 0, check.stdout + check.stderr


def test_resume_with_an_explicit_provider_or_script_ignores_the_remembered_one(
    tmp_path: Path,
) -> None:
    first = _exec(tmp_path, "scenario-success", "-q")
    assert first.returncode == 0, first.stderr
    other = tmp_path / "other.toml"
    other.write_text('[[turn]]\ntext = "the other script"\n')
    proc = vtcode(["exec", "-q", "--script", str(other), "resume", SESSION, "next"], tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "the other script\n"), proc.stderr
    # an explicit provider wins too: the replay provider's default script, not the remembered one
    proc = vtcode(["exec", "-q", "--provider", "replay", "resume", "--last", "next"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout not in (ANSWER + "\n", "the other script\n")


def test_a_failed_command_is_not_called_a_success(tmp_path: Path) -> None:
    """Issue 26: the tool output said `"success": true` beside `"exit_code": 3`, and the progress
    printed `exec_command error` then `{"success":true`. The exit status is the outcome now."""
    proc = _exec(tmp_path, "scenario-failing-command", "--json")
    assert proc.returncode == 0, proc.stderr
    outputs = [
        json.loads(line)["item"]
        for line in proc.stdout.splitlines()
        if '"tool_output"' in line and json.loads(line)["type"] == "item.completed"
    ]
    assert len(outputs) == 1, proc.stdout
    assert (outputs[0]["exit_code"], outputs[0]["status"]) == (3, "failed")
    body = json.loads(outputs[0]["output"])
    assert (body["success"], body["exit_code"]) == (False, 3)
    again = tmp_path / "text-mode"
    again.mkdir()
    text = _exec(again, "scenario-failing-command")
    lines = [ln for ln in text.stderr.splitlines() if ln.startswith(("[TOOL DONE]", "[COMMAND]"))]
    assert lines[0].startswith("[TOOL DONE] exec_command error "), text.stderr
    assert lines[1].startswith("[COMMAND] exit 3: "), text.stderr
    assert '"success": true' not in text.stderr and '"success":true' not in text.stderr


def test_a_scripted_model_prints_no_bill(tmp_path: Path) -> None:
    """Issue 26: the shipped demo printed `$0.0370`. A replay script without `pricing` has no
    cost anywhere: no `total_cost_usd` in the log, no `$` in the outcome line."""
    proc = _exec(tmp_path, "demo", "--json")
    assert proc.returncode == 0, proc.stderr
    done = json.loads(proc.stdout.splitlines()[-1])
    assert done["type"] == "thread.completed"
    assert done.get("total_cost_usd") is None
    assert (
        "total_cost_usd"
        not in (tmp_path / ".vtcode/sessions" / SESSION / "events.jsonl").read_text()
    )
    outcome = [ln for ln in proc.stderr.splitlines() if ln.startswith("[OUTCOME]")]
    assert outcome and "$" not in outcome[0], proc.stderr


def test_events_on_an_existing_folder_and_o_on_a_fifo_are_exit_2_before_anything_runs(
    tmp_path: Path,
) -> None:
    """`--events DIR` used to write a file inside DIR and exit 0; `-o FIFO` with no reader ran
    the whole task and then failed. Both are refused first, naming the option."""
    folder = tmp_path / "logs"
    folder.mkdir()
    fifo = tmp_path / "answer.fifo"
    os.mkfifo(fifo)
    for args, option in ((["--events", str(folder)], "--events"), (["-o", str(fifo)], "-o")):
        proc = _exec(tmp_path, "scenario-success", "-q", *args)
        assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
        first = proc.stderr.splitlines()[0]
        assert f": {option}: cannot write here: " in first, proc.stderr
    assert list(folder.iterdir()) == []
    assert not list(tmp_path.glob(".vtcode/sessions/*/events.jsonl"))  # nothing ran
    proc = _exec(tmp_path, "scenario-success", "-q", "--events", f"{folder}/")
    assert proc.returncode == 0, proc.stderr
    assert [p.name.startswith("harness-") for p in folder.iterdir()] == [True]
