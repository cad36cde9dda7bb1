"""`vtcode compact SESSION_ID`: compact a session's transcript offline (trigger `manual`)."""

from __future__ import annotations

import rich_click as click

from vtcode.cli.cmd_completion import complete_session_id
from vtcode.cli.context import AppContext

EPILOG = """Exit codes: 0 compacted, or nothing to compact (the compacted history would not be
smaller: the session is left as it is, stderr says so, --json has "compacted": false),
2 unknown session or unreadable transcript (nothing changed), 75 the session is being written
by a running vtcode (try again later)."""


@click.command("compact", epilog=EPILOG)
@click.argument("session_id", shell_complete=complete_session_id)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")
@click.pass_obj
def compact(app: AppContext, session_id: str, as_json: bool) -> int:
    """Compact SESSION_ID now, with the local deterministic summary.

    The full history is archived under .vtcode/history/ (with its memory envelope), the
    transcript is replaced by summary + envelope + retained user messages + continuity tail,
    and a thread.compact_boundary (trigger manual) is appended to the session's events.jsonl.
    hooks.lifecycle.pre_compact runs before the boundary is recorded.
    """
    from vtcode.cli.output import emit_json, print_warning
    from vtcode.context.manual import compact_session

    result = compact_session(app.workspace, session_id, app.loaded_config().config)
    for w in result.warnings:
        print_warning(w, color=app.color)
    if as_json:
        emit_json(result.to_json())
    elif not result.compacted:
        if not app.quiet:
            click.echo(f"{result.session_id}: {result.reason}", err=True)
    elif not app.quiet:
        click.echo(
            f"compacted {result.session_id}: {result.original_message_count} -> "
            f"{result.compacted_message_count} messages; archive "
            f"{result.history_artifact_path or '(not persisted)'}",
            err=True,
        )
    return 0
