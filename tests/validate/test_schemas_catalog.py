"""Published schema files: generated from the types, metaschema-valid, served by `vtcode schema`."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import jsonschema_rs
import orjson
import pytest
from jsonschema import Draft202012Validator

from vtcode import schemagen, schemas

REPO = Path(__file__).resolve().parents[2]
SCHEMA_DIR = REPO / "schemas"
RunVtcode = Callable[..., tuple[int, str, str]]


@pytest.mark.parametrize("name", sorted(schemagen.CATALOG))
def test_schema_file_is_exactly_what_the_types_generate(name: str) -> None:
    path = SCHEMA_DIR / f"{name}.schema.json"
    assert path.is_file(), f"run `python -m vtcode.schemagen` to write {path.name}"
    assert path.read_text(encoding="utf-8") == schemagen.render(name), (
        f"{path.name} is stale: run `python -m vtcode.schemagen`"
    )


def test_no_schema_file_without_a_catalog_entry() -> None:
    files = {p.name.removesuffix(".schema.json") for p in SCHEMA_DIR.glob("*.schema.json")}
    assert files == set(schemagen.CATALOG)
    assert schemas.names() == sorted(schemagen.CATALOG)


def test_ids_are_unique_and_every_schema_compiles_in_both_libraries() -> None:
    ids = []
    for name in schemas.names():
        doc = schemas.load(name)
        assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert doc["$id"].startswith("https://vtcode.dev/schemas/")
        ids.append(doc["$id"])
        Draft202012Validator.check_schema(doc)
        jsonschema_rs.validator_for(doc)
    assert len(set(ids)) == len(ids)


def test_check_jsonschema_accepts_every_file_against_the_metaschema() -> None:
    exe = Path(sys.executable).parent / "check-jsonschema"
    files = sorted(str(p) for p in SCHEMA_DIR.glob("*.schema.json"))
    proc = subprocess.run(
        [str(exe), "--check-metaschema", *files],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok -- validation done" in proc.stdout


# ---------------------------------------------------------------------- vtcode schema (CLI)


def test_schema_list(run_vtcode: RunVtcode) -> None:
    rc, out, err = run_vtcode(["schema", "list"])
    assert (rc, err) == (0, "")
    assert [line.split()[0] for line in out.splitlines()] == schemas.names()
    rc, out, _ = run_vtcode(["schema", "list", "--json"])
    doc = orjson.loads(out)
    assert [s["name"] for s in doc["schemas"]] == schemas.names()
    by_name = {s["name"]: s for s in doc["schemas"]}
    assert by_name["thread-event"]["id"] == "https://vtcode.dev/schemas/thread-event/0.11.0.json"
    assert by_name["validate-report"]["file"] == "validate-report.schema.json"


@pytest.mark.parametrize("arg", ["thread-event", "versioned-thread-event-reader.schema.json"])
def test_schema_show_prints_the_file_byte_for_byte(run_vtcode: RunVtcode, arg: str) -> None:
    name = arg.removesuffix(".schema.json")
    rc, out, _ = run_vtcode(["schema", "show", arg])
    assert rc == 0
    assert out == (SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8")


def test_schema_show_unknown_name_exits_2_and_lists_the_names(run_vtcode: RunVtcode) -> None:
    rc, out, err = run_vtcode(["schema", "show", "thread-events"])
    assert (rc, out) == (2, "")
    assert "no schema named 'thread-events'" in err
    assert "thread-event," in err


def test_schema_export_writes_refuses_and_forces(run_vtcode: RunVtcode, tmp_path: Path) -> None:
    dest = tmp_path / "out" / "schemas"
    rc, out, _ = run_vtcode(["schema", "export", str(dest)])
    assert rc == 0
    assert len(out.splitlines()) == len(schemas.names())
    for name in schemas.names():
        got = (dest / f"{name}.schema.json").read_bytes()
        assert got == (SCHEMA_DIR / f"{name}.schema.json").read_bytes()
        assert (dest / f"{name}.schema.json").stat().st_mode & 0o444 == 0o444
    # again: identical files are left alone
    rc, out, _ = run_vtcode(["schema", "export", str(dest), "--json"])
    assert rc == 0
    assert {f["outcome"] for f in orjson.loads(out)["files"]} == {"unchanged"}
    # a differing file: refuse, and write nothing at all (the deleted file stays deleted)
    edited = dest / "turn-index.schema.json"
    edited.write_text("{}\n")
    (dest / "loop-state.schema.json").unlink()
    rc, out, err = run_vtcode(["schema", "export", str(dest)])
    assert (rc, out) == (2, "")
    assert "turn-index.schema.json" in err and "--force" in err
    assert edited.read_text() == "{}\n"
    assert not (dest / "loop-state.schema.json").exists()
    # --force overwrites
    rc, out, _ = run_vtcode(["schema", "export", str(dest), "--force", "--json"])
    assert rc == 0
    outcomes = {Path(f["path"]).name: f["outcome"] for f in orjson.loads(out)["files"]}
    assert outcomes["turn-index.schema.json"] == "overwritten"
    assert outcomes["loop-state.schema.json"] == "written"
    assert edited.read_bytes() == (SCHEMA_DIR / "turn-index.schema.json").read_bytes()


def test_schema_export_into_a_file_exits_2(run_vtcode: RunVtcode, tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    rc, _, err = run_vtcode(["schema", "export", str(target)])
    assert rc == 2
    assert "not a directory" in err
    assert target.read_text() == "x"
