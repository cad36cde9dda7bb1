"""`vtcode steer SESSION_ID TEXT`: queue a follow-up for a session, from any process."""

from __future__ import annotations

import rich_click as click

from vtcode.cli.cmd_completion import complete_session_id
from vtcode.cli.context import AppContext

EPILOG = """Exit codes: 0 queued, 2 unknown session or bad text, 75 the queue is full (16
pending) or its lock is busy: try again later. A running session applies queued follow-ups
after its current turn; a finished one applies them when it is resumed."""


@click.command("steer", epilog=EPILOG)
@click.argument("session_id", shell_complete=complete_session_id)
@click.argument("words", nargs=-1, required=True, metavar="TEXT|-")
@click.option("--json", "as_json", is_flag=True, help="Print the queued intent as JSON.")
@click.pass_obj
def steer(app: AppContext, session_id: str, words: tuple[str, ...], as_json: bool) -> int:
    """Queue TEXT as a follow-up intent for SESSION_ID (`-` reads TEXT from stdin)."""
    from vtcode.cli.output import emit_json
    from vtcode.errors import NotFoundError
    from vtcode.ids import check_id
    from vtcode.steering.queue import SteeringQueue
    from vtcode.store import session_exists
    from vtcode.store.layout import lock_path
    from vtcode.store.locks import lock_is_held

    check_id(session_id)
    if not session_exists(app.workspace, session_id):
        raise NotFoundError(
            f"no session {session_id!r} in {app.workspace / '.vtcode' / 'sessions'}",
            hint="`vtcode sessions list` shows the sessions of this workspace",
        )
    from vtcode.cli.stdin import read_stdin_text

    text = read_stdin_text() if list(words) == ["-"] else " ".join(words)
    cfg = app.loaded_config().config
    queue = SteeringQueue(app.workspace, session_id, lock_timeout=cfg.store.lock_timeout_secs)
    intent = queue.enqueue(text)
    running = lock_is_held(lock_path(app.workspace, session_id))
    if as_json:
        emit_json(
            {
                "session_id": session_id,
                "id": intent.id,
                "pending": len(queue.pending()),
                "running": running,
            }
        )
    else:
        click.echo(intent.id)
        if not app.quiet and not running:
            click.echo(
                f"note: session {session_id} is not running; the follow-up applies when it is "
                "resumed (`vtcode exec resume ID`)",
                err=True,
            )
    return 0
