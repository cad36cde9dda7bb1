"""`vtcode schema list | show NAME | export DIR`: the published JSON Schemas, as shipped."""

from __future__ import annotations

import sys
from pathlib import Path

import rich_click as click

from vtcode.cli.cmd_completion import complete_schema_name
from vtcode.cli.context import AppContext
from vtcode.cli.groups import SuggestingGroup


@click.group("schema", cls=SuggestingGroup)
def schema() -> None:
    """List, show and export the JSON Schemas vtcode publishes (draft 2020-12)."""


@schema.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON document on stdout.")
def list_cmd(as_json: bool) -> None:
    """List every schema: name, $id and title."""
    from vtcode.validate.schemafiles import list_schemas

    infos = list_schemas()
    if as_json:
        from vtcode.cli.output import emit_json

        emit_json(
            {
                "schemas": [
                    {"name": i.name, "id": i.id, "title": i.title, "file": i.file} for i in infos
                ]
            }
        )
        return
    width = max((len(i.name) for i in infos), default=0)
    id_width = max((len(i.id) for i in infos), default=0)  # titles line up too (issue 26)
    for i in infos:
        sys.stdout.write(f"{i.name:<{width}}  {i.id:<{id_width}}  {i.title}\n")
    sys.stdout.flush()


@schema.command("show")
@click.argument("name", shell_complete=complete_schema_name)
def show_cmd(name: str) -> None:
    """Print one schema file exactly as shipped (NAME as listed, or NAME.schema.json)."""
    from vtcode.validate.schemafiles import schema_bytes

    sys.stdout.buffer.write(schema_bytes(name))
    sys.stdout.flush()


@schema.command("export")
@click.argument("directory", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite existing files that differ.")
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
@click.pass_obj
def export_cmd(app: AppContext, directory: Path, force: bool, as_json: bool) -> None:
    """Write every schema file into DIRECTORY (created if missing).

    Refuses, writing nothing, when an existing file differs, unless --force.
    """
    from vtcode.validate.schemafiles import export_schemas

    results = export_schemas(directory, force=force)
    if as_json:
        from vtcode.cli.output import emit_json

        emit_json({"files": [{"path": str(p), "outcome": o.value} for p, o in results]})
        return
    for p, o in results:
        sys.stdout.write(f"{o.value:<11}  {p}\n")
    sys.stdout.flush()
