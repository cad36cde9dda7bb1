"""How a run ended: upstream's TaskOutcome, its outcome code, thread subtype and our exit code."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from vtcode.errors import ExitCode
from vtcode.events.enums import ThreadCompletionSubtype as Subtype


class OutcomeKind(enum.Enum):
    """TaskOutcome variants (reference §2), plus the interactive session-end reasons."""

    SUCCESS = ("success", Subtype.SUCCESS)
    STOPPED_NO_ACTION = ("stopped_no_action", Subtype.SUCCESS)
    TURN_LIMIT_REACHED = ("turn_limit_reached", Subtype.ERROR_MAX_TURNS)
    BUDGET_LIMIT_REACHED = ("budget_limit_reached", Subtype.ERROR_MAX_BUDGET_USD)
    TOOL_LOOP_LIMIT_REACHED = ("tool_loop_limit_reached", Subtype.ERROR_DURING_EXECUTION)
    LOOP_DETECTED = ("loop_detected", Subtype.ERROR_DURING_EXECUTION)
    CANCELLED = ("cancelled", Subtype.CANCELLED)
    FAILED = ("failed", Subtype.ERROR_DURING_EXECUTION)
    BLOCKED = ("blocked", Subtype.ERROR_DURING_EXECUTION)
    ERROR = ("error", Subtype.ERROR_DURING_EXECUTION)  # internal/setup error (`thread_failed`)
    # The model's reply cannot be the answer (vtcode's own codes; upstream would report success):
    MAX_OUTPUT_TOKENS = ("max_output_tokens", Subtype.ERROR_DURING_EXECUTION)  # cut by the cap
    EMPTY_RESPONSE = ("empty_response", Subtype.ERROR_DURING_EXECUTION)  # no text, no tool call
    # only a tool-call-shaped text that could not be run, even after one corrective nudge
    MALFORMED_TOOL_CALL = ("malformed_tool_call", Subtype.ERROR_DURING_EXECUTION)
    # no tool ever ran, and after one nudge to act the reply still only announced work
    UNFINISHED_NO_ACTION = ("unfinished_no_action", Subtype.ERROR_DURING_EXECUTION)
    # the task's own check (the test it names, or the output it says a command prints) still
    # failed when the model stopped, after the rounds of fixes it was given
    VERIFICATION_FAILED = ("verification_failed", Subtype.ERROR_DURING_EXECUTION)
    # the final answer never matched `--output-schema`, even after the retries it was given
    OUTPUT_SCHEMA_INVALID = ("output_schema_invalid", Subtype.ERROR_DURING_EXECUTION)
    # `agent.idle_turn_limit` consecutive replies with no tool call, and the run was to go on
    STALLED = ("stalled", Subtype.ERROR_DURING_EXECUTION)
    # a line of streamed input (`exec --input-format stream-json`) was not a user message
    INPUT_ERROR = ("input_error", Subtype.ERROR_DURING_EXECUTION)
    # Interactive session ends
    COMPLETED = ("completed", Subtype.SUCCESS)
    EXIT = ("exit", Subtype.CANCELLED)
    NEW_SESSION = ("new_session", Subtype.SUCCESS)

    @property
    def code(self) -> str:
        return self.value[0]

    @property
    def subtype(self) -> Subtype:
        return self.value[1]

    @property
    def is_success(self) -> bool:
        return self.subtype is Subtype.SUCCESS

    @property
    def is_hard_block(self) -> bool:
        """Hard blocks write a blocked-handoff artifact (upstream `is_hard_block`)."""
        return self in (OutcomeKind.TOOL_LOOP_LIMIT_REACHED, OutcomeKind.LOOP_DETECTED)


_EXIT_BY_SUBTYPE = {
    Subtype.SUCCESS: ExitCode.OK,
    Subtype.ERROR_DURING_EXECUTION: ExitCode.FAILURE,
    Subtype.ERROR_MAX_TURNS: ExitCode.MAX_TURNS,
    Subtype.ERROR_MAX_BUDGET_USD: ExitCode.MAX_BUDGET,
    Subtype.CANCELLED: ExitCode.CANCELLED,
}


@dataclass(frozen=True, slots=True)
class Outcome:
    """A concrete outcome with the numbers its description needs."""

    kind: OutcomeKind
    detail: str = ""
    limit: float | None = None
    actual: float | None = None
    accomplished: tuple[str, ...] = field(default=())

    @property
    def exit_code(self) -> ExitCode:
        if self.kind is OutcomeKind.INPUT_ERROR:
            return ExitCode.USAGE  # bad input is exit 2, as it is before a run starts
        return _EXIT_BY_SUBTYPE.get(self.kind.subtype, ExitCode.FAILURE)

    def description(self) -> str:
        """Human text, as upstream's `description()` (e.g. the terminal `turn.failed` message)."""
        k = self.kind
        if k is OutcomeKind.TURN_LIMIT_REACHED:
            return (
                f"Stopped after reaching turn limit (max: {_n(self.limit)}, "
                f"reached: {_n(self.actual)})"
            )
        if k is OutcomeKind.BUDGET_LIMIT_REACHED:
            return (
                f"Stopped after reaching budget limit (max: ${self.limit:.4f}, "
                f"spent: ${self.actual:.4f})"
            )
        if k is OutcomeKind.TOOL_LOOP_LIMIT_REACHED:
            return (
                f"Stopped after reaching tool loop limit (max: {_n(self.limit)}, "
                f"reached: {_n(self.actual)})"
            )
        if k is OutcomeKind.LOOP_DETECTED:
            return f"Stopped: the same tool calls repeated without progress ({self.detail})"
        if k is OutcomeKind.CANCELLED:
            return "turn cancelled"
        if k in (OutcomeKind.FAILED, OutcomeKind.ERROR, OutcomeKind.BLOCKED):
            return self.detail or "run failed"
        if k is OutcomeKind.STOPPED_NO_ACTION:
            return "Stopped: the model took no action"
        if k is OutcomeKind.MAX_OUTPUT_TOKENS:
            return (
                "Stopped: the model's reply was cut off by the output-token cap "
                "(providers.NAME.max_output_tokens)"
            )
        if k is OutcomeKind.EMPTY_RESPONSE:
            return "Stopped: the model replied with no text and no tool call"
        if k is OutcomeKind.MALFORMED_TOOL_CALL:
            return (
                "Stopped: the model's answer was a tool call written as text that could not "
                f"be run ({self.detail or 'unreadable'})"
            )
        if k is OutcomeKind.VERIFICATION_FAILED:
            return f"Stopped: the task's check still fails ({self.detail or 'not passed'})"
        if k is OutcomeKind.UNFINISHED_NO_ACTION:
            return f"Stopped: nothing was done ({self.detail or 'no tool ran'})"
        if k is OutcomeKind.STALLED:
            return (
                f"Stopped: stalled, {_n(self.actual)} consecutive turns with no tool call "
                f"(agent.idle_turn_limit = {_n(self.limit)})"
            )
        if k is OutcomeKind.OUTPUT_SCHEMA_INVALID:
            return (
                "Stopped: the final answer does not match the output schema after "
                f"{_n(self.limit)} retries ({self.detail})"
            )
        return self.detail or "Task completed"


def _n(v: float | None) -> str:
    return "?" if v is None else str(int(v))


def decide_outcome(ending: Outcome | None, *, cancelled: bool) -> Outcome:
    """How a run ended: the one rule, applied when the machine enters `complete`.

    `ending` is what the last step found (a final answer, a limit, a provider failure, the user
    leaving); a cancellation wins over everything but a finished answer (the answer was given
    before the signal was acted on); a run that completes with neither is an internal error.
    """
    if cancelled and (ending is None or ending.kind is not OutcomeKind.SUCCESS):
        return Outcome(OutcomeKind.CANCELLED)
    if ending is None:
        return Outcome(OutcomeKind.ERROR, detail="run ended without an outcome")
    return ending


def unusable_reply(
    stop_reason: str, content: str, has_calls: bool, *, calls_from_text: bool = False
) -> Outcome | None:
    """A reply that cannot be the answer: cut off by the output cap (its text, or a tool
    call's arguments, may be half written), or empty (no text and no tool call). A whole tool
    call read from the text before the cut is usable: only its tail was cut."""
    if stop_reason == "max_tokens" and not (calls_from_text and has_calls):
        return Outcome(OutcomeKind.MAX_OUTPUT_TOKENS)
    if not content.strip() and not has_calls:
        return Outcome(OutcomeKind.EMPTY_RESPONSE)
    return None


def stop_reason_of(outcome: Outcome, last: str | None) -> str | None:
    """`thread.completed.stop_reason`: why the model (or the run) stopped, as a reason code
    (end_turn, max_tokens, tool_calls, cancelled, error), never prose; `last` is the model's."""
    if outcome.kind is OutcomeKind.CANCELLED or outcome.kind is OutcomeKind.EXIT:
        return "cancelled"
    if outcome.kind in (
        OutcomeKind.ERROR,
        OutcomeKind.FAILED,
        OutcomeKind.BLOCKED,
        OutcomeKind.INPUT_ERROR,
    ):
        return "error"
    return last
