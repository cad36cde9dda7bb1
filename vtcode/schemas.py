"""The published JSON Schemas, loaded from the files shipped with vtcode (one registry).

In a wheel they live in `vtcode/_data/schemas/`; in a source checkout, in `schemas/` at the top.
`jsonschema` is the reference validator (best messages); `jsonschema-rs` serves hot paths where
the differential test shows both agree.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vtcode.errors import NotFoundError

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

SUFFIX = ".schema.json"


@functools.cache
def schema_dir() -> Path:
    """Where the schema files are (wheel data first, then the source tree)."""
    packaged = resources.files("vtcode") / "_data" / "schemas"
    candidate = Path(str(packaged))
    if candidate.is_dir():
        return candidate
    return Path(__file__).resolve().parents[1] / "schemas"


def names() -> list[str]:
    """Every published schema name, sorted."""
    return sorted(p.name[: -len(SUFFIX)] for p in schema_dir().glob(f"*{SUFFIX}"))


def path(name: str) -> Path:
    p = schema_dir() / f"{name}{SUFFIX}"
    if not p.is_file():
        raise NotFoundError(
            f"no schema named {name!r}", hint=f"known schemas: {', '.join(names())}"
        )
    return p


@functools.cache
def load(name: str) -> dict[str, Any]:
    """The parsed schema document."""
    data: dict[str, Any] = json.loads(path(name).read_text(encoding="utf-8"))
    return data


@functools.cache
def reference_validator(name: str) -> Validator:
    """A cached `jsonschema` 2020-12 validator with format checking (date-time included)."""
    from jsonschema import Draft202012Validator

    schema = load(name)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


@functools.cache
def fast_validator(name: str) -> Any:
    """A cached `jsonschema-rs` validator (offline, formats checked) for the same schema."""
    import jsonschema_rs

    return jsonschema_rs.validator_for(load(name), validate_formats=True)
