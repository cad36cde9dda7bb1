"""The steering part: follow-ups queued with `vtcode steer` (or `/steer`) join the run.

Two-phase so a crash never applies one twice: a follow-up is *delivered* when it becomes a user
message (tagged with its intent id) and *committed* (marked applied in the queue) once the next
request, which carries it, is made; a resumed run skips intents its transcript already has.
"""

from __future__ import annotations

from vtcode.loop.outcomes import Outcome
from vtcode.loop.parts import LoopHooks
from vtcode.loop.recorder import Recorder
from vtcode.messages import Message, ModelRequest
from vtcode.runtime.session_hooks import PartWarnings
from vtcode.steering.models import QueuedFollowUpIntent
from vtcode.steering.queue import SteeringQueue

__all__ = ["SteeringPart"]


class SteeringPart(LoopHooks):
    def __init__(
        self,
        queue: SteeringQueue,
        warnings: PartWarnings,
        *,
        resumed_transcript: list[Message] | None = None,
    ) -> None:
        self.queue = queue
        self.warnings = warnings
        self._delivered_uncommitted: list[str] = []
        self._delivered: set[str] = set()
        self._tagged: set[str] = set()
        if resumed_transcript is not None:
            self._tagged = {
                m.intent_id for m in resumed_transcript if m.role == "user" and m.intent_id
            }
            try:
                self.queue.replayable(self._tagged)
            except Exception as e:  # a damaged queue must not stop the resumed run
                warnings.hold(f"steering queue not reconciled: {e}")

    def before_request(self, request: ModelRequest) -> None:
        if self._delivered_uncommitted:
            self._commit_delivered()

    def on_finish(self, outcome: Outcome, recorder: Recorder) -> None:
        if self._delivered_uncommitted:
            self._commit_delivered()

    def follow_ups(self) -> list[Message]:
        try:
            pending = self.queue.pending()
        except Exception as e:  # a damaged queue file must not end the run
            self.warnings.warn(f"steering queue unreadable, follow-ups not applied: {e}")
            return []
        out: list[Message] = []
        for intent in pending:
            if intent.id in self._delivered or intent.id in self._tagged:
                continue
            self._delivered.add(intent.id)
            self._delivered_uncommitted.append(intent.id)
            out.append(Message(role="user", content=intent.text, intent_id=intent.id))
        return out

    def queue_state(self) -> tuple[list[QueuedFollowUpIntent], list[str]]:
        """Pending intents and applied ids, for the memory envelope of a compaction."""
        try:
            st = self.queue.state()
        except Exception:
            return [], []
        return list(st.pending), list(st.applied_intent_ids)

    def _commit_delivered(self) -> None:
        ids, self._delivered_uncommitted = self._delivered_uncommitted, []
        try:
            self.queue.mark_applied(ids)
        except Exception as e:  # busy or damaged: stay delivered in memory, retry next turn
            self._delivered_uncommitted = ids + self._delivered_uncommitted
            self.warnings.warn(f"could not mark follow-ups applied yet: {e}")
