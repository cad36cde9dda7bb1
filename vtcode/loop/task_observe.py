"""A compact run's first step: run what the task says to run, and note the files it asks for.

A person given "Run `python3 job.py` ... write the ERROR line's code into a new file
answer.txt" runs the command first and reads what it prints. qwen0.5b answered "E1234" (the
prompt's own example) as text, ran nothing and wrote nothing (public suite, log-needle,
2026-12-06); on "Build the project by running `python3 build.py`" and "`python3 -m unittest t`
fails" it answered "Done.". So before a compact run's first request the harness runs the
commands the task orders run now or says fail now (`task_text.commands_to_observe`: at most
two, never one the task forbids, defers or makes conditional), through the run's own executor
(the same sandbox, permission rules and hooks as a model's call), and the first request shows
each one's output after the task (`LeadIn.observed`). Each run is recorded as a
`verification_started` item, then `verification_passed` or `verification_failed`. One that
failed runs again when the model stops, as the task's test commands do (`task_checks`): the
task asked for it to be run, or said it fails, so it must work when the work is done
(qwen1.5b, recover-failing-command: it ran `export BUILD_MODE=release` alone, which changes
no later shell, and said "Done.", a success with the build never run).

The new files the task asks for ("into a new file answer.txt") that the folder lacks at the
start are noted (`LeadIn.expected`): a run whose model stops before they exist gets one nudge
naming them (`text_turn.end_or_nudge`). And of the files too big to show whole, the lines the
task names are shown (`loop/excerpts.py`). Last, for a task that asks for a change, the
folder's fingerprint is taken (`loop/folder_state.py`): a run that ends with it unchanged did
not do the task, whatever it says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vtcode.loop.excerpts import find_excerpts
from vtcode.loop.file_blocks import fence_for
from vtcode.loop.task_checks import command_tool_offered, excerpt, run_task_command
from vtcode.loop.task_text import asks_for_a_change, commands_to_observe, files_to_create
from vtcode.loop.verified_stop import baseline_stated_outputs

if TYPE_CHECKING:
    from vtcode.loop.lead_in import LeadIn
    from vtcode.loop.runner import Runner

__all__ = ["observe_task"]

# What an observed command's output may cost in the first request: a failing test's first
# traceback and its summary, or a long log's tail and its error lines (tools/compact_catalog.py).
_HEAD_CHARS = 1500
_TAIL_CHARS = 2500


def observe_task(self: Runner, task: str) -> None:
    """Run the commands the task says to run now and note the new files it asks for, once, at
    a compact headless run's start (a fresh session: the task is its first message)."""
    lead = self.lead_in
    if lead is None or self.chat is not None or self.workspace is None:
        return
    lead.expected[:] = files_to_create(task, self.workspace)
    if lead.read is not None:
        lead.excerpts[:] = find_excerpts(task, lead.unseen, lead.read)
    if command_tool_offered(self):
        _run_observed(self, lead, task)
    change = asks_for_a_change(task)
    if change:  # after the harness's own runs: what they write is not work
        lead.folder.start(self.workspace)
    # a first reply that changes nothing is a fault: drawn again, when draws are on
    lead.draws.armed = (change or bool(lead.expected)) and lead.draws.allowed > 1


def _run_observed(self: Runner, lead: LeadIn, task: str) -> None:
    observed = commands_to_observe(task)
    for n, command in enumerate(observed):
        result = run_task_command(
            self, command, call_id=f"observe_{n}", attempt=0,
            purpose="a command the task says to run, run before the first request",
        )  # fmt: skip
        if result is None:
            continue
        if not result.passed:  # "Build it by running `x`", "`x` fails": it must work after
            lead.failed_first.append(command)
        shown = excerpt(result.output.strip(), _HEAD_CHARS, _TAIL_CHARS)
        fence = fence_for(shown)  # the output's own fences never close the block early
        lead.observed.append(
            f"Output of `{command}`, run before you started:\n{fence}\n{shown}\n{fence}"
        )
    baseline_stated_outputs(self, task, observed)  # when the work makes them pass, it ends
