"""How leaving an interactive session maps to upstream's session-end outcomes (reference §2).

| the user…                           | outcome_code  | subtype                | exit |
|-------------------------------------|---------------|------------------------|------|
| `/exit`, `/quit`, Ctrl-D            | `completed`   | success                | 0    |
|   … after a blocked/aborted turn    | `blocked`     | error_during_execution | 1    |
| Ctrl-C twice at the prompt          | `exit`        | cancelled              | 130  |
| `/new`                              | `new_session` | success                | 0    |
| SIGTERM                             | `cancelled`   | cancelled              | 130  |

Ending the conversation deliberately is a completed session; leaving by interrupt is upstream's
`Exit`. Like upstream, a session whose last turn was blocked or aborted does not report success.
Session limits (budget, turns) end it with their own outcome codes, as in `exec`.
"""

from __future__ import annotations

from vtcode.loop.outcomes import Outcome, OutcomeKind

__all__ = ["leave_outcome"]

_DETAIL = {
    OutcomeKind.COMPLETED: "the user ended the session",
    OutcomeKind.EXIT: "the user left the session with Ctrl-C",
    OutcomeKind.NEW_SESSION: "the user started a new session",
    OutcomeKind.CANCELLED: "turn cancelled",
}


def leave_outcome(kind: OutcomeKind, last_block: Outcome | None) -> Outcome:
    """The session outcome when the user leaves with `kind`; `last_block` is how the last user
    turn ended when it did not finish (blocked or aborted), else None."""
    block = last_block
    if kind is OutcomeKind.COMPLETED and block is not None:
        return Outcome(
            OutcomeKind.BLOCKED, detail=f"the last turn did not finish: {block.description()}"
        )
    return Outcome(kind, detail=_DETAIL.get(kind, ""))
