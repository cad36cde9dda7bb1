"""A compact run ends when the task's own checks pass after a change.

A small model does not know when it is done, and what it writes after a right answer undoes it
more often than it finishes anything. qwen0.5b on add-cli-flag (public suite, k = 3, 2026-12-07)
wrote a right greet.py with its first reply, then wrote it again without the new option, and
again, and the run ended with the task's check failing; the same shape was seen on fix-off-by-one
(a right fix, then the test file rewritten). A person who sees the task's test pass after the fix
stops there. So after a round of tool calls that changed something (a write that changed a file,
or a command that exited 0), a compact headless run runs the task's checks
(`task_checks.task_checks`: the test commands it names, the commands whose output it states, the
commands it said to run that failed at the start), each recorded as a verification; when every
one passes and at least one of them was seen failing earlier in the run, the run ends there as a
success (an `evaluation_passed` item says why; the model's last reply stays the result).

A check that never failed says nothing about whether the work was needed or is done ("so that
`python3 -m unittest test_shop` still passes"), so it never ends a run: that is why the commands
whose output the task states run once before the first request (`baseline_stated_outputs`; not
shown to the model, which sees the task as before). Nothing here tells the model anything: a
failing check mid-run is recorded and the run goes on as it would have; the checks the model is
told about still run when it stops (`task_checks.run_named_checks`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vtcode.events.enums import HarnessEventKind
from vtcode.loop.task_checks import command_tool_offered, run_task_command, task_checks
from vtcode.loop.task_text import stated_outputs

if TYPE_CHECKING:
    from vtcode.loop.runner import Runner

__all__ = ["baseline_stated_outputs", "verified_after_change"]

_BASELINE = "a command whose output the task states, run before the first request (not shown)"
_AFTER_CHANGE = "the task's check, run after a change"


def baseline_stated_outputs(self: Runner, task: str, already_run: list[str]) -> None:
    """Run each command whose output the task states once before the first request (except those
    `already_run` by the first step), so a later pass shows the work made it pass."""
    for n, (command, expected) in enumerate(stated_outputs(task)):
        if command in already_run:
            continue
        run_task_command(
            self, command, call_id=f"baseline_{n}", attempt=0, purpose=_BASELINE,
            expected=expected,
        )  # fmt: skip


def verified_after_change(self: Runner, task: str) -> bool:
    """After a round that changed something in a compact headless run: True when every check
    of the task ran and passed now and one of them was seen failing before (the run is done)."""
    if self.lead_in is None or self.chat is not None or self.cancel.cancelled:
        return False
    checks = task_checks(self, task)
    seen_failing = self.watch.checks_seen_failing
    if not checks or not any(command in seen_failing for command, _ in checks):
        return False
    if not command_tool_offered(self):
        return False
    turn = self.turns_executed
    for n, (command, expected) in enumerate(checks):
        result = run_task_command(
            self, command, call_id=f"verify_{turn}_{n}", attempt=0, purpose=_AFTER_CHANGE,
            expected=expected,
        )  # fmt: skip
        if result is None or not result.passed:
            return False  # not run (a rule, a hook, a cancel), or failing: the run goes on
    shown = ", ".join(f"`{command}`" for command, _ in checks)
    self.recorder.harness(
        HarnessEventKind.EVALUATION_PASSED,
        message=f"the task's checks pass after this change ({shown}); the run ends here",
    )
    return True
