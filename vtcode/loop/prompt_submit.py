"""The run's prompt becomes its first user message, unless a `user_prompt_submit` hook blocks it.

Kept apart from `runner.py` (the steps and the machine): the parts' verdict on the prompt
(`LoopHooks.prompt_submitted`) either ends the run before any model request, as `blocked` with
the hook's reason, or adds the hooks' context after the prompt in the same message. A fresh
compact run then observes its task (`loop/task_observe.py`): what the first request shows
depends on the prompt, so it happens where the prompt is taken.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vtcode.loop.outcomes import Outcome, OutcomeKind
from vtcode.loop.task_observe import observe_task
from vtcode.messages import Message

if TYPE_CHECKING:
    from vtcode.loop.runner import Runner

__all__ = ["submit_prompt"]


def submit_prompt(self: Runner, prompt: str) -> bool:
    """Append the prompt (with any hook context); False when it was blocked and the run ended."""
    verdict = self.hooks.prompt_submitted(prompt)
    if verdict.blocked is not None:
        self._stop(
            Outcome(
                OutcomeKind.BLOCKED,
                detail=f"a user_prompt_submit hook blocked the prompt: {verdict.blocked}",
            )
        )
        return False
    content = "\n\n".join([prompt, *verdict.context])
    self.append(Message(role="user", content=content, images=self.prompt_images))
    self.prompt_images = ()  # attached to this message only, never to a later prompt
    if sum(m.role == "user" for m in self.history) == 1:  # a fresh task, not a resumed one
        observe_task(self, prompt)
    return True
