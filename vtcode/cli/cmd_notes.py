"""`vtcode notes` / `vtcode decisions`: the loop's append-only memory (.vtcode/state/*.md)."""

from __future__ import annotations

import rich_click as click

from vtcode.cli.context import AppContext
from vtcode.cli.groups import SuggestingGroup


def _group(name: str, kind_name: str, what: str) -> click.Group:
    @click.group(
        name,
        cls=SuggestingGroup,
        help=f"Append to and list the loop's {what} (.vtcode/state/{name}.md).",
    )
    def group() -> None:
        pass

    @group.command("add")
    @click.argument("words", nargs=-1, required=True, metavar="TEXT|-")
    @click.option("--json", "as_json", is_flag=True, help="Print the entry written as JSON.")
    @click.pass_obj
    def add(app: AppContext, words: tuple[str, ...], as_json: bool) -> int:
        """Append one entry (`-` reads it from stdin); line breaks fold into one line."""
        from vtcode.cli.stdin import read_stdin_text
        from vtcode.errors import UsageError
        from vtcode.orient.memory import MemoryKind, append_entry

        text = read_stdin_text() if list(words) == ["-"] else " ".join(words)
        entry = append_entry(app.workspace, MemoryKind[kind_name], text)
        if entry is None:
            raise UsageError(f"empty {name[:-1]}: nothing was written")
        if as_json:
            from vtcode.cli.output import emit_json

            emit_json({"timestamp": entry.timestamp, "text": entry.text})
        elif not app.quiet:
            click.echo(f"- [{entry.timestamp}] {entry.text}", err=True)
        return 0

    @group.command("list")
    @click.option("--json", "as_json", is_flag=True, help=f'Entries, as {{"{name}": [...]}}.')
    @click.pass_obj
    def list_(app: AppContext, as_json: bool) -> int:
        """Print every entry, oldest first."""
        from vtcode.orient.memory import MemoryKind, read_entries
        from vtcode.termtext import inert

        entries = read_entries(app.workspace, MemoryKind[kind_name])
        if as_json:
            from vtcode.cli.output import emit_json

            emit_json({name: [{"timestamp": e.timestamp, "text": e.text} for e in entries]})
        else:
            for e in entries:
                click.echo(f"- [{e.timestamp}] {inert(e.text)}")
        return 0

    list_.name = "list"
    return group


notes = _group("notes", "NOTES", "notes")
decisions = _group("decisions", "DECISIONS", "decisions")
