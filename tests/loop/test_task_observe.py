"""A compact run's first step: the commands its task says to run, and the files it asks for
(loop/task_observe.py, tools/salient.py; docs/harness.md "Small models").

Through the real CLI against a llama.cpp-shaped server: the command runs in vtcode's own
executor before the first request (recorded as verification items), its output (with the
error lines of a long one) is in that request after the task, and a run that stops before a
new file the task asks for exists is told so once. The commands are real processes.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from tests.conftest import ScriptedReply, SSEServer
from tests.exec_support import (
    SESSION,
    canonical_snapshot,
    process_running,
    raw_events,
    spawn_vtcode,
    vtcode,
    wait_for_path,
)
from tests.hang_check import run_python
from tests.loop.test_text_tool_calls_cli import _config, chat_sse
from tests.loop.test_text_tool_calls_cli import _exec as exec_local
from vtcode.loop.task_checks import MAX_CHECK_ROUNDS
from vtcode.loop.task_text import commands_to_observe, files_to_create
from vtcode.tools.salient import salient_lines

F = "```"
# A long log with one ERROR line in its middle, and decoys a lower-case match would count.
JOB = """\
import sys
for i in range(20000):
    if i == 9000:
        print(f"t{i} ERROR worker-3 job {i} failed: checksum mismatch, code E4821")
    elif i % 7 == 0:
        print(f"t{i} INFO no error in batch {i}; errors=0")
    else:
        print(f"t{i} INFO job {i} ok")
"""
TASK = (
    "Run `python3 job.py`. Exactly one of its lines has the level ERROR and ends with a code. "
    "Write that code into a new file answer.txt."
)


def _exec(tmp_path: Path, task: str = TASK) -> tuple[int, list[dict[str, Any]], str]:
    return exec_local(tmp_path, task)


def _workspace(tmp_path: Path, server: SSEServer, model: str = "qwen0.5b", extra: str = "") -> None:
    _config(tmp_path, server, model, extra)
    (tmp_path / "job.py").write_text(JOB)


def _reply(server: SSEServer, *texts: str) -> None:
    for text in texts:
        server.queue(ScriptedReply.sse_bytes(chat_sse(text)))


def _harness(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["item"] for e in events
            if e["type"] == "item.completed" and e["item"]["type"] == "harness"]  # fmt: skip


def _first_task_message(server: SSEServer) -> str:
    """The first request's last message: the files, the task and what the harness observed."""
    content = server.requests[0].json()["messages"][-1]["content"]
    assert isinstance(content, str)
    return content


def test_the_command_the_task_says_to_run_is_run_first_and_its_error_line_shown(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    """qwen0.5b, log-needle (2026-12-06): it answered the prompt's own example code as text,
    having run nothing. Now the first request holds the command's output, and of a long one
    the lines that report an error, which the output's tail does not."""
    _workspace(tmp_path, sse_server)
    _reply(sse_server, f"answer.txt\n{F}\nE4821\n{F}", "Done.")
    code, events, err = _exec(tmp_path)
    assert code == 0 and events[-1]["outcome_code"] == "success", err
    assert (tmp_path / "answer.txt").read_text() == "E4821\n"
    told = _first_task_message(sse_server)
    head, _, observed = told.partition("Output of `python3 job.py`, run before you started:")
    assert head.rstrip().endswith(TASK) and observed, told
    assert "t9000 ERROR worker-3 job 9000 failed: checksum mismatch, code E4821" in observed
    assert "t19998 INFO job 19998 ok" in observed  # the tail
    assert "no error in batch" not in observed.split("report an error")[1]  # no decoy counted
    assert "[exit code 0]" in observed and len(observed) < 5_000
    # The observation is recorded before the first turn, through the executor.
    started = next(i for i, e in enumerate(events) if e["type"] == "turn.started")
    kinds = [(e["item"]["event"], e["item"].get("command")) for e in events[:started]
             if e["type"] == "item.completed"]  # fmt: skip
    assert kinds == [
        ("verification_started", "python3 job.py"),
        ("verification_passed", "python3 job.py"),
    ]
    masked = re.sub(r'"duration_ms": \d+', '"duration_ms": "<ms>"',
                    json.dumps(canonical_snapshot(tmp_path)))  # fmt: skip
    assert json.loads(masked) == snapshot_json


def test_a_failing_command_the_task_names_is_shown_with_its_traceback(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """fix-import's form: "`python3 app.py` fails with an import error"."""
    _config(tmp_path, sse_server, "qwen0.5b")
    (tmp_path / "app.py").write_text("from helpers import slugify\nprint(slugify('A b'))\n")
    _reply(sse_server, "Done.", "Done.", "Done.")
    code, events, _err = _exec(tmp_path, "`python3 app.py` fails with an import error. Fix it.")
    observed = _first_task_message(sse_server).split("run before you started:")[1]
    assert "ModuleNotFoundError: No module named 'helpers'" in observed
    assert "[exit code 1]" in observed
    failed = [h for h in _harness(events) if h["event"] == "verification_failed"]
    assert failed and failed[0]["exit_code"] == 1
    # It failed first, so it runs again when the model stops, like a test: twice it still
    # fails and the model is told; then the run, which did nothing, is never a success.
    assert [h["exit_code"] for h in failed] == [1, 1, 1]
    told = sse_server.requests[1].json()["messages"][-1]["content"]
    assert told.startswith("Nothing has been changed yet. The task's check `python3 app.py`")
    assert code == 1 and events[-1]["outcome_code"] == "unfinished_no_action"


@pytest.mark.parametrize(
    "task",
    [
        "Do not run `python3 job.py`; write 1 into a new file answer.txt.",
        "Write 1 into a new file answer.txt. Afterwards `python3 job.py` must still work.",
        "If it breaks, run `python3 job.py`. Write 1 into a new file answer.txt.",
    ],
)
def test_a_command_the_task_forbids_defers_or_conditions_is_not_run(
    tmp_path: Path, sse_server: SSEServer, task: str
) -> None:
    _workspace(tmp_path, sse_server)
    (tmp_path / "job.py").write_text("open('ran', 'w').write('yes')\n")
    _reply(sse_server, f"answer.txt\n{F}\n1\n{F}", "Done.")
    code, events, err = _exec(tmp_path, task)
    assert code == 0, err
    assert not (tmp_path / "ran").exists()
    assert "run before you started" not in _first_task_message(sse_server)
    assert [h for h in _harness(events) if h["event"].startswith("verification")] == []


def test_a_command_a_rule_denies_is_not_run_and_not_shown(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """The first step goes through the run's permission rules like a model's call."""
    _workspace(tmp_path, sse_server, extra='[permissions]\ndeny = ["exec_command(python3 *)"]')
    _reply(sse_server, f"answer.txt\n{F}\nE4821\n{F}", "Done.")
    code, events, err = _exec(tmp_path)
    assert code == 0, err
    assert "run before you started" not in _first_task_message(sse_server)
    (denied,) = [h for h in _harness(events) if h["event"] == "verification_failed"]
    assert denied["error_category"] == "not_run" and "permission denied" in denied["message"]


def test_a_full_profile_run_observes_nothing(tmp_path: Path, sse_server: SSEServer) -> None:
    """Only the compact harness runs the task's commands first; a larger model decides."""
    _workspace(tmp_path, sse_server, model="qwen2.5-coder-7b")
    (tmp_path / "job.py").write_text("open('ran', 'w').write('yes')\n")
    _reply(sse_server, "The code is E4821.")
    code, events, err = _exec(tmp_path)
    assert code == 0, err
    assert not (tmp_path / "ran").exists() and _harness(events) == []


def test_an_answer_without_the_file_the_task_asks_for_is_told_once(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """The code as text, not in answer.txt: one nudge naming the file; then the file."""
    _workspace(tmp_path, sse_server)
    _reply(sse_server, "E4821", f"answer.txt\n{F}\nE4821\n{F}", "Done.")
    code, events, err = _exec(tmp_path)
    assert code == 0 and events[-1]["outcome_code"] == "success", err
    (nudge,) = [h for h in _harness(events) if h["event"] == "continuation_started"]
    assert nudge["error_category"] == "missing_file"
    assert nudge["message"].startswith("The task asks for answer.txt, and the folder has no")
    assert sse_server.requests[1].json()["messages"][-1]["content"] == nudge["message"]
    assert (tmp_path / "answer.txt").read_text() == "E4821\n"


def test_a_run_that_still_lacks_the_file_after_being_told_is_not_a_success(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _workspace(tmp_path, sse_server)
    _reply(sse_server, "E4821", "The code is E4821.")
    code, events, _err = _exec(tmp_path)
    assert code == 1 and events[-1]["outcome_code"] == "unfinished_no_action"
    assert len(sse_server.requests) == 2 and not (tmp_path / "answer.txt").exists()


def test_an_answer_that_echoes_the_tool_results_is_not_a_success(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """qwen0.5b, fix-import (2026-12-07): a write that changed nothing, then the tool's result
    back in `<tool_response>` tags as its answer, was reported as success."""
    _config(tmp_path, sse_server, "qwen0.5b")
    (tmp_path / "app.py").write_text("print(1)\n")
    echo = "<tool_response>\nunchanged: app.py already holds exactly this content\n</tool_response>"
    _reply(sse_server, f"app.py\n{F}\nprint(1)\n{F}", echo, echo)
    code, events, _err = _exec(tmp_path, "Make app.py print 2 instead of 1.")
    nudges = [h["error_category"] for h in _harness(events) if h["event"] == "continuation_started"]
    assert nudges == ["no_action"]
    assert code == 1 and events[-1]["outcome_code"] == "unfinished_no_action"


def test_steps_handed_back_to_the_user_are_not_the_work_done(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """qwen0.5b, rename-symbol (evals of 2026-12-07): "you can follow these steps: 1. Open
    shop/cart.py ..." with nothing done, and the task's own commands still passing (nothing had
    changed), was reported as success three times. Told once; the rename then lands."""
    _config(tmp_path, sse_server, "qwen0.5b")
    (tmp_path / "cart.py").write_text("def calc_total(xs):\n    return sum(xs)\n")
    steps = (
        "To rename the function `calc_total` to `compute_total`, you can follow these steps:\n\n"
        "1. Open the `cart.py` file.\n2. Rename the function definition to `compute_total`."
    )
    fixed = "def compute_total(xs):\n    return sum(xs)\n"
    _reply(sse_server, steps, f"cart.py\n{F}\n{fixed}{F}", "Both files are written.")
    code, events, err = _exec(
        tmp_path, "Rename the function calc_total in cart.py to compute_total."
    )
    nudges = [h["error_category"] for h in _harness(events) if h["event"] == "continuation_started"]
    assert nudges == ["no_action"]
    assert (tmp_path / "cart.py").read_text() == fixed
    assert code == 0 and events[-1]["outcome_code"] == "success", err


@pytest.mark.parametrize(
    ("task", "commands"),
    [
        ("Run `python3 job.py`. Then write the code.", ["python3 job.py"]),
        ("Build it by running `python3 build.py`.", ["python3 build.py"]),
        (
            "Run them with `python3 -m unittest test_duration`, fix it.",
            ["python3 -m unittest test_duration"],
        ),
        ("`python3 app.py` fails with an import error.", ["python3 app.py"]),
        ("Fix it so that `python3 -m unittest test_sum` passes.", ["python3 -m unittest test_sum"]),
        ("Run `BUILD_MODE=release python3 build.py`.", ["BUILD_MODE=release python3 build.py"]),
        ("Run `./configure` and `make` and `npm test` and `go test`.", ["./configure", "make"]),
        # not commands: code, options, output
        ("Run `x = 1` and `to_roman(4)` and `--shout`.", []),
        ("`python3 greet.py Ann` prints Hello, Ann!", []),  # what it should print: not now
        # forbidden, deferred, conditional
        ("Do not run `make deploy`.", []),
        ("Never execute `rm -rf build`.", []),
        ("Afterwards `python3 main.py` and `python3 -m unittest t` must still work.", []),
        ("Fix it, then run `python3 check.py`.", []),
        ("If the build fails, run `git reset --hard`.", []),
        ("When you are done, run `make publish`.", []),
        ("Once fixed, `pytest` must pass.", []),
        ("Run `python3 a.py`. Fix b.py; afterwards run `python3 b.py`.", ["python3 a.py"]),
        ("`python3 a.py` and `python3 a.py` fail.", ["python3 a.py"]),
        ("no backticks: run python3 job.py", []),
        # a failure stated without backticks, at a sentence's start
        ("python3 app.py crashes. Can you fix it?", ["python3 app.py"]),
        ("It worked. node server.js --port 80 fails on start.", ["node server.js --port 80"]),
        ("Make python3 app.py print hi.", []),
        ("Do not run it. python3 a.py crashes.", ["python3 a.py"]),
    ],
)
def test_which_commands_a_task_says_to_run_now(task: str, commands: list[str]) -> None:
    assert commands_to_observe(task) == commands


@pytest.mark.parametrize(
    ("task", "files"),
    [
        ("Write the number into a new file answer.txt (only the number).", ["answer.txt"]),
        ("Create a file named hello.txt containing Hi.", ["hello.txt"]),
        ("Create a Python script fizzbuzz.py that prints.", ["fizzbuzz.py"]),
        ("Create roman.py with a function to_roman(n).", ["roman.py"]),
        ("Write a bash script count_lines.sh that counts.", ["count_lines.sh"]),
        ("Move them into a new module rows.py.", ["rows.py"]),
        ("The build must produce out/version.txt.", []),  # a command's output: not to be written
        ("Save it to a new file `out dir.txt`.", []),  # a name with a space is not read
        ("Create app.py again.", []),  # exists already: nothing to wait for
        ("Do not create notes.txt.", []),
        ("Fix the import; do not create new files.", []),
        ("Create a list of names.", []),  # no file name
        ("Write it into a new file ../escape.txt.", []),
        # as users write it: "to", "at", or the name right after the verb
        ("Write just the version number to answer.txt.", ["answer.txt"]),
        ("Put the file at .github/CODEOWNERS with two rules.", [".github/CODEOWNERS"]),
        ("Write ext_count.sh, a bash script that counts.", ["ext_count.sh"]),
        ("Write the answer to the question in answer.md, please.", ["answer.md"]),
        ("Write the total to stdout.", []),
        ("Write the fix in app.py.", []),  # there already: the work's file
        ("Write it to a file.", []),
        ("Write to e.g. the log.", []),
        ("Write it to ../up.txt.", []),
    ],
)
def test_which_new_files_a_task_asks_for(tmp_path: Path, task: str, files: list[str]) -> None:
    (tmp_path / "app.py").write_text("x\n")
    assert files_to_create(task, tmp_path) == files


def test_error_lines_are_the_strong_markers_only(tmp_path: Path) -> None:
    log = tmp_path / "out.txt"
    lines = [
        "INFO job ok (errors=0)", "INFO no error in batch 3", "warning: deprecated",
        "2026 ERROR job 9 failed: code E1", "Traceback (most recent call last):",
        "ValueError: bad value", "error: could not compile `x`", "FAILED (failures=1)",
        "ERRORS", "FAILURE", "ok: FATAL is a word here FATAL",
    ]  # fmt: skip
    log.write_text("\n".join(lines) + "\n")
    found = salient_lines(log)
    assert found.lines == (
        "2026 ERROR job 9 failed: code E1", "Traceback (most recent call last):",
        "ValueError: bad value", "error: could not compile `x`", "FAILED (failures=1)",
        "ok: FATAL is a word here FATAL",
    )  # fmt: skip
    assert found.total == 6
    assert salient_lines(log, shown="ValueError: bad value\n", limit=2).lines == (
        "2026 ERROR job 9 failed: code E1", "Traceback (most recent call last):",
    )  # fmt: skip
    long = tmp_path / "long.txt"
    long.write_text("ERROR " + "x" * 5_000 + "\n")
    (line,) = salient_lines(long).lines
    assert len(line) < 220 and line.endswith(" [...]")


def test_error_lines_are_never_read_through_a_link_or_from_a_fifo(tmp_path: Path) -> None:
    """The spool is in the workspace, where a command could replace it."""
    secret = tmp_path / "secret.txt"
    secret.write_text("ERROR secret\n")
    (tmp_path / "link.txt").symlink_to(secret)
    assert salient_lines(tmp_path / "link.txt").lines == ()
    os.mkfifo(tmp_path / "fifo")  # never opened for a blocking read: this returns at once
    assert salient_lines(tmp_path / "fifo").lines == ()
    assert salient_lines(tmp_path / "missing").lines == ()


def test_error_lines_of_a_huge_output_are_read_in_bounded_time(tmp_path: Path) -> None:
    """A 40 MiB single line and a million marked lines: linear, and the scan stops at its cap."""
    code = (
        "import sys\nfrom pathlib import Path\nfrom vtcode.tools.salient import salient_lines\n"
        "p = Path(sys.argv[1])\np.write_bytes(b'E' * (40 << 20))\nsalient_lines(p)\n"
        "p.write_bytes(b'ERROR x\\n' * 1_000_000)\nf = salient_lines(p)\n"
        "assert len(f.lines) == 1 and f.total == 1_000_000, f\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "big")], timeout=60,
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr


def test_the_task_and_block_readers_take_linear_time_on_hostile_text() -> None:
    """Long words, long runs of backticks and names, a block of one huge line: each reader
    finishes (a hang check, not a timing assertion) and finds what it should."""
    code = """
from vtcode.loop.task_text import commands_to_observe, files_to_create, stated_outputs
from vtcode.loop.excerpts import Excerpt, find_excerpts, splice
from vtcode.tools.salient import _MARKER
from pathlib import Path
long = "a_" * 200_000
task = ("Run `python3 x.py` " + "create " + long + " into a new file " + long + ".txt "
        + ". `python3 y.py` prints " + "Z" * 300_000 + " " + "`" * 100_000)
print(commands_to_observe(task), files_to_create(task, Path("/nonexistent")),
      len(stated_outputs(task)))
text = "\\n".join(["K_%d = 1" % i for i in range(20_000)]) + "\\n"
found = find_excerpts("Set K_19999 " + long, ["a.py"], {"a.py": text}.get)
print(len(found), splice(found, "a.py", text, "K_19999" + " " * 300_000 + "= 2\\n") is None)
print(_MARKER.search(b"A" + b"x" * 300_000 + b"Error") is None)
"""
    out = run_python(code).stdout.split("\n")
    assert out[0] == "['python3 x.py'] [] 1"
    assert out[1] == "1 True"  # a name padded past what a setting line may hold: no splice
    assert out[2] == "True"


def test_a_signal_while_the_first_command_runs_ends_the_run_cancelled_and_the_command_too(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """The first step runs before any model request; SIGTERM then still ends the run at once
    (130, `cancelled`), with the command's process gone and no request made."""
    _config(tmp_path, sse_server, "qwen0.5b")
    # Inside the sandbox's PID namespace the command's own pid means nothing on the host: it
    # is found by a token on its command line.
    token = f"observe-{os.getpid()}-{time.monotonic_ns()}"
    (tmp_path / "slow.py").write_text("import time\nopen('started', 'w')\ntime.sleep(120)\n")
    proc = spawn_vtcode(
        ["exec", "--json", "--session-id", SESSION, "--provider", "local",
         f"Run `python3 slow.py {token}` and tell me what it prints."],
        tmp_path,
        env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""},
    )  # fmt: skip
    try:
        wait_for_path(tmp_path / "started", proc, "slow.py")
        (child,) = _pids_with(token)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    events = raw_events(out)
    assert events[-1]["type"] == "thread.completed" and events[-1]["subtype"] == "cancelled"
    assert sse_server.requests == []
    (stopped,) = [h for h in _harness(events) if h["event"] == "verification_failed"]
    assert stopped["error_category"] == "not_run"  # cancelled: no failure of the work
    deadline = time.monotonic() + 30
    while process_running(child):  # the sandbox's process group is torn down with the run
        assert time.monotonic() < deadline, "slow.py outlived the cancelled run"
        time.sleep(0.01)


def _pids_with(token: str) -> list[int]:
    """Host pids of the processes whose command line holds `token`, vtcode's own excluded."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"python3") and any(token.encode() == a for a in argv):
            found.append(int(entry.name))
    return found


def test_the_file_named_after_an_echo_of_the_nudge_is_written(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """qwen0.5b, create-file (2026-12-07): told hello.txt was missing, it answered with the
    nudge's own words, then ": hello.txt" and the block on the next lines."""
    _config(tmp_path, sse_server, "qwen0.5b")
    echo = "the path on a line by itself, then the whole content in a fenced code block: hello.txt"
    _reply(sse_server, "Hi there", f"{echo}\n{F}\nHi there\n{F}", "Done.")
    code, events, err = _exec(
        tmp_path, "Create a file named hello.txt containing Hello from vtcode"
    )
    assert code == 0 and events[-1]["outcome_code"] == "success", err
    assert (tmp_path / "hello.txt").read_text() == "Hi there\n"


def test_a_command_that_failed_first_must_work_when_the_model_stops(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """qwen1.5b, recover-failing-command (2026-12-07): it ran `export BUILD_MODE=release`
    alone (a fresh shell each command: nothing carried over), said "Done.", and the run was a
    success with the build never run. The command the task said to run failed first, so it
    runs again at the end; the lone export's result says it changes nothing."""
    _config(tmp_path, sse_server, "qwen0.5b")
    (tmp_path / "build.py").write_text(
        "import os, sys\nif os.environ.get('MODE') != 'release':\n"
        "    sys.exit('error: run it as MODE=release python3 build.py')\n"
        "open('out.txt', 'w').write('built')\n"
    )
    _reply(sse_server, f"{F}sh\nexport MODE=release\n{F}", "Done.",
           f"{F}sh\nMODE=release python3 build.py\n{F}", "Done.")  # fmt: skip
    code, events, err = _exec(tmp_path, "Build the project by running `python3 build.py`.")
    assert code == 0 and events[-1]["outcome_code"] == "success", err
    assert (tmp_path / "out.txt").read_text() == "built"
    export_result = sse_server.requests[1].json()["messages"][-1]["content"]
    assert "each command runs in a fresh shell" in export_result
    told = sse_server.requests[2].json()["messages"][-1]["content"]
    assert told.startswith("The task's check `python3 build.py` exited 1")
    assert "run it as MODE=release" in told
    # not a test: its output may say how to run it (qwen1.5b rewrote build.py three times
    # when told only to fix the cause in the files, 2026-12-07)
    assert "Do what its output says. To run a command, write it in a ```sh block" in told


def test_a_first_step_output_never_carries_a_known_secret_or_an_escape_sequence(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """The first step's output is logged and shown like any command's: a secret vtcode knows
    (a provider key in its environment) is redacted in the log and on stderr, the environment's
    secrets never reach the command, and escape sequences never reach the terminal."""
    _config(tmp_path, sse_server, "qwen0.5b")
    secret = "sk-first-step-secret-0123456789abcdef"
    token = "tok-9f8e7d6c5b4a"
    (tmp_path / "job.py").write_text(
        "import os, sys\n"
        f"print('leak={secret}')\n"
        "print('env=' + os.environ.get('MY_SERVICE_TOKEN', 'absent'))\n"
        "print('\\x1b]0;title\\x07\\x1b[31mERROR red\\x1b[0m')\n"
        "sys.exit(1)\n"
    )
    # "Done." to each end check of the still-failing command (at most MAX_CHECK_ROUNDS): with a
    # reply short, the run waited out the provider's retries of the test server's 500.
    _reply(sse_server, f"answer.txt\n{F}\n1\n{F}", *["Done."] * (MAX_CHECK_ROUNDS + 1))
    proc = vtcode(
        ["exec", "--json", "--session-id", SESSION, "--provider", "local",
         "Run `python3 job.py`. Write 1 into a new file answer.txt."],
        tmp_path,
        env={"OPENAI_API_KEY": secret, "OPENAI_BASE_URL": "", "MY_SERVICE_TOKEN": token},
    )  # fmt: skip
    log = (tmp_path / ".vtcode" / "sessions" / SESSION / "events.jsonl").read_text()
    failed = [h for h in _harness(raw_events(proc.stdout)) if h["event"] == "verification_failed"]
    assert failed and "leak=[REDACTED]" in failed[0]["message"]
    assert "env=absent" in failed[0]["message"]  # secret-named variables are withheld
    for text in (proc.stdout, proc.stderr, log):
        assert secret not in text and token not in text
    assert "\x1b" not in proc.stderr and "ERROR red" in proc.stderr
