"""What `vtcode eval` shows a person: progress on stderr, the result table on stdout.

Progress is a rich progress bar on a terminal and one line per finished run otherwise (a CI
log), nothing with -q. The table has one row per task and one column group per agent, then the
agents' totals; the same figures are in `--json` and `--html`.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

from vtcode.eval.results import EvalPlan, EvalReport, RunRecord, TaskSummary
from vtcode.termtext import inert

__all__ = ["ProgressView", "fmt_rate", "render_table"]


def fmt_rate(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _num(x: float | None, digits: int = 0) -> str:
    if x is None:
        return "-"
    return f"{x:,.{digits}f}"


class ProgressView:
    """Progress of the runs on stderr."""

    def __init__(self, plan: EvalPlan, root: Path, *, enabled: bool, color: bool) -> None:
        from vtcode.cli.output import stderr_console

        self.plan = plan
        self.enabled = enabled
        self.console = stderr_console(color)
        self.tty = bool(getattr(sys.stderr, "isatty", lambda: False)())
        self.root = root
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> ProgressView:
        total = len(self.plan.agents) * len(self.plan.task_ids) * self.plan.k
        if self.enabled:
            agents = ", ".join(a.label for a in self.plan.agents)
            self.note(
                f"eval {self.plan.eval_id}: {len(self.plan.task_ids)} tasks x {self.plan.k} "
                f"x {agents} = {total} runs; results in {self.root}"
            )
        if self.enabled and self.tty:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task("runs", total=total)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: types.TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.__exit__(exc_type, exc, tb)
            self._bar = None

    def note(self, text: str) -> None:
        if self.enabled:
            self.console.print(inert(text), markup=False, highlight=False, soft_wrap=True)

    def update(self, record: RunRecord, done: int, total: int) -> None:
        if not self.enabled:
            return
        verdict = "pass" if record.passed else f"FAIL {record.failure}"
        line = (
            f"[{done}/{total}] {record.run_key}: {verdict} ({record.wall_seconds:.1f}s, "
            f"{_num(record.turns)} turns, {_num(record.prompt_tokens)}/"
            f"{_num(record.completion_tokens)} tok)"
        )
        if self._bar is not None:
            self._bar.update(self._task, completed=done, description=inert(record.run_key))
            self._bar.console.print(inert(line), markup=False, highlight=False)
        else:
            self.note(line)


def _cell(t: TaskSummary | None) -> str:
    """passed/runs, mean turns, mean tokens in/out, median seconds: one compact cell."""
    if t is None or not t.runs:
        return "-"
    return (
        f"{t.passed}/{t.runs}  {_num(t.mean_turns, 1)}t  "
        f"{_tok(t.mean_prompt_tokens)}/{_tok(t.mean_completion_tokens)}  "
        f"{_num(t.median_wall_seconds, 1)}s"
    )


def _tok(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x / 1000:.1f}k" if x >= 1000 else f"{x:.0f}"


def render_table(report: EvalReport) -> None:
    """The per-task table and the per-agent totals on stdout (plain text off a terminal)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False, soft_wrap=False, width=max(100, Console().width))
    by = {(t.task_id, t.agent): t for t in report.tasks}
    table = Table(
        title=f"eval {report.eval_id} (k={report.k})",
        title_justify="left",
        caption="passed/runs, mean turns, mean tokens in/out, median time",
        caption_justify="left",
        box=box.SIMPLE_HEAD,
    )
    table.add_column("task", no_wrap=True)
    for a in report.agents:
        table.add_column(a.label, justify="right", no_wrap=True)
    for tid in report.task_ids:
        table.add_row(inert(tid), *(_cell(by.get((tid, a.label))) for a in report.agents))
    console.print(table)
    k = report.k
    totals = Table(box=box.SIMPLE_HEAD)
    for head in ("agent", "passed", "pass@1", f"pass@{k}", f"pass^{k}", "tok in/out", "cost",
                 "s solved", "failures"):  # fmt: skip
        totals.add_column(head, justify="left" if head in ("agent", "failures") else "right")
    for s in report.summary:
        totals.add_row(
            s.agent,
            f"{s.passed}/{s.runs}",
            fmt_rate(s.pass_at_1),
            fmt_rate(s.pass_at_k),
            fmt_rate(s.pass_hat_k),
            f"{_tok(s.prompt_tokens)}/{_tok(s.completion_tokens)}",
            "-" if s.cost_usd is None else f"${s.cost_usd:.4f}",
            _num(s.median_wall_seconds_solved, 1),
            ", ".join(f"{k} {v}" for k, v in s.failures.items()) or "-",
        )
    console.print(totals)
