"""`automation.full_auto.verify_mutations`: a verifier re-reads the changed files before success.

Upstream gates its propose/verify pass on this key: a fresh read-only verifier, with no context
shared with the proposer, re-reads the affected files and approves or rejects the change. Here
the pass runs when a headless run that changed files (the `file_change` items of this run:
`write_file`, `apply_patch`, ...) is about to end as a success, after its plan check. It is the
same child run as `vtcode agent verify` (`vtcode.runtime.subagents.run_verifier`): the subagent
`verifier` (upstream's name), else `explorer`, else the run's own provider and model with the
built-in verifier instructions; its own session, read-only tools, no orientation. The run
records `verification_started`, then `verification_passed` or `verification_failed` (the
verifier's exit code, its issues); a rejection, a verifier that gave no decision or could not
run at all ends the run `blocked` (error_during_execution, exit 1): an unverified change is
never reported as a success. Files changed only by commands (`exec_command`) are not known to
the harness and are not listed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from vtcode.config.model import SubagentSpec, VtcodeConfig
from vtcode.errors import VtcodeError
from vtcode.events.enums import FileChangeKind
from vtcode.events.enums import HarnessEventKind as H
from vtcode.loop.parts import LoopHooks, PromptVerdict
from vtcode.loop.recorder import Recorder

if TYPE_CHECKING:
    from vtcode.runtime.exec_run import ExecContext

__all__ = ["MutationVerifierPart", "make_part"]

_PREFERRED = ("verifier", "explorer")  # upstream's lookup order
_ISSUES_SHOWN = 10


def make_part(ctx: ExecContext) -> MutationVerifierPart | None:
    """The part when `verify_mutations` is on (upstream's default: off)."""
    if not ctx.config.automation.full_auto.verify_mutations:
        return None
    return MutationVerifierPart(ctx.workspace, ctx.config, ctx.provider.name, ctx.provider.model)


class MutationVerifierPart(LoopHooks):
    """Runs the verifier over this run's changed files before a success."""

    def __init__(self, workspace: Path, config: VtcodeConfig, provider: str, model: str) -> None:
        self.workspace = workspace
        self.config = config
        self.provider = provider
        self.model = model
        self.task = ""

    def prompt_submitted(self, prompt: str) -> PromptVerdict:
        self.task = prompt  # what the change was for, in the verifier's description
        return PromptVerdict()

    def _spec(self) -> tuple[str, SubagentSpec]:
        for name in _PREFERRED:
            spec = self.config.agent.subagents.get(name)
            if spec is not None:
                return name, spec
        return "default", SubagentSpec(provider=self.provider, model=self.model)

    def verify_changes(
        self, changed: Mapping[str, FileChangeKind], answer: str, recorder: Recorder
    ) -> str | None:
        from vtcode.runtime.subagents import run_verifier  # it runs exec: imported late

        files = [p for p, kind in changed.items() if kind is not FileChangeKind.DELETE]
        files = [p for p in files if (self.workspace / p).is_file()]
        deleted = [p for p, kind in changed.items() if p not in files]
        name, spec = self._spec()
        listed = ", ".join(files) or "(none left)"
        recorder.harness(
            H.VERIFICATION_STARTED,
            message=f"verifier {name} re-reads {len(files)} changed file(s): {listed}",
        )
        description = f"An agent made these changes for the task:\n{self.task.strip()}\n\n"
        description += f"The agent's final answer:\n{answer.strip()}"
        if deleted:
            description += "\n\nFiles it deleted: " + ", ".join(deleted)
        try:
            verdict, code = run_verifier(
                self.workspace, self.config, name, spec, files or deleted, description, nested=True
            )
        except VtcodeError as e:  # a verifier that cannot start (no provider, bad script)
            reason = f"the verifier {name} could not run: {e}"
            recorder.harness(H.VERIFICATION_FAILED, message=reason)
            return f"the changes were not verified: {reason}"
        if verdict.approved:
            recorder.harness(
                H.VERIFICATION_PASSED,
                message=f"verifier {name} approved; verifier session {verdict.verifier_session_id}",
                exit_code=code,
            )
            return None
        issues = "\n".join(f"- {i}" for i in verdict.issues[:_ISSUES_SHOWN])
        recorder.harness(
            H.VERIFICATION_FAILED,
            message=(
                f"verifier {name} rejected the changes; verifier session "
                f"{verdict.verifier_session_id}\n{issues}"
            ),
            exit_code=code,
        )
        return f"the verifier {name} rejected the changes to {listed}:\n{issues}"
