"""`vtcode fleet`: loops across many machines on PostgreSQL (docs/fleet.md).

Parses and renders only; vtcode.fleet does the work. psycopg is imported by vtcode.fleet, which
each command imports when it runs, so `vtcode --help` never loads it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import rich_click as click

from vtcode.cli.context import AppContext
from vtcode.cli.groups import SuggestingGroup
from vtcode.cli.loop_opts import loop_run_options
from vtcode.cli.ranges import FiniteFloatRange

WORKER_EPILOG = """VTCODE_HOST_ID names this worker's host in `fleet status` (default: the
hostname). SIGTERM or SIGINT: take no new step, let running steps finish (after --grace
seconds they are cancelled cleanly, as `loop run` is on SIGTERM), exit 0."""


def _url() -> str:
    from vtcode.fleet.db import database_url

    return database_url()


def _conn() -> Any:
    from vtcode.fleet.db import connect, require_schema

    conn = connect(_url())
    require_schema(conn)
    return conn


def _say(app: AppContext, msg: str) -> None:
    if not app.quiet:
        click.echo(msg, err=True)


@click.group("fleet", cls=SuggestingGroup)
def fleet() -> None:
    """Run loops across many machines, with PostgreSQL as locks, queue, schedule and store.

    The database is VTCODE_DATABASE_URL or fleet.database_url in the user config (never a
    workspace vtcode.toml). Each step runs exactly as `vtcode loop run --steps 1` in the loop's
    workspace; at most one step of a loop runs at a time across every worker.
    """
    from vtcode.fleet.db import require_driver

    require_driver()  # before a subcommand imports the driver: a missing extra is exit 2


@fleet.command("migrate")
@click.option("--json", "as_json", is_flag=True, help='{"from": N, "to": M} as JSON.')
@click.pass_obj
def migrate(app: AppContext, as_json: bool) -> int:
    """Create or upgrade the fleet schema (idempotent; refuses a newer schema)."""
    from vtcode.fleet.db import migrate as do_migrate

    have, now = do_migrate(_url())
    if as_json:
        from vtcode.cli.output import emit_json

        emit_json({"from": have, "to": now})
    else:
        _say(app, f"fleet schema: {have} -> {now}" if have != now else f"fleet schema: {now}")
    return 0


@fleet.command("add")
@click.argument("loop_id", metavar="LOOP_ID")
@click.option(
    "--workspace",
    "ws",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The loop's workspace (the same path on every worker's host).",
)
@click.option("--schedule", help="Cron (5 fields, or 6 with seconds first); none = back-to-back.")
@loop_run_options
@click.option("--queue", default="default", show_default=True, help="Workers of this queue.")
@click.argument("words", nargs=-1, required=True, metavar="PROMPT")
@click.pass_obj
def add(
    app: AppContext,
    loop_id: str,
    ws: Path,
    schedule: str | None,
    max_steps: int | None,
    max_tokens: int | None,
    max_cost: float | None,
    provider: str | None,
    script: str | None,
    model: str | None,
    max_turns: int | None,
    queue: str,
    words: tuple[str, ...],
) -> int:
    """Register (or update) loop LOOP_ID: its workspace, budgets, options and schedule.

    Without --schedule the loop runs step after step until its budget or its milestones stop
    it; with one, one step per tick (a tick while a step waits or runs adds nothing).
    """
    from vtcode.fleet.registry import LoopSpec
    from vtcode.fleet.registry import add as do_add

    if script is not None and Path(script).exists():
        script = str(Path(script).resolve())  # the worker runs in the loop's workspace
    spec = LoopSpec(
        loop_id=loop_id,
        workspace=ws if ws.is_absolute() else app.workspace / ws,
        prompt=" ".join(words),
        queue=queue,
        schedule=schedule,
        max_steps=max_steps,
        max_cost_usd=max_cost,
        max_tokens=max_tokens,
        provider=provider,
        model=model,
        script=script,
        max_turns=max_turns,
    )
    with _conn() as conn:
        do_add(conn, spec)
    _say(app, f"fleet loop {loop_id}: registered")
    return 0


def _simple(name: str, doc: str, action: str) -> click.Command:
    @click.command(name, help=doc)
    @click.argument("loop_id", metavar="LOOP_ID")
    @click.pass_obj
    def cmd(app: AppContext, loop_id: str) -> int:
        from vtcode.fleet import registry

        with _conn() as conn:
            if action == "remove":
                registry.remove(conn, loop_id)
            elif action == "run-now":
                registry.run_now(conn, loop_id)
            else:
                registry.set_paused(conn, loop_id, action == "pause")
        _say(app, f"fleet loop {loop_id}: {action}")
        return 0

    return cmd


fleet.add_command(_simple("remove", "Forget LOOP_ID (its sessions stay in the store).", "remove"))
fleet.add_command(_simple("pause", "Take no new step of LOOP_ID until resumed.", "pause"))
fleet.add_command(_simple("resume", "Let workers take steps of LOOP_ID again.", "resume"))
fleet.add_command(
    _simple("run-now", "Queue one step of LOOP_ID now (at most one waits).", "run-now")
)


@fleet.command("worker", epilog=WORKER_EPILOG)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Steps this worker runs at once (of different loops).",
)
@click.option("--queue", "queues", multiple=True, help="Queue to serve (repeatable).")
@click.option(
    "--stall-timeout",
    type=FiniteFloatRange(min=1),
    default=30.0,
    show_default=True,
    help="Seconds after which a silent worker's step is re-run elsewhere.",
)
@click.option(
    "--grace",
    type=FiniteFloatRange(min=0),
    default=60.0,
    show_default=True,
    help="Seconds a SIGTERM lets running steps finish before cancelling them.",
)
@click.option(
    "--poll",
    type=FiniteFloatRange(min=0.05),
    default=0.5,
    show_default=True,
    help="Seconds between polls of the database.",
)
@click.pass_obj
def worker(
    app: AppContext,
    concurrency: int,
    queues: tuple[str, ...],
    stall_timeout: float,
    grace: float,
    poll: float,
) -> int:
    """Run steps of the fleet's loops on this host until SIGTERM."""
    from vtcode.fleet.worker import WorkerOptions, run_worker

    url = _url()
    _conn().close()  # a missing schema or database is refused before the first poll
    return run_worker(
        WorkerOptions(
            url=url,
            queues=queues or ("default",),
            concurrency=concurrency,
            stall_timeout=stall_timeout,
            poll=poll,
            grace=grace,
            notify=lambda m: _say(app, m),
        )
    )


def _limit(v: object) -> str:
    """A budget as `status` prints it: `-` when the loop has none."""
    return "-" if v is None else str(v)


@fleet.command("status")
@click.option("--json", "as_json", is_flag=True, help='{"loops": [...]} as JSON.')
@click.pass_obj
def status(app: AppContext, as_json: bool) -> int:
    """Every loop: state, steps, where it runs, its last session, cost and tokens.

    Used and budget side by side (steps 3/10, $0.0123/$5.0000, 4200/9000 tok; `-` when a loop
    has no such budget), as max_steps, max_cost_usd and max_tokens in --json.
    """
    from vtcode.fleet.registry import loops

    with _conn() as conn:
        rows = loops(conn)
    if as_json:
        from vtcode.cli.output import emit_json

        emit_json({"loops": rows})
        return 0
    from vtcode.termtext import inert_line

    if not rows:
        _say(app, "no fleet loops yet")
    for r in rows:
        steps = f"{r['steps_done']}/{_limit(r['max_steps'])}"
        max_cost = r["max_cost_usd"]
        fields = [
            r["loop_id"],
            r["state"] + (f"@{r['running_on']}" if r["running_on"] else ""),
            f"steps {steps}",
            f"${r['cost_usd']:.4f}/" + ("-" if max_cost is None else f"${max_cost:.4f}"),
            f"{r['tokens']}/{_limit(r['max_tokens'])} tok",
            r["last_session_id"] or "-",
            r["last_outcome"] or "-",
        ]
        click.echo("\t".join(inert_line(str(f)) for f in fields))
    return 0


@fleet.command("sessions")
@click.option("--loop", "loop_id", help="Only this loop's sessions.")
@click.option("--json", "as_json", is_flag=True, help='{"sessions": [...]} as JSON.')
@click.pass_obj
def sessions(app: AppContext, loop_id: str | None, as_json: bool) -> int:
    """Sessions from every host, oldest first."""
    from vtcode.fleet.registry import sessions as list_sessions

    with _conn() as conn:
        rows = list_sessions(conn, loop_id)
    if as_json:
        from vtcode.cli.output import emit_json

        emit_json({"sessions": rows})
        return 0
    from vtcode.termtext import inert_line

    for r in rows:
        fields = [
            r["session_id"],
            r["loop_id"] or "-",
            r["host"] or "-",
            r["started_at"] or "-",
            r["outcome_code"] or "unfinished",
            f"{r['events']} events",
        ]
        click.echo("\t".join(inert_line(str(f)) for f in fields))
    return 0


@fleet.command("events")
@click.argument("session_id", metavar="SESSION_ID")
@click.option(
    "--canonical",
    is_flag=True,
    help="The lines of the session's events.jsonl (with schema_version, seq, ts) instead.",
)
@click.pass_obj
def events(app: AppContext, session_id: str, canonical: bool) -> int:
    """Print SESSION_ID's events as raw JSONL: the bytes `exec --json` printed."""
    import sys

    from vtcode.fleet.registry import events as stored
    from vtcode.fleet.registry import raw_line

    with _conn() as conn:
        lines = stored(conn, session_id)
    out = sys.stdout.buffer
    for line in lines:
        out.write(line.encode("utf-8") + b"\n" if canonical else raw_line(line))
    out.flush()
    return 0
