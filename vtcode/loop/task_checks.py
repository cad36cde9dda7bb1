"""The test command a task names, run before a compact run's answer is taken as the end.

A small model says "Done." after a wrong fix, or before doing anything, on tasks that say how
the work is checked ("Fix sum_to.py so that `python3 -m unittest test_sum` passes"). A person
would run that command; so does the harness, once the model stops: the command runs through the
run's own executor (the same sandbox, permission rules and hooks as a model's call), is recorded
as `verification_started`, then `verification_passed` or `verification_failed` with its exit
code, and a failure goes back to the model as the next user message with the output excerpted.
At most `MAX_CHECK_ROUNDS` times a run. After the last round the checks run once more, told
to no one: when one still fails, the run ends `verification_failed` (exit 1), not a success
with a result the harness has just seen to be wrong (qwen0.5b, fix-off-by-one, 2026-12-07:
the test failed at both rounds, the model then answered with the failure message copied, and
the run was a success).

Only test runners are run (`python3 -m unittest ...`, `pytest`, `npm test`, `go test`,
`cargo test`, `make test`), and only from backticks in the task's own words: a test run is
meant to be repeated and changes nothing the task is about. A command the task tells not to run
("do not run `pytest`") is never run. And a command the task gives as an example of what the
work must print ("(`python3 greet.py Ann --shout` prints HELLO, ANN!)") runs the same way; it
fails when its output's words do not begin what the task says (`task_text.stated_outputs`).
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
import shutil
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vtcode.events.enums import HarnessEventKind, ToolOutcome
from vtcode.loop.task_text import TEST_RUNNER, named_test_commands, stated_outputs
from vtcode.messages import ToolCall

if TYPE_CHECKING:
    from vtcode.loop.runner import Runner

__all__ = [
    "MAX_CHECK_ROUNDS",
    "CheckResult",
    "command_tool_offered",
    "excerpt",
    "failure_message",
    "run_named_checks",
    "run_task_command",
    "task_checks",
]

MAX_CHECK_ROUNDS = 2
CHECK_TIMEOUT_SECS = 60
_OUTPUT_HEAD_CHARS = 900  # the first failure, as a test runner prints it first
_OUTPUT_TAIL_CHARS = 600  # and its summary, printed last
_EXEC = "exec_command"
_NOT_RUN = frozenset(
    {
        ToolOutcome.PERMISSION_REJECTED,
        ToolOutcome.PERMISSION_CANCELLED,
        ToolOutcome.HOOK_DENIED,
        ToolOutcome.INVALID_TOOL,
        ToolOutcome.CANCELLED,
    }
)
_NO_SUCH_COMMAND = frozenset({126, 127})
_FIX_IN_FILES = (
    "Fix the cause. Write each file you change as its path on a line by itself, then its whole "
    "new content in a fenced code block."
)
_DO_WHAT_IT_SAYS = (
    "Do what its output says. To run a command, write it in a ```sh block; to change a file, "
    "write its path on a line by itself, then its whole new content in a fenced code block."
)
_EXIT_LINE = re.compile(r"\[exit code -?\d+\]\s*\Z")
_PASSED, _FAILED = HarnessEventKind.VERIFICATION_PASSED, HarnessEventKind.VERIFICATION_FAILED
VERIFICATION_STARTED = HarnessEventKind.VERIFICATION_STARTED


@dataclass(frozen=True, slots=True)
class CheckResult:
    command: str
    exit_code: int | None
    output: str
    expected: str | None = None  # what the task says the command prints

    @property
    def passed(self) -> bool:
        if self.exit_code != 0:
            return False
        return self.expected is None or prints_as_said(self.output, self.expected)


def prints_as_said(shown: str, expected: str) -> bool:
    """The command's output (the compact view's text, its `[exit code N]` line dropped) is not
    empty and its words begin what the task says it prints: "7" for "7 here", "HELLO, ANN!"
    for "HELLO, ANN!". Lenient on purpose: a check the task's own words cannot settle never
    sends the model back."""
    printed = _EXIT_LINE.sub("", shown).split()
    said = expected.split()
    return bool(printed) and said[: len(printed)] == printed


def task_checks(self: Runner, task: str) -> list[tuple[str, str | None]]:
    """(command, what it prints or None) for the task's test commands, the commands whose
    output it states, and the commands it said to run that failed before the first request."""
    tests = named_test_commands(task)
    failed_first = [] if self.lead_in is None else self.lead_in.failed_first
    # One the model has since run, in any form, and that exited 0 ("MODE=release python3
    # build.py" for `python3 build.py`) is done: the task's way to run it may need more.
    ran = self.watch.commands_ok
    again = [c for c in failed_first if c not in tests and not any(c in r for r in ran)]
    checks: list[tuple[str, str | None]] = [(c, None) for c in [*tests, *again]]
    return checks + list(stated_outputs(task))


def run_named_checks(self: Runner, task: str, *, final: bool = False) -> CheckResult | None:
    """Run the task's checks (`task_checks`; compact runs with the command tool, rounds left);
    the first failure, or None when all passed or none ran. `final`: the one run after the
    last round (nothing runs before the rounds are spent, or a second time)."""
    checks = task_checks(self, task)
    rounds = self.watch.check_rounds
    spent = rounds != MAX_CHECK_ROUNDS if final else rounds >= MAX_CHECK_ROUNDS
    if not checks or spent:
        return None
    if not command_tool_offered(self):
        return None
    self.watch.check_rounds += 1
    for command, expected in checks:
        result = _run(self, command, expected)
        if result is not None and not result.passed:
            return result
    return None


def command_tool_offered(self: Runner) -> bool:
    """The run offers the command tool, through which a task's commands run."""
    return any(spec.name == _EXEC for spec in self.tools.catalog())


def _run(self: Runner, command: str, expected: str | None) -> CheckResult | None:
    """The check's result; None when it was not run."""
    attempt = self.watch.check_rounds
    purpose = (
        "a command the task names, run before the run ends"
        if expected is None
        else "a command whose output the task states, run before the run ends"
    )
    return run_task_command(
        self, command, call_id=f"check_{attempt}", attempt=attempt, purpose=purpose,
        expected=expected,
    )  # fmt: skip


def run_task_command(
    self: Runner,
    command: str,
    *,
    call_id: str,
    attempt: int,
    purpose: str,
    expected: str | None = None,
) -> CheckResult | None:
    """Run a command the task names through the run's executor, recorded as a verification;
    its whole shown output, or None when it was not run (a permission rule, a hook, the run's
    cancel, a runner not installed): that is no failure of the work, and the model is not told
    to fix it."""
    rec = self.recorder
    rec.harness(VERIFICATION_STARTED, command=command, attempt=attempt, message=purpose)
    # Waits for the exit (the tool's default returns after 1 s with the command still running).
    wait_ms = CHECK_TIMEOUT_SECS * 1000
    arguments = {"command": command, "timeout": CHECK_TIMEOUT_SECS, "yield_time_ms": wait_ms}
    call = ToolCall(id=call_id, name=_EXEC, arguments=json.dumps(arguments))
    started = time.monotonic()
    out = self.tools.execute(call, arguments, self.cancel)
    ms = int((time.monotonic() - started) * 1000)
    # Refused, a test runner that is not installed here (the shell's 127/126), or stopped by
    # the run's cancel: nothing the model can fix in the files, so no round is spent on it.
    # A 127 from inside the task's own script (`bash count.sh` running a line "2") is the
    # work's failure: bash is installed.
    missing = out.exit_code in _NO_SUCH_COMMAND and _program_missing(command)
    if out.outcome in _NOT_RUN or missing or self.cancel.cancelled:
        rec.harness(_FAILED, command=command, exit_code=out.exit_code, attempt=attempt,
                    duration_ms=ms, error_category="not_run",
                    message=excerpt(out.output))  # fmt: skip
        return None
    result = CheckResult(command, out.exit_code, out.output, expected)
    if not result.passed:
        self.watch.checks_seen_failing.add(command)
    kind = _PASSED if result.passed else _FAILED
    rec.harness(kind, command=command, exit_code=out.exit_code, attempt=attempt, duration_ms=ms,
                message=None if result.passed else excerpt(result.output))  # fmt: skip
    return result


def _program_missing(command: str) -> bool:
    """The program `command` starts (after any NAME=value words) is not on this PATH, so a
    126/127 is the shell's "not found" for it. qwen0.5b's shell-script (2026-12-07) wrote a
    count_lines.sh whose lines were not commands: `bash count_lines.sh notes` exited 127 and
    was taken for bash missing, and the run ended a success. A path (`./run.sh`) is the
    task's own file: not missing here."""
    try:
        words = shlex.split(command)
    except ValueError:
        return True
    words = list(itertools.dropwhile(lambda w: _ASSIGNMENT.match(w) is not None, words))
    if not words or "/" in words[0]:
        return not words
    return shutil.which(words[0]) is None


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def excerpt(output: str, head: int = _OUTPUT_HEAD_CHARS, tail: int = _OUTPUT_TAIL_CHARS) -> str:
    """The output's head and tail: a 1,500-character tail alone began mid-traceback, without
    the name of the failing test (qwen1.5b's failing-test run, 2026-12-06)."""
    if len(output) <= head + tail:
        return output
    cut = len(output) - head - tail
    return f"{output[:head]}\n[... {cut} characters left out ...]\n{output[-tail:]}"


def failure_message(result: CheckResult, nothing_done: bool) -> str:
    """The next user message after a failed check."""
    code = "did not finish" if result.exit_code is None else f"exited {result.exit_code}"
    lead = "Nothing has been changed yet. " if nothing_done else ""
    shown = f"```\n{excerpt(result.output).strip()}\n```"
    if result.expected is not None:
        said = f"The task says `{result.command}` prints {result.expected}. It {code} and printed"
        return f"{lead}{said}:\n\n{shown}\n\n{_FIX_IN_FILES}"
    # A command the task said to run (not a test): what it prints may say how to run it.
    how = _FIX_IN_FILES if TEST_RUNNER.match(result.command) else _DO_WHAT_IT_SAYS
    return f"{lead}The task's check `{result.command}` {code}:\n\n{shown}\n\n{how}"
