"""`vtcode sessions list | show | gc | export | repair`: parse, call `vtcode.store`, render."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import rich_click as click

from vtcode.cli.cmd_completion import complete_session_id
from vtcode.cli.context import AppContext
from vtcode.cli.groups import SuggestingGroup
from vtcode.cli.ranges import key_option_type
from vtcode.termtext import inert_line as _clean

if TYPE_CHECKING:
    from vtcode.store.listing import Row


def _out(line: str = "") -> None:
    sys.stdout.write(line + "\n")


def _json(data: Any) -> None:
    from vtcode.cli.output import emit_json

    emit_json(data)


@click.group("sessions", cls=SuggestingGroup)
def sessions() -> None:
    """List, inspect, export, repair and clean the sessions under WORKSPACE/.vtcode/sessions.

    Status is `active`, `completed`, `abandoned` (the manifest says active but no process holds
    the session's lock: a crashed or killed run) or `unreadable` (no readable manifest).
    """


@sessions.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON document on stdout.")
@click.pass_obj
def list_cmd(app: AppContext, as_json: bool) -> None:
    """One row per session, most recently updated first.

    SUBTYPE and OUTCOME are those of the latest ended run (its thread.completed subtype and
    outcome_code; `-` while none has ended), RUNS counts the ended runs and TURNS adds up their
    num_turns (model requests), so it agrees with what `thread.completed` reported.
    """
    from vtcode.store.listing import list_rows

    rows = list_rows(app.workspace)
    if as_json:
        _json({"sessions": [r.to_json() for r in rows]})
        return
    if not rows:
        click.echo("no sessions", err=True)
        return
    sys.stdout.write(_table(rows))
    sys.stdout.flush()


def _table(rows: list[Row]) -> str:
    """The `sessions list` table, one string (20,000 rows are one write, not 20,000)."""
    width = max(len(r.session_id) for r in rows)
    clean = _Cleaner()
    cells = [
        ((r.last_run.subtype, clean(r.last_run.outcome_code)) if r.last_run else ("-", "-"))
        for r in rows
    ]
    sub_w = max(len("SUBTYPE"), *(len(c[0]) for c in cells))
    out_w = max(len("OUTCOME"), *(len(c[1]) for c in cells))
    lines = [
        f"{'ID':<{width}}  {'STATUS':<10}  {'SUBTYPE':<{sub_w}}  {'OUTCOME':<{out_w}}  "
        f"{'RUNS':>4}  {'TURNS':>5}  {'EVENTS':>6}  UPDATED"
    ]
    row = f"{{:<{width}}}  {{:<10}}  {{:<{sub_w}}}  {{:<{out_w}}}  {{:>4}}  {{:>5}}  {{:>6}}  {{}}"
    lines.extend(
        row.format(
            clean(r.session_id),
            r.status,
            subtype,
            outcome,
            r.runs,
            r.num_turns,
            r.events,
            clean(r.updated_at or "-"),
        )
        for r, (subtype, outcome) in zip(rows, cells, strict=True)
    )
    lines.append("")
    return "\n".join(lines)


class _Cleaner:
    """`inert_line` for table cells; printable ASCII (every id, almost every time and outcome)
    is already inert, and a repeated value is cleaned once."""

    def __init__(self) -> None:
        self._seen: dict[str, str] = {}

    def __call__(self, text: str) -> str:
        if text.isascii() and text.isprintable():
            return text
        done = self._seen.get(text)
        if done is None:
            done = self._seen[text] = _clean(text)
        return done


def _instruction_list(files: list[dict[str, Any]]) -> str:
    """`AGENTS.md (120 bytes), a/AGENTS.md (32768 of 40000 bytes)`, or `none`."""
    if not files:
        return "none"
    return ", ".join(
        f"{_clean(f['label'])} ({f['bytes']} bytes)"
        if f["used_bytes"] >= f["bytes"]
        else f"{_clean(f['label'])} ({f['used_bytes']} of {f['bytes']} bytes)"
        for f in files
    )


@sessions.command("show")
@click.argument("session_id", shell_complete=complete_session_id)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON document on stdout.")
@click.option(
    "--html",
    "html_file",
    metavar="FILE",
    help="Write an HTML page of it (- stdout); the file is 0644 (less the umask).",
)
@click.option(
    "--private", is_flag=True, help="With --html: write the page 0600 (only you can read it)."
)
@click.pass_obj
def show_cmd(
    app: AppContext, session_id: str, as_json: bool, html_file: str | None, private: bool
) -> None:
    """The manifest and a readable timeline of turns, items, compactions and usage."""
    from vtcode.report.timeline import session_timeline

    if html_file is not None:
        from vtcode.errors import UsageError
        from vtcode.report import write_session_html

        if as_json:
            raise UsageError("--json and --html cannot be used together")

        written = write_session_html(
            app.workspace, session_id, html_file, sys.stdout.buffer, private=private
        )
        if written is not None and not app.quiet:
            click.echo(f"wrote {written}", err=True)
        return
    if private:
        from vtcode.errors import UsageError

        raise UsageError("--private applies to --html FILE only")
    tl = session_timeline(app.workspace, session_id)
    if as_json:
        _json(tl.to_json())
        return
    s = tl.summary
    _out(f"session   {_clean(s.session_id)}  ({s.status})")
    _out(f"path      {_clean(s.path)}")
    _out(f"created   {_clean(s.created_at or '-')}")
    _out(f"updated   {_clean(s.updated_at or '-')}")
    span = f"seq {tl.first_seq}-{tl.last_seq}" if tl.first_seq else "no events"
    _out(f"events    {s.events} ({span}), {s.turns} closed turns")
    for run in tl.runs:
        _out(f"run {run['number']}     instructions: {_instruction_list(run['instructions'])}")
    for t in tl.turns:
        usage = t.usage or {}
        use = (
            f"  in {usage.get('input_tokens', 0)} / out {usage.get('output_tokens', 0)}"
            if usage
            else ""
        )
        extra = f": {_clean(t.message)}" if t.message else ""
        _out(f"\nturn {t.number}  {t.outcome}{extra}{use}  [{_clean(t.started or '-')}]")
        for it in t.items:
            _out(
                f"  {_clean(it['id'])}  {it['type']:<17} {it['state']:<11} {_clean(it['summary'])}"
            )
    for c in tl.compactions:
        grew = c["compacted_message_count"] > c["original_message_count"]  # not a compaction
        what = "summary added, nothing older to compact" if grew else "compaction"
        _out(
            f"\n{what} ({c['trigger']}, {c['mode']}): {c['original_message_count']} -> "
            f"{c['compacted_message_count']} messages  [{_clean(c.get('ts') or '-')}]"
        )
    for r in tl.resets:
        _out(f"\ncontext reset ({r['trigger']}) at {r['previous_context_usage_percent']}% usage")
    for e in tl.errors:
        _out(f"\nerror: {_clean(e)}")
    if tl.completion:
        c = tl.completion
        u = c["usage"]
        cost = f", ${c['total_cost_usd']}" if "total_cost_usd" in c else ""
        _out(
            f"\ncompleted {c['subtype']} ({_clean(c['outcome_code'])}) after {c['num_turns']} "
            f"turns: in {u['input_tokens']} / out {u['output_tokens']} tokens{cost}"
        )
    sys.stdout.flush()


@sessions.command("gc")
@click.option(
    "--max-sessions",
    type=key_option_type("store.retention.max_sessions"),
    default=None,
    help="Keep at most N.",
)
@click.option(
    "--max-age-days",
    type=key_option_type("store.retention.max_age_days"),
    default=None,
    help="Remove older ones.",
)
@click.option("--dry-run", is_flag=True, help="Only report what would be removed.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON on stdout.")
@click.pass_obj
def gc_cmd(
    app: AppContext,
    max_sessions: int | None,
    max_age_days: int | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Remove old closed sessions (never active, live, symlinked or unknown ones).

    Defaults come from [store.retention] (50 sessions, 30 days; 0 = no limit). The sessions of
    each loop's last keep_loop_steps steps are kept.
    """
    import dataclasses

    from vtcode.orient.loop_state import loop_step_sessions
    from vtcode.store import apply_retention

    policy = app.loaded_config().config.store.retention
    if max_sessions is not None:
        policy = dataclasses.replace(policy, max_sessions=max_sessions)
    if max_age_days is not None:
        policy = dataclasses.replace(policy, max_age_days=max_age_days)
    keep = loop_step_sessions(app.workspace, policy.keep_loop_steps)
    report = apply_retention(app.workspace, policy, preserve=keep, dry_run=dry_run)
    if as_json:
        _json({**report.to_json(), "deleted_count": len(report.deleted)})
        return
    verb = "would remove" if dry_run else "removed"
    for sid in report.deleted:
        _out(f"{verb} {_clean(sid)}")
    for name, reason in report.skipped:
        click.echo(f"kept {_clean(name)}: {_clean(reason)}", err=True)
    for d, names in report.leftovers:
        click.echo(f"left {_clean(d)}: unknown files {_clean(', '.join(names))}", err=True)
    for name, err in report.errors:
        click.echo(f"error on {_clean(name)}: {_clean(err)}", err=True)
    click.echo(f"{verb} {len(report.deleted)}, kept {len(report.kept)}", err=True)


@sessions.command("export")
@click.argument("session_id", shell_complete=complete_session_id)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["raw", "wrapped", "atif", "open-responses"]),
    default="raw",
    show_default=True,
    help="raw ThreadEvent lines, canonical envelope lines, ATIF v1.4 JSON, or Open Responses SSE.",
)
@click.option(
    "-o", "--output", default="-", show_default=True, help="Output FILE, or - for stdout."
)
@click.pass_obj
def export_cmd(app: AppContext, session_id: str, fmt: str, output: str) -> None:
    """Export a session from its canonical log."""
    from vtcode.store.exports import ExportFormat, export_session

    model = app.loaded_config().config.agent.model
    if output == "-":
        export_session(app.workspace, session_id, ExportFormat(fmt), sys.stdout.buffer, model=model)
        sys.stdout.flush()
        return
    import io

    from vtcode.outpath import check_output, write_output

    target = check_output(output, workspace=app.workspace, option="-o")  # before any work
    buf = io.BytesIO()
    n = export_session(app.workspace, session_id, ExportFormat(fmt), buf, model=model)
    write_output(target, buf.getvalue(), sys.stdout.buffer)
    click.echo(
        f"exported {n} events of {_clean(session_id)} to {_clean(target.describe())} ({fmt})",
        err=True,
    )


@sessions.command("repair")
@click.argument("session_id", shell_complete=complete_session_id)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON on stdout.")
@click.pass_obj
def repair_cmd(app: AppContext, session_id: str, as_json: bool) -> None:
    """Back up a corrupt log, quarantine its bad lines and rebuild the caches."""
    from vtcode.store.repair import repair_session

    report = repair_session(app.workspace, session_id, app.loaded_config().config.store)
    if as_json:
        _json(report.to_json())
        return
    for line in report.lines():
        _out(_clean(line))
    sys.stdout.flush()
