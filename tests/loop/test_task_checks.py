"""The test command a task names runs before a compact run ends (loop/task_checks.py).

Through the real CLI against a llama.cpp-shaped server: the command runs in vtcode's own
executor (sandbox and rules as for the model's calls), its result is recorded as harness
verification items, a failure reaches the model with the output's tail, and the rounds are
bounded. The command is real: `python3 -m unittest` on a real test file.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from tests.conftest import ScriptedReply, SSEServer
from tests.exec_support import canonical_snapshot
from tests.loop.test_text_tool_calls_cli import _config, chat_sse
from tests.loop.test_text_tool_calls_cli import _exec as exec_local
from vtcode.loop.task_checks import MAX_CHECK_ROUNDS
from vtcode.loop.task_text import named_test_commands

F = "```"
TASK = "sum_to.py has an off-by-one bug. Fix it so that `python3 -m unittest test_sum` passes."
BUGGY = "def sum_to(n):\n    return sum(range(1, n))\n"
FIXED = "def sum_to(n):\n    return sum(range(n + 1))\n"
TEST = (
    "import unittest\nfrom sum_to import sum_to\n\n\nclass T(unittest.TestCase):\n"
    "    def test_three(self):\n        self.assertEqual(sum_to(3), 6)\n"
)


def _workspace(tmp_path: Path, server: SSEServer) -> None:
    _config(tmp_path, server, "qwen0.5b")
    (tmp_path / "sum_to.py").write_text(BUGGY)
    (tmp_path / "test_sum.py").write_text(TEST)


def _queue_the_fix(server: SSEServer) -> None:
    """The model's two replies of a right fix: sum_to.py as a block, then "Fixed."."""
    server.queue(ScriptedReply.sse_bytes(chat_sse(f"sum_to.py\n{F}\n{FIXED}{F}")))
    server.queue(ScriptedReply.sse_bytes(chat_sse("Fixed.")))


def _exec(tmp_path: Path, task: str = TASK) -> tuple[int, list[dict[str, Any]], str]:
    return exec_local(tmp_path, task)


def _harness(events: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [
        (e["item"]["event"], e["item"].get("exit_code"))
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "harness"
        and e["item"]["event"].startswith("verification")
    ]  # fmt: skip


def test_done_too_early_gets_the_failing_test_output_then_the_fix_passes(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    """qwen0.5b answered "Done." at once on failing-test and fix-off-by-one (vtcode eval,
    2026-12-06): the failure was only seen by running the test. Now the harness runs it."""
    _workspace(tmp_path, sse_server)
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Done.")))
    _queue_the_fix(sse_server)
    code, events, err = _exec(tmp_path)
    assert code == 0 and events[-1]["outcome_code"] == "success", err
    assert (tmp_path / "sum_to.py").read_text() == FIXED
    assert _harness(events) == [
        ("verification_started", None),  # the task's test, run first (loop/task_observe.py)
        ("verification_failed", 1),
        ("verification_started", None),  # and when the model stops
        ("verification_failed", 1),
        ("verification_started", None),  # and after the fix: it passes, the run ends
        ("verification_passed", 0),
    ]
    assert len(sse_server.requests) == 2  # "Fixed." was never asked for
    told = sse_server.requests[1].json()["messages"][-1]["content"]
    assert told.startswith("Nothing has been changed yet. The task's check")
    assert "`python3 -m unittest test_sum` exited 1" in told
    assert "AssertionError: 3 != 6" in told  # the test's own output reaches the model
    # unittest prints its own run time ("Ran 1 test in 0.000s"): masked
    # and the check's duration_ms: masked
    masked = re.sub(r"Ran (\d+) tests? in \d+\.\d+s", r"Ran \1 test in <secs>",
                    json.dumps(canonical_snapshot(tmp_path)))  # fmt: skip
    masked = re.sub(r'"duration_ms": \d+', '"duration_ms": "<ms>"', masked)
    assert json.loads(masked) == snapshot_json


def test_the_rounds_are_bounded_and_a_run_that_never_acted_is_not_a_success(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _workspace(tmp_path, sse_server)
    for _ in range(MAX_CHECK_ROUNDS + 1):
        sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Done.")))
    code, events, _err = _exec(tmp_path)
    failed = [h for h in _harness(events) if h[0] == "verification_failed"]
    assert len(failed) == MAX_CHECK_ROUNDS + 1  # the first run, before the first request
    assert len(sse_server.requests) == MAX_CHECK_ROUNDS + 1
    assert code == 1 and events[-1]["outcome_code"] == "unfinished_no_action"


WRONG = [f"def sum_to(n):\n    return sum(range({k}, n + 1))\n" for k in range(2, 9)]


def test_a_check_that_still_fails_after_the_rounds_ends_the_run_verification_failed(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """qwen0.5b, fix-off-by-one (vtcode eval, 2026-12-07): a wrong fix, the test failing at
    both rounds, then an answer copying the failure message: the run was a success. The
    checks run once more when the rounds are spent, and a failure there ends the run."""
    _workspace(tmp_path, sse_server)
    for wrong in WRONG[: MAX_CHECK_ROUNDS + 1]:  # each a new wrong fix: no loop detected
        sse_server.queue(ScriptedReply.sse_bytes(chat_sse(f"sum_to.py\n{F}\n{wrong}{F}")))
        sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Fixed.")))
    code, events, err = _exec(tmp_path)
    assert code == 1, err
    done = events[-1]
    assert (done["outcome_code"], done["subtype"]) == (
        "verification_failed",
        "error_during_execution",
    )
    assert "result" not in done or done["result"] is None
    failed = [h for h in _harness(events) if h[0] == "verification_failed"]
    # before the first request, after each wrong fix (verified_stop.py), each round, the last
    assert len(failed) == 1 + (MAX_CHECK_ROUNDS + 1) + MAX_CHECK_ROUNDS + 1
    (stop,) = [e["item"] for e in events if e["type"] == "item.completed"
               and e["item"]["type"] == "error"]  # fmt: skip
    assert stop["message"] == (
        "Stopped: the task's check still fails (`python3 -m unittest test_sum`: exit 1, "
        f"after {MAX_CHECK_ROUNDS} rounds of fixes)"
    )
    # the last run was told to no one: no request after it
    assert len(sse_server.requests) == 2 * (MAX_CHECK_ROUNDS + 1)


def test_a_fix_that_lands_after_the_last_round_is_a_success(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _workspace(tmp_path, sse_server)
    for wrong in WRONG[:MAX_CHECK_ROUNDS]:
        sse_server.queue(ScriptedReply.sse_bytes(chat_sse(f"sum_to.py\n{F}\n{wrong}{F}")))
        sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Fixed.")))
    _queue_the_fix(sse_server)
    code, events, err = _exec(tmp_path)
    assert code == 0 and events[-1]["outcome_code"] == "success", err
    assert _harness(events)[-2:] == [("verification_started", None), ("verification_passed", 0)]


def test_a_fix_that_makes_the_failing_test_pass_ends_the_run_there(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """loop/verified_stop.py: the test failed at the start and passes after the fix, so the
    run ends before the model is asked again (a small model's next reply undid right fixes)."""
    _workspace(tmp_path, sse_server)
    _queue_the_fix(sse_server)
    code, events, err = _exec(tmp_path)
    assert code == 0 and events[-1]["outcome_code"] == "success", err
    assert _harness(events) == [
        ("verification_started", None),  # run first: it fails, and the model is shown how
        ("verification_failed", 1),
        ("verification_started", None),  # after the fix
        ("verification_passed", 0),
    ]
    assert "AssertionError: 3 != 6" in sse_server.requests[0].json()["messages"][-1]["content"]
    assert len(sse_server.requests) == 1
    (ended,) = [e["item"] for e in events if e["type"] == "item.completed"
                and e["item"].get("event") == "evaluation_passed"]  # fmt: skip
    assert ended["message"] == (
        "the task's checks pass after this change (`python3 -m unittest test_sum`); "
        "the run ends here"
    )
    assert events[-1]["result"] == f"sum_to.py\n{F}\n{FIXED}{F}"  # the model's last reply


def test_a_task_that_forbids_running_it_or_names_no_test_runs_nothing(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _workspace(tmp_path, sse_server)
    _queue_the_fix(sse_server)
    code, events, err = _exec(tmp_path, "Fix sum_to.py; do not run `python3 -m unittest`.")
    assert code == 0 and _harness(events) == [], err


@pytest.mark.parametrize(
    ("task", "commands"),
    [
        (TASK, ["python3 -m unittest test_sum"]),
        ("Make `pytest -q tests/` pass, then `npm test`.", ["pytest -q tests/", "npm test"]),
        ("Run `go test ./...` and `cargo test` and `make check`.", ["go test ./...", "cargo test"]),
        ("`python -m pytest` fails.", ["python -m pytest"]),
        ("Build it with `python3 build.py`.", []),  # not a test runner: never run for it
        ("Run `python3 job.py | grep ERROR`.", []),
        ("Do not run `pytest`.", []),
        ("Never ever run `npm test` here.", []),
        ("Fix it without running `make test`.", []),
        ("`pytest` and `pytest` again", ["pytest"]),
        ("no backticks: python3 -m unittest", []),
        (
            "The tests should keep passing (python3 -m unittest test_stats).",
            ["python3 -m unittest test_stats"],
        ),  # in parentheses: a command, not prose
        ("Keep them green (pytest -q tests/) and (npm test).", ["pytest -q tests/", "npm test"]),
        ("Do not run pytest (pytest -x).", []),
    ],
)
def test_which_commands_a_task_names_as_its_test(task: str, commands: list[str]) -> None:
    assert named_test_commands(task) == commands


def test_a_check_a_rule_denies_is_not_run_and_the_model_is_not_told_to_fix_it(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """The check goes through the run's permission rules like a model's call: denied, it is
    recorded as not run, and the answer stands (a denial is no failure of the work)."""
    _config(
        tmp_path, sse_server, "qwen0.5b", extra='[permissions]\ndeny = ["exec_command(python3 *)"]'
    )
    (tmp_path / "sum_to.py").write_text(BUGGY)
    (tmp_path / "test_sum.py").write_text(TEST)
    _queue_the_fix(sse_server)
    code, events, err = _exec(tmp_path)
    assert code == 0 and events[-1]["outcome_code"] == "success", err
    denied = [
        e["item"] for e in events
        if e["type"] == "item.completed" and e["item"].get("event") == "verification_failed"
    ]  # fmt: skip
    assert len(denied) == 2  # the first run, and the check when the model stops
    for d in denied:
        assert d["error_category"] == "not_run" and "permission denied" in d["message"]
    assert len(sse_server.requests) == 2


def test_a_question_about_a_failing_test_is_answered_not_checked(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _workspace(tmp_path, sse_server)
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("sum_to stops one short: range(1, n).")))
    code, events, err = _exec(tmp_path, "Why does `python3 -m unittest test_sum` fail?")
    assert code == 0 and events[-1]["outcome_code"] == "success", err
    # Run once first, as a person asked "why does it fail" would; never as a check at the end.
    assert _harness(events) == [("verification_started", None), ("verification_failed", 1)]
    assert len(sse_server.requests) == 1


def test_a_block_that_rewrites_a_file_the_task_protects_is_not_written(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """qwen0.5b, fix-off-by-one with the failing test's output (2026-12-06): it wrote the test
    file back without its last lines, a file the task says not to change."""
    _workspace(tmp_path, sse_server)
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(f"test_sum.py\n{F}\nimport unittest\n{F}")))
    _queue_the_fix(sse_server)
    code, events, err = _exec(tmp_path, TASK + " Do not change test_sum.py.")
    assert (tmp_path / "test_sum.py").read_text() == TEST
    outputs = [
        e["item"]["output"] for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "tool_output"
    ]  # fmt: skip
    assert outputs[0].startswith("not written: the task says not to change test_sum.py")
    assert code == 0 and events[-1]["outcome_code"] == "success", err


@pytest.mark.parametrize(
    ("task", "protected"),
    [
        ("Fix sum_to.py. Do not change test_sum.py.", {"test_sum.py"}),
        ("Do not edit build.py, VERSION or the files in src/.", {"build.py", "VERSION", "src/"}),
        ("Never touch `test_sum.py`; fix it.", {"test_sum.py"}),
        ("Do not modify notes/ and VERSION", {"notes/", "VERSION"}),
        ("Do not change any other line.", set()),
        ("Do not change the signature of parse in build.py.", set()),  # build.py is the work
        ("Do not change missing.py.", set()),  # not there: nothing to protect
        ("Do not change ../outside.txt.", set()),
        ("Change test_sum.py.", set()),
        # said the other way round, as users write it
        ("Leave VERSION alone and fix build.py.", {"VERSION"}),
        ("Keep `test_sum.py` as it is.", {"test_sum.py"}),
        ("Fix build.py; test_sum.py is fine as it is.", {"test_sum.py"}),
        ("VERSION must stay unchanged.", {"VERSION"}),
        ("build.py must not be edited.", {"build.py"}),
        ("VERSION is real data, so please don't touch it.", {"VERSION"}),  # "it": VERSION
        ("src/ is there to try it on (leave its files as they are).", {"src/"}),
        ("The bug is in build.py; the tests are right, leave them alone.", set()),  # no path
        ("Leave it to me.", set()),
        ("Edit build.py and leave the rest as it is.", set()),
        ("Keep it simple.", set()),
        ("/etc/hosts is real data, so please don't edit it.", set()),  # not the workspace's
    ],
)
def test_which_paths_a_task_says_not_to_change(
    tmp_path: Path, task: str, protected: set[str]
) -> None:
    from vtcode.loop.task_text import forbidden_paths

    for d in ("src", "notes"):
        (tmp_path / d).mkdir()
    for f in ("build.py", "VERSION", "test_sum.py", "src/a.py"):
        (tmp_path / f).write_text("x\n")
    (tmp_path.parent / "outside.txt").write_text("x\n")
    assert forbidden_paths(task, tmp_path) == protected


def test_a_long_check_output_keeps_its_first_failure_and_its_summary() -> None:
    from vtcode.loop.task_checks import excerpt

    output = "FAIL: test_minutes\n" + "x" * 5_000 + "\nFAILED (failures=1)\n"
    shown = excerpt(output)
    assert shown.startswith("FAIL: test_minutes") and shown.endswith("FAILED (failures=1)\n")
    assert "[... 3540 characters left out ...]" in shown and len(shown) < 1_600
    assert excerpt("short\n") == "short\n"


def test_a_test_runner_that_is_not_installed_costs_no_round(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """`go test` on a machine without Go: the shell says 127; nothing in the files can fix
    that, so it is recorded as not run and the model is not asked again."""
    if shutil.which("go") is not None:
        pytest.skip("go is installed here")
    _workspace(tmp_path, sse_server)
    _queue_the_fix(sse_server)
    code, events, err = _exec(tmp_path, "Fix sum_to.py so that `go test ./...` passes.")
    not_run = [
        e["item"] for e in events
        if e["type"] == "item.completed" and e["item"].get("event") == "verification_failed"
    ]  # fmt: skip
    assert len(not_run) == 2  # the first run and the check: neither costs a round
    for n in not_run:
        assert n["error_category"] == "not_run" and n["exit_code"] == 127
    assert code == 0 and len(sse_server.requests) == 2, err


def test_a_127_from_inside_the_tasks_own_script_is_the_works_failure(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """qwen0.5b, shell-script (2026-12-07): count_lines.sh held "2" and "[exit code 0]", so
    `bash count_lines.sh notes` exited 127 ("2: command not found"); taken for bash not being
    installed, it cost no round and the run ended a success. bash is here: it is a failure."""
    _config(tmp_path, sse_server, "qwen0.5b")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("one\ntwo\n")
    task = "Write count.sh: `bash count.sh notes` prints 2 here (the lines of notes/a.txt)."
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(f"count.sh\n{F}\n2\n[exit code 0]\n{F}")))
    for _ in range(MAX_CHECK_ROUNDS + 1):
        sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Done.")))
    code, events, err = _exec(tmp_path, task)
    checks = [
        e["item"] for e in events
        if e["type"] == "item.completed" and e["item"].get("event") == "verification_failed"
    ]  # fmt: skip
    assert checks and all(c["exit_code"] == 127 for c in checks)
    assert all(c.get("error_category") != "not_run" for c in checks), checks
    assert code == 1 and events[-1]["outcome_code"] == "verification_failed", err


GREET_BROKEN = "import sys\nprint(f'Hello, {sys.argv[1]}!')\n"
GREET_FIXED = (
    "import sys\nname = sys.argv[1]\nmsg = f'Hello, {name}!'\n"
    "print(msg.upper() if '--shout' in sys.argv else msg)\n"
)
GREET_TASK = (
    "Add a --shout flag to greet.py (`python3 greet.py Ann --shout` prints HELLO, ANN!). "
    "Without it the output stays (`python3 greet.py Ann` prints Hello, Ann!)."
)


def test_a_command_that_prints_other_than_the_task_says_goes_back_to_the_model(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """qwen0.5b, add-cli-flag (2026-12-07): the flag ignored, and the run a success."""
    _config(tmp_path, sse_server, "qwen0.5b")
    (tmp_path / "greet.py").write_text(GREET_BROKEN)
    wrong = GREET_BROKEN.replace("!", "!!")  # a change, still without the flag
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(f"greet.py\n{F}\n{wrong}{F}")))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Done.")))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(f"greet.py\n{F}\n{GREET_FIXED}{F}")))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Done.")))
    code, events, err = _exec(tmp_path, GREET_TASK)
    assert code == 0 and events[-1]["outcome_code"] == "success", err
    told = sse_server.requests[2].json()["messages"][-1]["content"]
    assert told.startswith(
        "The task says `python3 greet.py Ann --shout` prints HELLO, ANN!. It exited 0 and printed:"
    )
    assert "Hello, Ann!!" in told
    assert _harness(events) == [
        ("verification_started", None),  # each stated output once before the first request
        ("verification_failed", 0),  # exit 0, but not what the task says
        ("verification_started", None),
        ("verification_passed", 0),
        ("verification_started", None),  # after the wrong change: the first check fails
        ("verification_failed", 0),
        ("verification_started", None),  # when the model stops: it is told
        ("verification_failed", 0),
        ("verification_started", None),  # after the fix: both pass, the run ends
        ("verification_passed", 0),
        ("verification_started", None),
        ("verification_passed", 0),
    ]
    assert len(sse_server.requests) == 3
    first = sse_server.requests[0].json()["messages"][-1]["content"]
    assert "Output of `python3 greet.py" not in first  # the baseline run is not shown
    assert (tmp_path / "greet.py").read_text() == GREET_FIXED


@pytest.mark.parametrize(
    ("task", "stated"),
    [
        (GREET_TASK, [("python3 greet.py Ann --shout", "HELLO, ANN!"),
                      ("python3 greet.py Ann", "Hello, Ann!")]),
        ("Example: `bash count_lines.sh notes` prints 7 here, because a.txt has 7 lines.",
         [("bash count_lines.sh notes", "7")]),
        ("`python3 a.py` prints `OK 3`.", [("python3 a.py", "OK 3")]),
        ("`python3 f.py 5` should print 120 (5!).", [("python3 f.py 5", "120")]),
        ("Make `python3 todo.py list` print `N. [x] text` for done items.", []),  # a format
        ("If it works, `python3 a.py` prints 1.", []),
        ("Do not run `./x.sh`; `./x.sh` prints 4.", []),  # forbidden anywhere: never run
        ("`echo hi` prints hi.", []),  # not a program the harness runs as a check
        ("`python3 a.py` should print exactly what it prints today.", []),  # not words
        ("`python3 a.py` must print the same as before.", []),
    ],
)  # fmt: skip
def test_which_outputs_a_task_states(task: str, stated: list[tuple[str, str]]) -> None:
    from vtcode.loop.task_text import stated_outputs

    assert stated_outputs(task) == stated


@pytest.mark.parametrize(
    ("shown", "expected", "passed"),
    [
        ("HELLO, ANN!\n[exit code 0]", "HELLO, ANN!", True),
        ("7\n[exit code 0]", "7 here", True),
        ("Hello, Ann!\n[exit code 0]", "HELLO, ANN!", False),
        ("[exit code 0]", "7", False),  # nothing printed
        ("7 8\n[exit code 0]", "7", False),
    ],
)
def test_an_output_matches_when_its_words_begin_what_the_task_says(
    shown: str, expected: str, passed: bool
) -> None:
    from vtcode.loop.task_checks import prints_as_said

    assert prints_as_said(shown, expected) is passed


def test_the_right_write_ends_the_run_before_a_rewrite_can_undo_it(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """qwen0.5b, add-cli-flag (vtcode eval k = 3, 2026-12-07): a right greet.py first, then the
    same file written again without the option, until the check failed at the end."""
    _config(tmp_path, sse_server, "qwen0.5b")
    (tmp_path / "greet.py").write_text(GREET_BROKEN)
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(f"greet.py\n{F}\n{GREET_FIXED}{F}")))
    undo = f"greet.py\n{F}\n{GREET_BROKEN}{F}"  # what the model would have written next
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(undo)))
    code, events, err = _exec(tmp_path, GREET_TASK)
    assert code == 0 and events[-1]["outcome_code"] == "success", err
    assert (tmp_path / "greet.py").read_text() == GREET_FIXED
    assert len(sse_server.requests) == 1


def test_a_check_that_never_failed_never_ends_the_run(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """A test that passes from the start says nothing about the work ("so that ... still
    passes"): a change that keeps it passing goes on to the model's own end."""
    _config(tmp_path, sse_server, "qwen0.5b")
    (tmp_path / "sum_to.py").write_text(FIXED)
    (tmp_path / "test_sum.py").write_text(TEST)
    (tmp_path / "notes.txt").write_text("todo\n")
    task = "Write done into notes.txt, so that `python3 -m unittest test_sum` still passes."
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(f"notes.txt\n{F}\ndone\n{F}")))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Wrote done into notes.txt.")))
    code, events, err = _exec(tmp_path, task)
    assert code == 0 and events[-1]["outcome_code"] == "success", err
    assert len(sse_server.requests) == 2
    assert events[-1]["result"] == "Wrote done into notes.txt."
    assert not [e for e in events if e["type"] == "item.completed"
                and e["item"].get("event") == "evaluation_passed"]  # fmt: skip


def test_a_change_that_keeps_the_check_failing_goes_on_without_telling_the_model(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """The check after a change is the harness's own: a failure there is recorded, the model's
    conversation is as before (it is told when it stops, as without this check)."""
    _workspace(tmp_path, sse_server)
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(f"sum_to.py\n{F}\n{WRONG[0]}{F}")))
    _queue_the_fix(sse_server)
    code, events, err = _exec(tmp_path)
    assert code == 0 and events[-1]["outcome_code"] == "success", err
    second = sse_server.requests[1].json()["messages"]
    assert second[-1]["role"] == "tool" or "AssertionError" not in second[-1]["content"]
    assert len(sse_server.requests) == 2
    assert _harness(events)[-4:] == [
        ("verification_started", None),  # after the wrong fix: fails, nothing said
        ("verification_failed", 1),
        ("verification_started", None),  # after the right one: the run ends
        ("verification_passed", 0),
    ]


def test_a_refused_block_is_not_a_malformed_call_and_the_run_is_told_what_is_missing(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """qwen0.5b, answer-from-config (eval of 2026-12-07): it wrote config.ini back as shown (the
    task forbids it: refused), then echoed the refusal. The refusal was counted as a malformed
    call, so "every call was malformed" ended the run before the nudge for the answer.txt the
    task asks for; a refused block is a well-formed call the harness declined."""
    _config(tmp_path, sse_server, "qwen0.5b")
    ini = "[server]\nhost = 0.0.0.0\nport = 8443\n"
    (tmp_path / "config.ini").write_text(ini)
    task = (
        "Read config.ini and write the port number of its [server] section into a new file "
        "answer.txt (only the number). Do not change config.ini."
    )
    for reply in (
        f"config.ini\n{F}\n{ini}{F}",
        "<tool_response>\nnot written: the task says not to change config.ini.\n</tool_response>",
        f"answer.txt\n{F}\n8443\n{F}",
        "Both files are written.",
    ):
        sse_server.queue(ScriptedReply.sse_bytes(chat_sse(reply)))
    code, events, err = _exec(tmp_path, task)
    assert (tmp_path / "config.ini").read_text() == ini
    assert (tmp_path / "answer.txt").read_text() == "8443\n"
    refusal = next(
        e["item"]["output"] for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "tool_output"
    )  # fmt: skip
    assert refusal.startswith("not written: the task says not to change config.ini.")
    assert "The task asks for answer.txt, which is not written yet" in refusal
    nudges = [
        e["item"]["message"] for e in events
        if e["type"] == "item.completed" and e["item"].get("event") == "continuation_started"
    ]  # fmt: skip
    assert len(nudges) == 1 and "answer.txt" in nudges[0]
    assert code == 0 and events[-1]["outcome_code"] == "success", err
