"""Run limits and the budget: checked before every model request, so they are never overshot."""

from __future__ import annotations

import dataclasses
import math

from vtcode.config.model import ContinuationPolicy, VtcodeConfig
from vtcode.errors import UsageError
from vtcode.events.types import Usage
from vtcode.loop.outcomes import Outcome, OutcomeKind
from vtcode.providers.base import Pricing


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """The limits of one run (config, overridden by `--max-turns` / `--max-budget-usd`)."""

    max_turns: int
    max_tool_loops: int
    max_tool_calls_per_turn: int  # 0 = no cap
    max_tool_wall_clock_secs: float
    max_budget_usd: float | None
    budget_warning_threshold: float
    loop_detection_repeats: int = 3
    max_task_retries: int = 0
    retry_backoff_secs: float = 2.0
    # one nudge when a headless run ends before any tool ran (continuation_policy != off)
    nudge_unfinished: bool = True
    # turns given to an answer that fails the output schema (`agent.output_schema_retries`)
    output_schema_retries: int = 2
    # consecutive read-only calls of one response run together, this many at once (0 = all)
    max_parallel_tool_calls: int = 1
    # consecutive replies with no tool call after which the run, asked to go on, stalls (0 = off)
    idle_turn_limit: int = 0

    @classmethod
    def from_config(
        cls,
        config: VtcodeConfig,
        *,
        max_turns: int | None = None,
        max_budget_usd: float | None = None,
    ) -> Limits:
        h = config.agent.harness
        return cls(
            max_turns=max(
                1, max_turns if max_turns is not None else config.automation.full_auto.max_turns
            ),
            max_tool_loops=config.tools.max_tool_loops,
            max_tool_calls_per_turn=h.max_tool_calls_per_turn,
            max_tool_wall_clock_secs=float(h.max_tool_wall_clock_secs),
            max_budget_usd=max_budget_usd if max_budget_usd is not None else h.max_budget_usd,
            budget_warning_threshold=h.budget_warning_threshold,
            max_task_retries=config.agent.max_task_retries,
            retry_backoff_secs=config.agent.task_retry_backoff_secs,
            nudge_unfinished=h.continuation_policy is not ContinuationPolicy.OFF,
            output_schema_retries=config.agent.output_schema_retries,
            max_parallel_tool_calls=h.max_parallel_tool_calls,
            idle_turn_limit=config.agent.idle_turn_limit,
        )


def check_run_caps(max_budget_usd: float | None) -> None:
    """A cap given by a caller (`vtcode.api.run`, chat, exec) is held to its config key's range,
    the one definition (`vtcode.config.ranges`) the CLI flag and `config check` use: a library
    caller passing max_budget_usd=-1 is refused (exit 2) like `--max-budget-usd -1`. (A turn
    cap below 1 is read as 1, and chat passes agent.max_conversation_turns, a wider range.)"""
    from vtcode.config.ranges import key_range

    key = "agent.harness.max_budget_usd"
    problem = None if max_budget_usd is None else key_range(key).problem(max_budget_usd)
    if problem is not None:
        raise UsageError(f"max_budget_usd: {max_budget_usd} {problem} (the range of {key})")


def require_budget_cap(config: VtcodeConfig, max_budget_usd: float | None) -> None:
    """`agent.harness.require_budget`: a run with no budget at all is refused (exit 2).

    Checked before anything is written; the price half is `require_budget_price`, once the
    provider (and so the model's price) is known, still before any request.
    """
    if not config.agent.harness.require_budget:
        return
    if max_budget_usd is None and config.agent.harness.max_budget_usd is None:
        raise UsageError(
            "agent.harness.require_budget is set, but no budget is set",
            hint="pass --max-budget-usd USD or set agent.harness.max_budget_usd",
        )


def require_budget_price(config: VtcodeConfig, pricing: Pricing | None, model: str) -> None:
    """`agent.harness.require_budget` with a model whose price is unknown: exit 2, as
    `sandbox.require` is for a missing sandbox. Without it such a budget only warns and the run
    spends without a cap."""
    if config.agent.harness.require_budget and pricing is None:
        raise UsageError(
            f"agent.harness.require_budget is set, but the budget cannot be enforced: "
            f"pricing is unknown for model {model!r}",
            hint="give the model a price ([providers.NAME.pricing]), or set "
            "agent.harness.require_budget = false",
        )


class Budget:
    """Aggregate usage and cost; decides budget stops and the one-time warnings."""

    def __init__(self, pricing: Pricing | None, limits: Limits, model: str) -> None:
        self.pricing = pricing
        self.limits = limits
        self.model = model
        self.usage = Usage()
        self.warned_threshold = False
        self.warned_unpriced = False
        self.warned_nonfinite = False

    def add(self, usage: Usage) -> None:
        self.usage = self.usage.add(usage)

    @property
    def cost(self) -> float | None:
        """The spend so far; None when unknown. A hostile or broken pricing table (inf, 1e309,
        inf * 0 = nan) gives no cost at all: JSON cannot carry it, and a made-up finite number
        would be a lie in `thread.completed`."""
        if self.pricing is None:
            return None
        cost = self.pricing.cost(self.usage)
        return cost if math.isfinite(cost) else None

    def warnings(self) -> list[str]:
        """Warnings to emit now (each at most once per run)."""
        out: list[str] = []
        if self.pricing is not None and self.cost is None and not self.warned_nonfinite:
            self.warned_nonfinite = True
            out.append(
                f"the pricing of model {self.model!r} gives a non-finite cost: total_cost_usd "
                "is omitted and max_budget_usd is not enforced"
            )
        cap = self.limits.max_budget_usd
        if cap is None:
            return out
        if self.pricing is None:
            if not self.warned_unpriced:
                self.warned_unpriced = True
                out.append(
                    f"pricing is unknown for model {self.model!r}: max_budget_usd "
                    f"(${cap:g}) is not enforced and total_cost_usd is omitted"
                )
            return out
        spent = self.cost or 0.0
        ratio = self.limits.budget_warning_threshold
        if not self.warned_threshold and cap > 0 and spent >= ratio * cap and spent <= cap:
            self.warned_threshold = True
            out.append(
                f"budget warning: spent ${spent:.4f} of ${cap:.4f} "
                f"({spent / cap:.0%}, warning threshold {ratio:.0%})"
            )
        return out

    def exceeded(self) -> Outcome | None:
        """A budget stop, or None: spend strictly over the cap (upstream's `>`), checked before
        the next model request so no request is ever sent once the cap is passed."""
        cap = self.limits.max_budget_usd
        if cap is None or self.pricing is None:
            return None
        spent = self.cost or 0.0
        if spent > cap:
            return Outcome(OutcomeKind.BUDGET_LIMIT_REACHED, limit=cap, actual=spent)
        return None


class LimitWatch:
    """The limits a run reaches by repeating itself: consecutive tool loops and identical rounds
    (same calls, same results), with the turn and budget limits of the whole run."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.tool_loops = 0  # consecutive responses that asked for tools
        self._signature: str | None = None
        self._repeats = 0
        # writes that succeeded this user turn, as name + arguments (a repeat gets a note)
        self.succeeded_writes: set[str] = set()
        self.idle_turns = 0  # consecutive responses with no tool call
        self.succeeded_calls = 0  # tool calls that succeeded, the whole run (never reset)
        # calls that ran (a command that failed is work done), except writes that changed no
        # file (a write of a file's own content: qwen0.5b rewrites the files it is shown)
        self.effective_calls = 0
        self.noop_writes = 0  # writes that succeeded and changed nothing
        self.attempted_calls = 0  # tool calls the model made, this run
        # of those, the well-formed ones: a known tool with valid arguments (it ran, or a
        # permission rule or hook refused it on purpose)
        self.well_formed_calls = 0
        self.text_calls = 0  # calls the harness read from the model's text (text_turn.py)
        self.check_rounds = 0  # rounds of the task's named test commands (task_checks.py)
        self.commands_ok: list[str] = []  # exec_command lines that exited 0, the whole run
        # the task's check commands seen failing this run (task_checks.py, verified_stop.py)
        self.checks_seen_failing: set[str] = set()

    def saw_response(self, *, had_tool_calls: bool) -> None:
        self.idle_turns = 0 if had_tool_calls else self.idle_turns + 1

    def stalled(self) -> Outcome | None:
        """Before asking the model again: the idle-turn limit, reached by replies that only
        talked (the harness kept the run going: a nudge, a retry, a revision round, a hook)."""
        lim = self.limits.idle_turn_limit
        if lim and self.idle_turns >= lim:
            return Outcome(OutcomeKind.STALLED, limit=lim, actual=self.idle_turns)
        return None

    def reset(self) -> None:
        """A new user turn starts counting afresh."""
        self.idle_turns = 0
        self.tool_loops = 0
        self._signature, self._repeats = None, 0
        self.succeeded_writes.clear()

    def saw_round(self, signature: str) -> None:
        """One round of tools, as a signature of its calls and results ('' = only polling)."""
        if signature and signature == self._signature:
            self._repeats += 1
        else:
            self._signature = signature or None
            self._repeats = 1 if signature else 0

    def session_limit(self, turns: int, budget: Budget) -> Outcome | None:
        lim = self.limits
        if turns >= lim.max_turns:
            return Outcome(OutcomeKind.TURN_LIMIT_REACHED, limit=lim.max_turns, actual=turns)
        return budget.exceeded()

    def limit_outcome(self, turns: int, budget: Budget) -> Outcome | None:
        lim = self.limits
        session = self.session_limit(turns, budget)
        if session is not None:
            return session
        if lim.max_tool_loops and self.tool_loops >= lim.max_tool_loops:
            return Outcome(
                OutcomeKind.TOOL_LOOP_LIMIT_REACHED,
                limit=lim.max_tool_loops,
                actual=self.tool_loops,
            )
        if lim.loop_detection_repeats and self._repeats >= lim.loop_detection_repeats:
            return Outcome(
                OutcomeKind.LOOP_DETECTED,
                detail=f"{self._repeats} identical tool rounds with identical results",
            )
        return None
