"""`vtcode fsm`: print the agent-loop state machine from the same table the runner uses."""

from __future__ import annotations

import rich_click as click


@click.command("fsm")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["mermaid", "json"]),
    default="mermaid",
    show_default=True,
    help="Mermaid stateDiagram-v2 text, or the table as JSON.",
)
@click.option("--json", "as_json_flag", is_flag=True, help="Same as --format json.")
def fsm(fmt: str, as_json_flag: bool) -> int:
    """Print the loop's states, triggers and guards (orient, turn, tool, compact, reset, complete).

    Guards are shown in brackets; transitions sharing a trigger and source are tried in order.
    """
    from vtcode.loop.fsm import as_json, as_mermaid

    if as_json_flag or fmt == "json":
        from vtcode.cli.output import emit_json

        emit_json(as_json())
    else:
        click.echo(as_mermaid(), nl=False)
    return 0
