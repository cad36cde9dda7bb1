"""The context-management part of the loop: compaction, recovery, reset, hooks, steering.

`make_part(ctx)` gives the runner (through `vtcode.runtime.hooks.CompositeHooks`) one `LoopHooks`
that
- measures context pressure (`before_request` estimate, `after_response` reported prompt tokens)
  and decides compaction (`compaction_due`: hard anywhere, soft only at an outer boundary);
- compacts (`compact`): provider-written summary at outer boundaries, the local deterministic
  one inside a tool loop and for recovery, archive + envelope + `pre_compact` hook + boundary
  event with the segment transition + `session_start(source=compact)` hook;
- resets (`reset_due`/`reset`: manifest per `agent.harness.context_reset_mode`);
- writes the blocked handoff on hard blocks and failed recoveries (`on_finish`);
- runs lifecycle hooks (session_start/end, stop; pre/post_tool_use as the executor's `ToolHooks`);
- applies steering follow-ups (`follow_ups`), two-phase so a crash never replays one twice.

Warnings (hook failures, untrusted workspace hooks, a failed summary request) are `error` items
emitted through the run's recorder, which the runner hands every part once (`attach`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from vtcode.config.model import ContextResetMode
from vtcode.context.blocked import write_blocked_handoff
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
from vtcode.context.digest import digest_history
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
from vtcode.events.enums import HarnessEventKind
from vtcode.events.types import Usage
from vtcode.hooks.config import plan_hooks
from vtcode.hooks.models import (
    PostToolUsePayload,
    PreToolUsePayload,
    SessionEndPayload,
    SessionStartPayload,
    StopPayload,
)
from vtcode.hooks.runner import HookResult, HookRunner
from vtcode.loop.outcomes import Outcome, OutcomeKind
from vtcode.loop.parts import LoopHooks, ToolHooks
from vtcode.loop.recorder import Recorder
from vtcode.providers.base import ProviderError
from vtcode.providers.messages import Message, ModelRequest, ToolSpec
from vtcode.steering.queue import SteeringQueue

if TYPE_CHECKING:
    from vtcode.loop.exec_run import ExecContext

__all__ = ["ContextPart", "make_part"]


class ContextPart(LoopHooks):
    """Context management for one run of one session."""

    def __init__(
        self,
        *,
        workspace: Path,
        session_id: str,
        config: Any,
        provider: Any,
        resumed: bool = False,
        forked_from: str | None = None,
        estimator: TokenEstimator | None = None,
        env: Mapping[str, str] | None = None,
        thread_id: str | None = None,
    ) -> None:
        from vtcode.loop.transcript import TRANSCRIPT_NAME
        from vtcode.store.layout import session_dir

        self.workspace = Path(workspace).absolute()
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
        self.segments = SegmentTracker(provider=getattr(provider, "name", "unknown"))
        self.queue = SteeringQueue(
            self.workspace, session_id, lock_timeout=config.store.lock_timeout_secs
        )
        self.transcript_path = str(session_dir(self.workspace, session_id) / TRANSCRIPT_NAME)
        plan = plan_hooks(self.workspace, config, env=env)
        self.hooks = (
            None
            if plan.empty
            else HookRunner(
                plan,
                workspace=self.workspace,
                session_id=session_id,
                transcript_path=self.transcript_path,
                parent_env=env,
            )
        )
        self._pending_warnings: list[str] = list(plan.problems)
        if plan.skipped_untrusted:
            self._pending_warnings.append(
                f"skipped {plan.skipped_untrusted} hook(s) defined in this workspace's "
                "vtcode.toml: the workspace is not trusted for these exact hooks "
                "(`vtcode hooks trust` records trust; CI: VTCODE_TRUST_WORKSPACE=1)"
            )
        self._recorder: Recorder | None = None
        self.resumed = resumed
        self._in_tool_loop = False
        self._stalls = 0
        self._compacted_since_reset = False
        self._consume_manifest = read_reset_manifest(self.workspace) is not None
        self._delivered_uncommitted: list[str] = []
        self._delivered: set[str] = set()
        self._tagged: set[str] = set()
        self._orientations = 0
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
        if resumed and forked_from is None:
            self._load_resumed()

    # ------------------------------------------------------------------ setup

    def _load_resumed(self) -> None:
        from vtcode.loop.transcript import load_transcript

        state = load_state(self.workspace, self.session_id)
        messages = load_transcript(Path(self.transcript_path)).messages
        self._tagged = {m.intent_id for m in messages if m.role == "user" and m.intent_id}
        try:
            self.queue.replayable(self._tagged)
        except Exception as e:  # a damaged queue must not stop the resumed run
            self._pending_warnings.append(f"steering queue not reconciled: {e}")
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

    # ------------------------------------------------------------------ plumbing

    def attach(self, recorder: Recorder) -> None:
        self._recorder = recorder

    def tool_hooks(self) -> Sequence[ToolHooks]:
        """This part runs the `pre_tool_use`/`post_tool_use` lifecycle hooks, when configured."""
        if self.hooks is None or not (
            self.hooks.has("pre_tool_use") or self.hooks.has("post_tool_use")
        ):
            return ()
        return (self,)

    def pre_tool(self, name: str, arguments: Any) -> str | None:
        payload = PreToolUsePayload(**self._common(), tool_name=name, tool_input=arguments)
        for r in self._hook("pre_tool_use", payload, name):
            if r.denied:
                return r.reason
        return None

    def post_tool(self, name: str, arguments: Any, response: dict[str, Any]) -> None:
        payload = PostToolUsePayload(
            **self._common(), tool_name=name, tool_input=arguments, tool_response=response
        )
        self._hook("post_tool_use", payload, name)

    def _warn(self, message: str) -> None:
        self._pending_warnings.append(message)
        self._flush_warnings()

    def _flush_warnings(self) -> None:
        rec = self._recorder
        if rec is None or not self._pending_warnings:
            return
        pending, self._pending_warnings = self._pending_warnings, []
        for w in pending:
            rec.warning(w)

    def _report(self, results: list[HookResult]) -> None:
        for r in results:
            failure = r.failure()
            if failure is not None:
                self._warn(failure)

    def _hook(self, event: str, payload: Any, subject: str | None = None) -> list[HookResult]:
        if self.hooks is None or not self.hooks.has(event):
            return []
        results = self.hooks.run(event, payload, subject=subject)
        self._report(results)
        return results

    def _common(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "cwd": str(self.workspace),
            "transcript_path": self.transcript_path,
        }

    # ------------------------------------------------------------------ LoopHooks

    def orientation(self) -> str | None:
        self._orientations += 1
        self._flush_warnings()
        source: Literal["startup", "resume", "clear"] = (
            ("resume" if self.resumed else "startup") if self._orientations == 1 else "clear"
        )  # "clear": re-orientation after a context reset
        self._hook("session_start", SessionStartPayload(**self._common(), source=source), source)
        return None

    def before_request(self, request: ModelRequest) -> None:
        if self._delivered_uncommitted:
            self._commit_delivered()
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
        self._recorder = recorder
        self._flush_warnings()
        if trigger == "auto" and self._model_switch:
            trigger = "model_switch"
        self._model_switch = False
        digest = digest_history(history)
        if trigger == "manual":  # `/compact`: only when it makes the history smaller
            skip = would_not_shrink(
                history, summary=local_summary(digest), budget=self._budget(), estimator=self.est
            )
            if skip is not None:  # known before asking the provider for a summary
                self._warn(str(skip))
                return history
        summary, source = self._summary(history, digest, trigger)
        queue_state = self._queue_state()
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
            self._warn(str(e))
            return history
        payload = pre_compact_payload(
            prep,
            session_id=self.session_id,
            workspace=self.workspace,
            transcript_path=self.transcript_path,
        )
        self._hook("pre_compact", payload, trigger)
        finish_compaction(prep, workspace=self.workspace, session_id=self.session_id)
        transition = self.segments.compacted(prep.history)
        recorder.emit(boundary_event(prep, thread_id=self.thread_id, transition=transition))
        self._hook(
            "session_start", SessionStartPayload(**self._common(), source="compact"), "compact"
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
            self._warn(
                f"the compacted history (about {after} tokens with the system prompt and tools) "
                f"is still at or above the compaction threshold ({hard})"
            )
        return prep.history

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
        self._recorder = recorder
        self._flush_warnings()
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
        self._recorder = recorder
        self._flush_warnings()
        if self._delivered_uncommitted:
            self._commit_delivered()
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
        self._hook("stop", StopPayload(**self._common()))
        self._hook(
            "session_end",
            SessionEndPayload(**self._common(), reason=kind.code, subtype=kind.subtype.value),
            kind.code,
        )
        self._save_state()

    def follow_ups(self) -> list[Message]:
        try:
            pending = self.queue.pending()
        except Exception as e:  # a damaged queue file must not end the run
            self._warn(f"steering queue unreadable, follow-ups not applied: {e}")
            return []
        out: list[Message] = []
        for intent in pending:
            if intent.id in self._delivered or intent.id in self._tagged:
                continue
            self._delivered.add(intent.id)
            self._delivered_uncommitted.append(intent.id)
            out.append(Message(role="user", content=intent.text, intent_id=intent.id))
        return out

    # ------------------------------------------------------------------ public extras

    def fresh_context(self) -> None:
        """Clear transient state (pressure, pending, stalls, segment lineage)."""
        self._stalls = 0
        self._compacted_since_reset = False
        self.segments.reset()
        self.policy.compacted(0)
        self._reset_estimate()

    # ------------------------------------------------------------------ internals

    def _summary(self, history: list[Message], digest: Any, trigger: str) -> tuple[str, str]:
        """Provider summary at outer boundaries; local inside a tool loop and for recovery."""
        if trigger != "recovery" and not self._in_tool_loop:
            try:
                text, _usage = provider_summary(self.provider, history)
                return text, "provider"
            except ProviderError as e:
                self._warn(
                    f"compaction summary request failed ({e.message}); used the local summary"
                )
        return local_summary(digest), "local"

    def _queue_state(self) -> tuple[list[Any], list[str]]:
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
            self._warn(f"could not mark follow-ups applied yet: {e}")

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
                    provider=getattr(self.provider, "name", None),
                    turns=self._turns,
                    compactions=self._compactions,
                    last_history_artifact_path=self._last_artifact,
                    envelope=self._envelope,
                    updated_at=_now(),
                ),
            )
        except OSError as e:
            self._warn(f"could not save the context state: {e}")


def _now() -> str:
    from vtcode.clock import rfc3339

    return rfc3339()


def make_part(ctx: ExecContext) -> LoopHooks | None:
    """The context part for one exec-style run (`vtcode.runtime.hooks` composes the parts)."""
    return ContextPart(
        workspace=ctx.workspace,
        session_id=ctx.session_id,
        config=ctx.config,
        provider=ctx.provider,
        resumed=ctx.resumed,
        forked_from=ctx.forked_from,
    )
