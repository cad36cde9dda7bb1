"""The agent loop's state machine, as data: states, triggers, guards.

This table is the only definition of the loop's control flow. `vtcode.loop.fsm` builds a
`transitions.Machine` from it (guard names resolve through an allow-list, never as import paths)
and `vtcode fsm` prints it, so the picture cannot drift from the code. Transitions that share a
trigger and source are tried in order: the first whose guards pass wins, so fallbacks come last.

Interactive runs (`vtcode chat`) add `idle`: a finished user turn (`user_turn_over`) waits there
for the user's next action (`user_input`: a new turn, a compaction, or `leaving`), and Ctrl-C
(`stop` with `interrupted`) ends the user turn but not the session. Headless runs never set those
guards, so for them the table is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

INITIAL = "orient"
TERMINAL = "complete"


@dataclass(frozen=True, slots=True)
class StateSpec:
    name: str
    description: str
    final: bool = False


@dataclass(frozen=True, slots=True)
class TransitionSpec:
    trigger: str
    source: tuple[str, ...]
    dest: str
    conditions: tuple[str, ...] = ()
    description: str = ""


STATES: tuple[StateSpec, ...] = (
    StateSpec("orient", "gather orientation context from durable artifacts"),
    StateSpec("turn", "one model request and its streamed response"),
    StateSpec("tool", "run the tool calls the model asked for"),
    StateSpec("compact", "replace history with summary, continuity tail and memory envelope"),
    StateSpec("reset", "discard the transcript; the next turn reorients from artifacts only"),
    StateSpec("idle", "interactive: between user turns, waiting at the prompt"),
    StateSpec("complete", "terminal: the run's thread.completed has been emitted", final=True),
)

_WORKING = ("orient", "turn", "tool", "compact", "reset")
_LIVE = (*_WORKING, "idle")

TRANSITIONS: tuple[TransitionSpec, ...] = (
    # orient -> first turn
    TransitionSpec("oriented", ("orient",), "complete", ("cancelled",), "cancelled before start"),
    TransitionSpec("oriented", ("orient",), "compact", ("compaction_due",), "resumed over budget"),
    TransitionSpec(
        "oriented", ("orient",), "idle", ("user_turn_over",), "interactive: no prompt yet"
    ),
    TransitionSpec("oriented", ("orient",), "turn", (), "orientation injected"),
    # a model response
    TransitionSpec("responded", ("turn",), "complete", ("cancelled",), "cancelled mid-turn"),
    TransitionSpec("responded", ("turn",), "tool", ("has_tool_calls",), "model asked for tools"),
    TransitionSpec(
        "responded", ("turn",), "idle", ("user_turn_over",), "interactive: the user turn is done"
    ),
    TransitionSpec("responded", ("turn",), "complete", (), "final answer"),
    # a steering follow-up arrived after a final answer: a new outer turn, limits re-checked
    TransitionSpec("followed_up", ("turn",), "complete", ("cancelled",), "cancelled"),
    TransitionSpec("followed_up", ("turn",), "complete", ("limit_reached",), "a limit holds"),
    TransitionSpec("followed_up", ("turn",), "compact", ("compaction_due",), "over threshold"),
    TransitionSpec("followed_up", ("turn",), "turn", (), "apply the follow-up"),
    # after tools: limits, compaction and reset are checked before the next model request
    TransitionSpec("tools_done", ("tool",), "complete", ("cancelled",), "cancelled"),
    TransitionSpec(
        "tools_done", ("tool",), "complete", ("task_verified",), "the task's checks pass"
    ),
    TransitionSpec("tools_done", ("tool",), "complete", ("limit_reached",), "a limit holds"),
    TransitionSpec(
        "tools_done",
        ("tool",),
        "idle",
        ("user_turn_over",),
        "interactive: the user turn is blocked",
    ),
    TransitionSpec("tools_done", ("tool",), "reset", ("reset_due",), "stalled: context reset"),
    TransitionSpec("tools_done", ("tool",), "compact", ("compaction_due",), "over threshold"),
    TransitionSpec("tools_done", ("tool",), "turn", (), "next model request"),
    # a transient provider failure: the same request again after a backoff (bounded), else
    # after successful tool output one recovery compaction, else the run (or user turn) ends
    TransitionSpec(
        "provider_failed", ("turn",), "turn", ("retry_allowed",), "transient: retry after backoff"
    ),
    TransitionSpec(
        "provider_failed", ("turn",), "compact", ("recovery_allowed",), "recovery compaction"
    ),
    TransitionSpec(
        "provider_failed", ("turn",), "idle", ("user_turn_over",), "interactive: the turn failed"
    ),
    TransitionSpec("provider_failed", ("turn",), "complete", (), "blocked, resumable"),
    # compaction and reset
    TransitionSpec("compacted", ("compact",), "complete", ("cancelled",), "cancelled"),
    TransitionSpec("compacted", ("compact",), "reset", ("reset_due",), "reset on compaction"),
    TransitionSpec(
        "compacted", ("compact",), "idle", ("user_turn_over",), "/compact at the prompt"
    ),
    TransitionSpec("compacted", ("compact",), "turn", (), "continue in a new segment"),
    TransitionSpec("reset_done", ("reset",), "orient", (), "reorient from artifacts"),
    # interactive: what the user did at the prompt
    TransitionSpec("user_input", ("idle",), "complete", ("cancelled",), "SIGTERM at the prompt"),
    TransitionSpec("user_input", ("idle",), "complete", ("limit_reached",), "a session limit"),
    TransitionSpec("user_input", ("idle",), "complete", ("leaving",), "the user left the session"),
    TransitionSpec("user_input", ("idle",), "compact", ("compaction_due",), "/compact or due"),
    TransitionSpec("user_input", ("idle",), "turn", (), "a new user turn"),
    # interactive Ctrl-C ends the user turn, not the session
    TransitionSpec("stop", _WORKING, "idle", ("interrupted",), "Ctrl-C: back to the prompt"),
    # anything live can stop: cancellation, a fatal error, a persistence failure
    TransitionSpec("stop", _LIVE, "complete", (), "cancel, fatal error or internal failure"),
)

GUARDS: tuple[str, ...] = (
    "cancelled",
    "compaction_due",
    "has_tool_calls",
    "limit_reached",
    "task_verified",
    "reset_due",
    "recovery_allowed",
    "retry_allowed",
    "user_turn_over",
    "leaving",
    "interrupted",
)
