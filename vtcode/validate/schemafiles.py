"""The shipped schema files as users see them: list, show one verbatim, export all to a folder.

Export is all-or-nothing on conflicts: every destination is compared first, and if any existing
file differs (and `force` is off) nothing is written, so a half-exported folder never happens.
"""

from __future__ import annotations

import contextlib
import enum
import os
from dataclasses import dataclass
from pathlib import Path

from vtcode import schemas
from vtcode.errors import UsageError
from vtcode.fsutil import atomic_write_bytes

__all__ = ["ExportOutcome", "SchemaInfo", "export_schemas", "list_schemas", "schema_bytes"]


@dataclass(frozen=True, slots=True)
class SchemaInfo:
    name: str
    id: str
    title: str
    file: str


class ExportOutcome(enum.StrEnum):
    WRITTEN = "written"
    UNCHANGED = "unchanged"
    OVERWRITTEN = "overwritten"


def _name(name: str) -> str:
    return name[: -len(schemas.SUFFIX)] if name.endswith(schemas.SUFFIX) else name


def list_schemas() -> list[SchemaInfo]:
    """Every published schema, sorted by name."""
    out = []
    for n in schemas.names():
        doc = schemas.load(n)
        out.append(
            SchemaInfo(
                name=n,
                id=str(doc.get("$id", "")),
                title=str(doc.get("title", "")),
                file=n + schemas.SUFFIX,
            )
        )
    return out


def schema_bytes(name: str) -> bytes:
    """The exact bytes of one shipped schema (`NAME` or `NAME.schema.json`)."""
    return schemas.path(_name(name)).read_bytes()


def export_schemas(directory: Path, *, force: bool = False) -> list[tuple[Path, ExportOutcome]]:
    """Write every schema file into `directory` (created if missing)."""
    if directory.exists() and not directory.is_dir():
        raise UsageError("not a directory", location=str(directory))
    plan: list[tuple[Path, bytes, ExportOutcome]] = []
    conflicts: list[str] = []
    for n in schemas.names():
        data = schemas.path(n).read_bytes()
        dest = directory / (n + schemas.SUFFIX)
        outcome = ExportOutcome.WRITTEN
        if dest.is_dir():
            raise UsageError("a directory is in the way of a schema file", location=str(dest))
        if dest.exists() or dest.is_symlink():
            try:
                same = dest.read_bytes() == data
            except OSError:
                same = False
            if same:
                outcome = ExportOutcome.UNCHANGED
            elif force:
                outcome = ExportOutcome.OVERWRITTEN
            else:
                conflicts.append(dest.name)
        plan.append((dest, data, outcome))
    if conflicts:
        raise UsageError(
            f"{len(conflicts)} existing file(s) differ: {', '.join(conflicts)}",
            location=str(directory),
            hint="nothing was written; pass --force to overwrite them",
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for dest, data, outcome in plan:
            if outcome is not ExportOutcome.UNCHANGED:
                atomic_write_bytes(dest, data)
                with contextlib.suppress(OSError):  # mkstemp makes 0600; schemas are public
                    dest.chmod(0o644 & ~_umask())
    except OSError as e:
        raise UsageError(
            f"cannot write: {e.strerror or e}", location=str(e.filename or directory)
        ) from None
    return [(dest, outcome) for dest, _, outcome in plan]


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
