"""The eval's HTML page: one self-contained file (inline CSS and SVG, no script, a strict CSP)
with the agents' totals, charts of pass rate, tokens and time per task and per agent, and
every run with its failure class and where its workspace and log are kept.

Built from the result document alone, with vtcode/report's stylesheet, escaping and charts;
every string from a task or a log is escaped.
"""

from __future__ import annotations

from collections.abc import Callable

from vtcode import __version__
from vtcode.eval.results import EvalReport, TaskSummary
from vtcode.report.bars import SERIES_COLORS, grouped_bars_svg
from vtcode.report.fmt import CSP, esc
from vtcode.report.html import page_css
from vtcode.report.plot import fmt_tokens

__all__ = ["render_report"]

_EXTRA_CSS = """
table.grid { border-collapse: collapse; width: 100%; font-size: 13px; }
table.grid th, table.grid td { padding: 4px 8px; border-bottom: 1px solid var(--line);
  text-align: right; white-space: nowrap; }
table.grid th:first-child, table.grid td:first-child, table.grid td.l { text-align: left; }
td.pass { color: var(--ok); font-weight: 600; } td.fail { color: var(--bad); font-weight: 600; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 18px; }
.legend span { display: inline-block; margin-right: 14px; font-size: 12px; }
.legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px;
  border-radius: 2px; }
table.grid td.l { white-space: normal; }
table.grid td.path { font-family: var(--mono); font-size: 11px; text-align: left;
  white-space: normal; word-break: break-all; }
"""


def _rate(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _n(x: float | None, digits: int = 0) -> str:
    return "-" if x is None else f"{x:,.{digits}f}"


def _secs(x: float) -> str:
    return f"{x:.1f}s" if x < 100 else f"{x:.0f}s"


def _legend(report: EvalReport) -> str:
    items = "".join(
        f'<span><i style="background:{SERIES_COLORS[j % len(SERIES_COLORS)]}"></i>'
        f"{esc(a.label)}</span>"
        for j, a in enumerate(report.agents)
    )
    return f'<div class="legend">{items}</div>'


def _per_task_chart(
    report: EvalReport,
    title: str,
    value: Callable[[TaskSummary], float | None],
    fmt: Callable[[float], str],
    top: float | None = None,
) -> str:
    by = {(t.task_id, t.agent): t for t in report.tasks}
    values = [
        [value(by[(tid, a.label)]) if (tid, a.label) in by else None for a in report.agents]
        for tid in report.task_ids
    ]
    series = [a.label for a in report.agents]
    return grouped_bars_svg(title, report.task_ids, series, values, fmt, top=top)


def _summary_table(report: EvalReport) -> str:
    k = report.k
    head = ("agent", "runs", "passed", "pass@1", f"pass@{k}", f"pass^{k}", "tokens in",
            "tokens out", "cost", "median s (solved)", "first prompt tok", "failures")  # fmt: skip
    rows = []
    for s in report.summary:
        failures = ", ".join(f"{esc(c)} {n}" for c, n in s.failures.items()) or "-"
        cost = "-" if s.cost_usd is None else f"${s.cost_usd:.4f}"
        cells = [esc(s.agent), str(s.runs), str(s.passed), _rate(s.pass_at_1),
                 _rate(s.pass_at_k), _rate(s.pass_hat_k), _n(s.prompt_tokens),
                 _n(s.completion_tokens), cost, _n(s.median_wall_seconds_solved, 1),
                 _n(s.median_first_prompt_tokens)]  # fmt: skip
        rows.append(
            "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + f'<td class="l">{failures}</td></tr>'
        )
    ths = "".join(f"<th>{esc(h)}</th>" for h in head)
    return f'<table class="grid"><tr>{ths}</tr>{"".join(rows)}</table>'


def _short_path(path: str) -> str:
    """`runs/<key>/workspace` of a kept workspace (the full path is the cell's title)."""
    parts = path.split("/")
    return "/".join(parts[-3:]) if len(parts) > 3 else path


def _plain(x: float) -> str:
    return f"{x:g}"


def _runs_table(report: EvalReport) -> str:
    head = ("run", "result", "exit", "outcome", "turns", "requests", "tools", "tok in/out",
            "cost", "time", "workspace")  # fmt: skip
    rows = []
    for r in report.runs:
        verdict = "pass" if r.passed else f"fail: {r.failure}"
        cls = "pass" if r.passed else "fail"
        cost = "-" if r.cost_usd is None else f"${r.cost_usd:.4f}"
        rows.append(
            f'<tr><td>{esc(r.run_key)}</td><td class="{cls}">{esc(verdict)}</td>'
            f"<td>{esc(r.exit_code)}</td><td>{esc(r.outcome_subtype or '-')}</td>"
            f"<td>{_n(r.turns)}</td><td>{_n(r.model_requests)}</td><td>{_n(r.tool_calls)}</td>"
            f"<td>{_n(r.prompt_tokens)}/{_n(r.completion_tokens)}</td><td>{cost}</td>"
            f'<td>{_secs(r.wall_seconds)}</td><td class="path" title="{esc(r.workspace)}">'
            f"{esc(_short_path(r.workspace))}</td></tr>"
        )
    ths = "".join(f"<th>{esc(h)}</th>" for h in head)
    return f'<table class="grid"><tr>{ths}</tr>{"".join(rows)}</table>'


def _agent_charts(report: EvalReport) -> str:
    agents = [s.agent for s in report.summary]
    one = ["value"]
    pass_rows = [[s.pass_at_1] for s in report.summary]
    tok_rows = [
        [None if s.prompt_tokens is None else float(s.prompt_tokens + (s.completion_tokens or 0))]
        for s in report.summary
    ]
    time_rows = [[s.wall_seconds] for s in report.summary]
    return (
        grouped_bars_svg("pass@1 per agent", agents, one, pass_rows, _rate, top=1.0)
        + grouped_bars_svg("tokens per agent (in + out)", agents, one, tok_rows, fmt_tokens)
        + grouped_bars_svg("wall time per agent (all runs)", agents, one, time_rows, _secs)
    )


def render_report(report: EvalReport) -> str:
    """The whole page as one string."""
    state = "complete" if report.complete else "incomplete"
    charts = "".join(
        f'<div class="card">{svg}</div>'
        for svg in (
            _per_task_chart(report, "pass@1 per task", lambda t: t.pass_at_1, _rate, 1.0),
            _per_task_chart(
                report,
                "mean prompt tokens per run",
                lambda t: t.mean_prompt_tokens,
                fmt_tokens,
            ),
            _per_task_chart(
                report, "median wall time per run", lambda t: t.median_wall_seconds, _secs
            ),
            _per_task_chart(report, "mean turns per run", lambda t: t.mean_turns, _plain),
        )
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="vtcode {esc(__version__)}">'
        f"<title>vtcode eval {esc(report.eval_id)}</title>"
        f"<style>{page_css()}{_EXTRA_CSS}</style></head><body><main>"
        f'<div class="card top"><div><div class="kicker">vtcode eval</div>'
        f"<h1>{esc(report.eval_id)}</h1>"
        f"<div>{esc(report.suite)} · {len(report.task_ids)} tasks · k={report.k} · "
        f"{len(report.runs)} runs ({state}) · {esc(report.created_at)}</div></div></div>"
        f'<section class="card"><h2>Agents</h2>{_summary_table(report)}'
        f'<div class="charts">{_agent_charts(report)}</div></section>'
        f'<section class="card"><h2>Per task</h2>{_legend(report)}'
        f'<div class="charts">{charts}</div></section>'
        f'<section class="card"><h2>Runs</h2>{_runs_table(report)}</section>'
        f"<footer>vtcode {esc(__version__)} · from the eval's run records</footer>"
        "</main></body></html>\n"
    )
