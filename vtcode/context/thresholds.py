"""When to compact: the hard and soft thresholds, and the pressure that is compared to them.

Upstream's rules (reference §4.2): an explicit `agent.harness.auto_compaction_threshold_tokens`
wins and is capped by the provider's capacity only; otherwise the hard threshold is round(0.9 x
min(provider capacity, `context.max_context_tokens`)), where 0 (or unknown) means "that side is
absent". Soft = hard - hard // 10. Reaching soft marks compaction *pending*, performed at the
next outer turn boundary; reaching hard compacts before the next model request. Inside an active
tool loop only the local deterministic summary may be used (no hidden summary model call).

The pressure is the size of the last request: the provider-reported prompt tokens, raised to the
pre-request estimate (max of the two), exactly what upstream compares.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = [
    "CompactionDecision",
    "CompactionPolicy",
    "Thresholds",
    "effective_budget",
    "resolve_thresholds",
]

TRIGGER_RATIO_TENTHS = 9  # DEFAULT_COMPACTION_TRIGGER_RATIO = 0.90


def effective_budget(provider_capacity: int | None, session_budget: int) -> int:
    """min of both when both > 0; else whichever is > 0; else 0 (nothing known)."""
    p = provider_capacity or 0
    s = session_budget or 0
    if p > 0 and s > 0:
        return min(p, s)
    return max(p, s, 0)


@dataclass(frozen=True, slots=True)
class Thresholds:
    """`hard` and `soft` in tokens (None: no threshold can be derived, never compact)."""

    hard: int | None
    soft: int | None
    budget: int  # the effective session budget the hard threshold came from (0 = unknown)

    @property
    def enabled(self) -> bool:
        return self.hard is not None


def resolve_thresholds(
    configured: int | None, provider_capacity: int | None, session_budget: int
) -> Thresholds:
    """Upstream's `resolve_effective_compaction_threshold`, plus the soft threshold."""
    budget = effective_budget(provider_capacity, session_budget)
    hard: int | None
    if configured is not None and configured > 0:
        hard = max(configured, 1)
        if provider_capacity and provider_capacity > 0:
            hard = min(hard, provider_capacity)
    elif budget > 0:
        # round half away from zero, in integers (Rust's f64::round on 0.9 x budget)
        hard = min((budget * TRIGGER_RATIO_TENTHS + 5) // 10, budget)
        hard = max(hard, 1)
    else:
        hard = None
    soft = None if hard is None else max(hard - hard // 10, 1)
    return Thresholds(hard=hard, soft=soft, budget=budget)


class CompactionDecision(enum.Enum):
    """What `CompactionPolicy.decide` concluded."""

    NONE = "none"
    PENDING = "pending"  # soft reached inside a tool loop: wait for an outer boundary
    COMPACT = "compact"


class CompactionPolicy:
    """Tracks context pressure and the pending flag; decides, never compacts itself."""

    def __init__(self, thresholds: Thresholds, *, auto_enabled: bool = True) -> None:
        self.thresholds = thresholds
        self.auto_enabled = auto_enabled
        self.pending = False
        self.reported = 0  # provider-reported prompt tokens of the last response
        self.estimated = 0  # pre-request estimate of the last request

    @property
    def pressure(self) -> int:
        """Tokens of the last request: max(provider-reported, estimate)."""
        return max(self.reported, self.estimated)

    def record_estimate(self, tokens: int) -> None:
        """A new request is about to go out; its reported size is not known yet."""
        self.estimated = tokens
        self.reported = 0

    def record_reported(self, prompt_tokens: int) -> None:
        self.reported = max(0, prompt_tokens)

    def decide(self, *, in_tool_loop: bool) -> CompactionDecision:
        """COMPACT at hard (anywhere) or at an outer boundary with compaction pending."""
        t = self.thresholds
        if not self.auto_enabled or t.hard is None or t.soft is None:
            return CompactionDecision.NONE
        p = self.pressure
        if p >= t.hard:
            return CompactionDecision.COMPACT
        if p >= t.soft:
            self.pending = True
        if self.pending:
            return CompactionDecision.PENDING if in_tool_loop else CompactionDecision.COMPACT
        return CompactionDecision.NONE

    def compacted(self, new_estimate: int) -> None:
        """After any compaction: pending cleared, pressure is the new history's estimate."""
        self.pending = False
        self.reported = 0
        self.estimated = new_estimate
