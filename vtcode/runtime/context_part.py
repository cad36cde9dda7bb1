"""The context-management part of the loop: compaction, recovery compaction and reset.

`ContextPart` (one per run; `vtcode.runtime.hooks` composes it with the other parts)
- measures context pressure (`before_request` estimate, `after_response` reported prompt tokens)
  and decides compaction (`compaction_due`: hard anywhere, soft only at an outer boundary);
- compacts (`compact`): provider-written summary at outer boundaries, the local deterministic
  one inside a tool loop and for recovery, archive + envelope + `pre_compact` hook + boundary
  event + the `session_start` hook of source `compact`;
- resets (`reset_due`/`reset`: manifest per `agent.harness.context_reset_mode`);
- writes the blocked handoff on hard blocks and failed recoveries (`on_finish`), and the
  context state that outlives the run.

Lifecycle hooks and steering are their own parts (`lifecycle_part`, `steering_part`); this one
uses the run's `SessionHooks` for the compaction hooks and the steering part's queue state for
the memory envelope."""

from __future__ import annotations

import dataclasses

from vtcode.config.model import ContextResetMode, VtcodeConfig
from vtcode.context.blocked import write_blocked_handoff
from vtcode.context.clearing import ClearingPolicy, clear_tool_results
from vtcode.context.compaction import CompactionBudget
from vtcode.context.compactor import (
    CompactionWouldNotShrink,
    boundary_event,
    compaction_budget,
    finish_compaction,
    pre_compact_payload,
    prepare_compaction,
    would_not_shrink,
)
from vtcode.context.digest import HistoryDigest, digest_history
from vtcode.context.models import SessionMemoryEnvelope
from vtcode.context.reset import (
    consume_reset_manifest,
    read_reset_manifest,
    should_reset,
    write_reset_manifest,
)
from vtcode.context.segments import SegmentTracker
from vtcode.context.state import ContextState, load_state, save_state
from vtcode.context.summary import local_summary, provider_summary
from vtcode.context.thresholds import CompactionDecision, CompactionPolicy, resolve_thresholds
from vtcode.context.tokens import TokenEstimator, default_estimator
from vtcode.events.enums import CompactionMode, CompactionTrigger, HarnessEventKind
from vtcode.events.types import ThreadCompactBoundaryEvent, Usage
from vtcode.hooks.models import PostCompactPayload, SessionStartPayload
from vtcode.loop.outcomes import Outcome, OutcomeKind
from vtcode.loop.parts import LoopHooks
from vtcode.loop.recorder import Recorder
from vtcode.messages import Message, ModelRequest, ToolSpec
from vtcode.providers.base import Provider, ProviderError
from vtcode.runtime.session_hooks import SessionHooks
from vtcode.runtime.steering_part import SteeringPart

__all__ = ["ContextPart"]


class ContextPart(LoopHooks):
    """Context management for one run of one session."""

    def __init__(
        self,
        *,
        hooks: SessionHooks,
        config: VtcodeConfig,
        provider: Provider,
        steering: SteeringPart | None = None,
        resumed_transcript: list[Message] | None = None,
        estimator: TokenEstimator | None = None,
        thread_id: str | None = None,
    ) -> None:
        self.hooks = hooks
        self.warnings = hooks.warnings
        self.steering = steering
        self.workspace = hooks.workspace
        session_id = hooks.session_id
        self.session_id = session_id
        self.thread_id = thread_id or session_id
        self.config = config
        self.provider = provider
        self.est = estimator or default_estimator()
        h = config.agent.harness
        self.thresholds = resolve_thresholds(
            h.auto_compaction_threshold_tokens,
            provider.context_window,
            config.context.max_context_tokens,
        )
        self.policy = CompactionPolicy(self.thresholds, auto_enabled=h.auto_compaction_enabled)
        self.segments = SegmentTracker(provider=provider.name)
        self.transcript_path = hooks.transcript_path
        self._in_tool_loop = False
        self._stalls = 0
        self._compacted_since_reset = False
        self._consume_manifest = read_reset_manifest(self.workspace) is not None
        self._turns = 0
        self._compactions = 0
        self._envelope: SessionMemoryEnvelope | None = None
        self._last_artifact: str | None = None
        self._model_switch = False
        self._fixed_tokens = 0
        self._tools_memo: tuple[tuple[int, ...], int, tuple[ToolSpec, ...]] | None = None
        self._est_count = 0
        self._est_total = 0
        self._est_last: Message | None = None
        if resumed_transcript is not None:
            self._load_resumed(resumed_transcript)

    # ------------------------------------------------------------------ setup

    def _load_resumed(self, messages: list[Message]) -> None:
        state = load_state(self.workspace, self.session_id)
        estimate = self.est.messages(m for m in messages if m.role != "system")
        prompt = 0
        if state is not None:
            self._turns = state.turns
            self._compactions = state.compactions
            self._envelope = state.envelope
            self._last_artifact = state.last_history_artifact_path
            self.policy.pending = state.compaction_pending
            prompt = state.prompt_tokens
            switch = state.model is not None and state.model != self.provider.model
            self._model_switch = bool(
                switch and messages and self.config.agent.harness.compact_on_model_switch
            )
        if estimate == 0 and not self._model_switch:
            self.policy.pending = False
        self.policy.record_estimate(estimate)
        self.policy.record_reported(prompt if estimate else 0)

    # ------------------------------------------------------------------ LoopHooks

    def before_request(self, request: ModelRequest) -> None:
        if self._consume_manifest:
            # The orientation of this (fresh) context has been rendered: the reset is done.
            consume_reset_manifest(self.workspace)
            self._consume_manifest = False
        self.segments.observe(request)
        self.policy.record_estimate(self._estimate(request))

    def after_response(self, usage: Usage) -> None:
        self._turns += 1
        self.policy.record_reported(usage.input_tokens)

    def compaction_due(self, *, in_tool_loop: bool) -> bool:
        self._in_tool_loop = in_tool_loop
        if self._model_switch and not in_tool_loop:
            return True
        return self.policy.decide(in_tool_loop=in_tool_loop) is CompactionDecision.COMPACT

    def compact(self, history: list[Message], *, trigger: str, recorder: Recorder) -> list[Message]:
        self.warnings.attach(recorder)  # the recorder this call reports through
        self.warnings.flush()
        if trigger == "auto" and self._model_switch:
            trigger = "model_switch"
        self._model_switch = False
        digest = digest_history(history)
        if trigger == "manual":  # `/compact`: only when it makes the history smaller
            skip = would_not_shrink(
                history, summary=local_summary(digest), budget=self._budget(), estimator=self.est
            )
            if skip is not None:  # known before asking the provider for a summary
                self.warnings.warn(str(skip))
                return history
        summary, source = self._summary(history, digest, trigger)
        queue_state = self.steering.queue_state() if self.steering is not None else ([], [])
        try:
            prep = prepare_compaction(
                history,
                workspace=self.workspace,
                session_id=self.session_id,
                config=self.config,
                trigger=trigger,
                summary=summary,
                summary_source=source,
                turn=self._turns,
                budget=self._budget(),
                estimator=self.est,
                digest=digest,
                previous_envelope=self._envelope,
                pending_intents=queue_state[0],
                applied_intent_ids=queue_state[1],
                shrink_only=trigger == "manual",  # `/compact`: only when it makes it smaller
            )
        except CompactionWouldNotShrink as e:
            # Nothing was written and no hook ran: the history stays as it is (no boundary).
            self.warnings.warn(str(e))
            return history
        payload = pre_compact_payload(
            prep,
            session_id=self.session_id,
            workspace=self.workspace,
            transcript_path=self.transcript_path,
        )
        self.hooks.run("pre_compact", payload, trigger)
        finish_compaction(prep, workspace=self.workspace, session_id=self.session_id)
        transition = self.segments.compacted(prep.history)
        recorder.emit(boundary_event(prep, thread_id=self.thread_id, transition=transition))
        if self.hooks.has("post_compact"):
            after_payload = PostCompactPayload(**dataclasses.asdict(payload))
            self.hooks.run("post_compact", after_payload, trigger)
        self.hooks.run(
            "session_start", SessionStartPayload(**self.hooks.common(), source="compact"), "compact"
        )
        self._compactions += 1
        self._envelope = prep.envelope
        self._last_artifact = prep.artifact_path
        self._reset_estimate()
        after = self._fixed_tokens + self.est.messages(prep.history)
        self.policy.compacted(after)
        if trigger == "auto":
            self._compacted_since_reset = True
        hard = self.thresholds.hard
        if hard is not None and after >= hard and trigger != "recovery":
            self.warnings.warn(
                f"the compacted history (about {after} tokens with the system prompt and tools) "
                f"is still at or above the compaction threshold ({hard})"
            )
        return prep.history

    def edit_history(self, history: list[Message], recorder: Recorder) -> list[Message]:
        """Tool-result clearing past its trigger: a new request segment, reported as a local
        `thread.compact_boundary` whose message counts are equal (nothing was removed)."""
        cfg = self.config.agent.harness.tool_result_clearing
        if not cfg.enabled:
            return history
        policy = ClearingPolicy(
            trigger_tokens=cfg.trigger_tokens,
            keep_tool_uses=cfg.keep_tool_uses,
            clear_at_least_tokens=cfg.clear_at_least_tokens,
            clear_tool_inputs=cfg.clear_tool_inputs,
        )
        cleared = clear_tool_results(history, policy, self.est, fixed_tokens=self._fixed_tokens)
        if cleared is None:
            return history
        transition = self.segments.compacted(cleared.history, reason="context_edit")
        prev, new = transition.previous, transition.new
        recorder.emit(
            ThreadCompactBoundaryEvent(
                thread_id=self.thread_id,
                trigger=CompactionTrigger.AUTO,
                mode=CompactionMode.LOCAL,
                original_message_count=len(history),
                compacted_message_count=len(cleared.history),
                previous_segment_id=prev.id if prev else None,
                new_segment_id=new.id,
                previous_prefix_hash=prev.prefix_hash if prev else None,
                new_prefix_hash=new.prefix_hash,
                previous_catalog_hash=prev.catalog_hash if prev else None,
                new_catalog_hash=new.catalog_hash,
            )
        )
        self._reset_estimate()
        return cleared.history

    def reset_due(self) -> bool:
        h = self.config.agent.harness
        due, _ = should_reset(
            h.context_reset_mode,
            compaction=self._compacted_since_reset,
            stall_count=self._stalls,
            threshold=h.context_reset_stall_threshold,
        )
        return due

    def reset(self, recorder: Recorder) -> None:
        self.warnings.attach(recorder)  # the recorder this call reports through
        self.warnings.flush()
        mode = self.config.agent.harness.context_reset_mode
        by_compaction = mode is ContextResetMode.ON_COMPACTION and self._compacted_since_reset
        write_reset_manifest(
            self.workspace,
            trigger="compaction" if by_compaction else "stall",
            stall_count=0 if by_compaction else self._stalls,
        )
        self._consume_manifest = True
        self.fresh_context()

    def on_turn_end(self, *, made_progress: bool) -> None:
        self._stalls = 0 if made_progress else self._stalls + 1

    def on_finish(self, outcome: Outcome, recorder: Recorder) -> None:
        self.warnings.attach(recorder)  # the recorder this call reports through
        self.warnings.flush()
        kind = outcome.kind
        if kind.is_hard_block or kind is OutcomeKind.BLOCKED:
            extra = [self._last_artifact] if self._last_artifact else []
            current, archive = write_blocked_handoff(
                self.workspace,
                self.session_id,
                kind.code,
                outcome.description(),
                extra_paths=extra,
            )
            for path in (current, archive):
                rel = str(path.relative_to(self.workspace)) if path.is_absolute() else str(path)
                recorder.harness(HarnessEventKind.BLOCKED_HANDOFF_WRITTEN, path=rel)
        self._save_state()

    # ------------------------------------------------------------------ public extras

    def compacts(self) -> bool:
        return True

    def set_segment_mode(self, mode: str) -> None:
        self.segments.mode = mode

    def current_segment(self) -> str | None:
        current = self.segments.current
        return None if current is None else current.id

    def fresh_context(self) -> None:
        """Clear transient state (pressure, pending, stalls, segment lineage)."""
        self._stalls = 0
        self._compacted_since_reset = False
        self.segments.reset()
        self.policy.compacted(0)
        self._reset_estimate()

    # ------------------------------------------------------------------ internals

    def _summary(
        self, history: list[Message], digest: HistoryDigest, trigger: str
    ) -> tuple[str, str]:
        """Provider summary at outer boundaries; local inside a tool loop and for recovery."""
        if trigger != "recovery" and not self._in_tool_loop:
            try:
                text, _usage = provider_summary(self.provider, history)
                return text, "provider"
            except ProviderError as e:
                self.warnings.warn(
                    f"compaction summary request failed ({e.message}); used the local summary"
                )
        return local_summary(digest), "local"

    def _budget(self) -> CompactionBudget:
        return compaction_budget(
            self.config, self.thresholds, self.provider.context_window, self._fixed_tokens
        )

    def _tools_tokens(self, tools: tuple[ToolSpec, ...]) -> int:
        ident = tuple(id(t) for t in tools)
        memo = self._tools_memo
        if memo is not None and memo[0] == ident:
            return memo[1]
        n = self.est.tools(tools)
        self._tools_memo = (ident, n, tools)  # the tuple keeps the specs (and their ids) alive
        return n

    def _reset_estimate(self) -> None:
        self._est_count, self._est_total, self._est_last = 0, 0, None

    def _estimate(self, request: ModelRequest) -> int:
        """System + tools + messages; messages counted incrementally (turns only append)."""
        msgs = request.messages
        system = msgs[0] if msgs and msgs[0].role == "system" else None
        body = msgs[1:] if system is not None else msgs
        k = self._est_count
        if 0 < k <= len(body) and body[k - 1] is self._est_last:
            self._est_total += self.est.messages(body[k:])
        else:
            self._est_total = self.est.messages(body)
        self._est_count = len(body)
        self._est_last = body[-1] if body else None
        self._fixed_tokens = self._tools_tokens(request.tools) + (
            self.est.message(system) if system is not None else 0
        )
        return self._fixed_tokens + self._est_total

    def _save_state(self) -> None:
        try:
            save_state(
                self.workspace,
                ContextState(
                    session_id=self.session_id,
                    compaction_pending=self.policy.pending,
                    prompt_tokens=self.policy.pressure,
                    model=self.provider.model,
                    provider=self.provider.name,
                    turns=self._turns,
                    compactions=self._compactions,
                    last_history_artifact_path=self._last_artifact,
                    envelope=self._envelope,
                    updated_at=_now(),
                ),
            )
        except OSError as e:
            self.warnings.warn(f"could not save the context state: {e}")


def _now() -> str:
    from vtcode.clock import rfc3339

    return rfc3339()
