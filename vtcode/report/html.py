"""`vtcode sessions show ID --html FILE`: one self-contained HTML page of a session.

Inline CSS and inline SVG only: no script, no framework, no network (a Content-Security-Policy
forbids all of them, as a second line of defence). Everything that comes from the log or the
session's artifacts is hostile (tool output is whatever a command printed, a prompt or a diff is
whatever was typed or written) and goes through `fmt.esc`.

The page: the session's header and tiles (`summary`), one card per run with its prompt, provider
and model (`summary`), the context/cost chart (`plot`), then the timeline of turns, grouped by
run, each entry rendered by `items` (file changes with the diffs recorded at write time).
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import IO

from vtcode import __version__
from vtcode.outpath import check_output, write_output
from vtcode.report.fmt import badge, clip, esc, fmt_duration, fmt_time, fmt_usage
from vtcode.report.items import entry_html
from vtcode.report.model import Segment, SessionReport, TurnView, build_report
from vtcode.report.plot import COST_COLOR, TOKENS_COLOR, context_cost_svg
from vtcode.report.summary import header, runs_section

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'"


def _run_divider(report: SessionReport, number: int) -> str:
    """Where a run starts on the timeline (shown only for a session with several runs)."""
    run = report.runs[number - 1]
    verb = "started" if number == 1 else "resumed"
    return (
        f'<h3 class="run-start" id="timeline-run-{number}" data-run="{number}">Run {number} · '
        f"{verb} {esc(fmt_time(run.started, date=True))}</h3>"
    )


def _turn(seg: Segment, t: TurnView) -> str:
    entries = "".join(entry_html(e) for e in seg.entries) or (
        '<li class="entry"><span></span><span class="empty">no items</span></li>'
    )
    failed = f'<p class="turn-failed">{clip(t.message)}</p>' if t.message else ""
    prompt = (
        f'<div class="prompt turn-prompt"><span class="label">user</span>{clip(t.prompt)}</div>'
        if t.prompt
        else ""
    )
    return (
        f'<article class="card turn {esc(t.outcome)}" id="turn-{t.number}" data-turn="{t.number}">'
        f"<header><h3>Turn {t.number}</h3>{badge(t.outcome)}"
        f'<span class="meta">{esc(fmt_usage(t.usage))}</span>'
        f'<span class="meta right">{esc(fmt_time(t.started))} · '
        f"{esc(fmt_duration(t.duration_s))}</span></header>"
        f'{prompt}<ol class="entries">{entries}</ol>{failed}</article>'
    )


def _segments(report: SessionReport) -> str:
    out: list[str] = []
    if report.first_seq is not None and report.first_seq > 1:
        out.append(
            f'<p class="card empty">events 1-{report.first_seq - 1:,} were evicted from this '
            "long session's log (store.max_events); turns are numbered from the first one kept, "
            "usage, cost and the turn count above are the whole session's, the other counts are of "
            "the events kept.</p>"
        )
    run = 0
    for seg in report.segments:
        if seg.run != run and len(report.runs) > 1:
            run = seg.run
            out.append(_run_divider(report, run))
        if seg.turn is not None:
            out.append(_turn(seg, seg.turn))
        else:
            out.append(
                f'<div class="between"><ol class="entries">'
                f"{''.join(entry_html(e) for e in seg.entries)}</ol></div>"
            )
    return "".join(out) or '<p class="empty card">this session has no events yet</p>'


def _marks(report: SessionReport) -> list[tuple[float, str]]:
    """Vertical marks on the chart: where each later run starts, then compactions and resets;
    marks at the same place share one line and one label (they would overprint)."""
    marks: list[tuple[float, str]] = [
        (run.turns[0].number - 0.5, f"run {run.number}") for run in report.runs[1:] if run.turns
    ]
    closed = 0
    for seg in report.segments:
        for e in seg.entries:
            if e.kind in ("compaction", "reset"):
                x = (seg.turn.number - 0.5) if seg.turn is not None else closed + 0.5
                marks.append((x, "compaction" if e.kind == "compaction" else "context reset"))
        if seg.turn is not None:
            closed = seg.turn.number
    merged: dict[float, list[str]] = {}
    for x, label in marks:
        merged.setdefault(x, []).append(label)
    return sorted((x, " · ".join(labels)) for x, labels in merged.items())


def _plot(report: SessionReport) -> str:
    turns = report.turns
    if not turns:
        return ""
    tokens = [t.usage.input_tokens if t.usage is not None else None for t in turns]
    cost = report.cumulative_cost()
    svg = context_cost_svg(tokens, cost, marks=_marks(report))
    if any(c is not None for c in cost):
        note = (
            "Context tokens are each turn's input tokens. Events carry each run's total cost "
            "only; it is split across that run's turns by token weight (output tokens x5), which "
            "is exact when output costs five times input."
        )
        cost_legend = (
            f'<span><i class="line" style="background:{COST_COLOR}"></i>cumulative cost</span>'
        )
    else:
        note = (
            "Context tokens are each turn's input tokens. Cost unknown: no pricing for the model."
        )
        cost_legend = ""
    return (
        f'<section class="card"><h2>Context and cost per turn</h2><div class="legend">'
        f'<span><i style="background:{TOKENS_COLOR}"></i>context tokens (turn input_tokens)</span>'
        f'{cost_legend}</div>{svg}<p class="note">{esc(note)}</p></section>'
    )


@cache
def page_css() -> str:
    """The report pages' stylesheet (inlined: a page is one self-contained file)."""
    return files("vtcode.report").joinpath("style.css").read_text(encoding="utf-8")


def render_html(report: SessionReport) -> str:
    """The whole page as one string."""
    sid = esc(report.summary.session_id)
    span = (
        f"seq {report.first_seq}-{report.last_seq}" if report.first_seq is not None else "no events"
    )
    unknown = f" · {report.unknown_events} unknown events" if report.unknown_events else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="vtcode {esc(__version__)}">'
        f"<title>vtcode session {sid}</title><style>{page_css()}</style></head>"
        f"<body><main>{header(report)}{runs_section(report)}{_plot(report)}"
        f'<section class="timeline"><h2>Timeline</h2>'
        f"{_segments(report)}</section>"
        f"<footer>vtcode {esc(__version__)} · from events.jsonl ({esc(span)}){esc(unknown)}"
        "</footer></main></body></html>\n"
    )


def session_html(workspace: Path, session_id: str) -> str:
    """The page of one session, read from its canonical log."""
    return render_html(build_report(workspace, session_id))


PUBLIC_MODE = 0o644  # a page is made to be shared (a CI artifact server reads it as another user)
PRIVATE_MODE = 0o600


def write_session_html(
    workspace: Path, session_id: str, target: str, stdout: IO[bytes], *, private: bool = False
) -> Path | None:
    """Write the page to `target` (`-`: `stdout`; see `vtcode.outpath` for what else is allowed
    and how); returns the path written (None for stdout). A new file is 0644 (less the umask),
    0600 with `private`."""
    checked = check_output(target, workspace=workspace, option="--html")  # before the page
    page = session_html(workspace, session_id).encode("utf-8")
    write_output(checked, page, stdout, mode=PRIVATE_MODE if private else PUBLIC_MODE)
    return checked.path
