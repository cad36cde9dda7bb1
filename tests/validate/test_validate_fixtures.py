"""The fixture logs: each invalid log fails at exactly its documented lines; valid logs are clean.

The expected lines live in fixtures/logs/invalid/README.md (one table, read here), so the docs and
the test cannot disagree. Every report is also snapshot-tested (`validate --json` document).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from syrupy.assertion import SnapshotAssertion

from vtcode.events import LineShape, decode_envelope, encode_raw_line, encode_wrapped_line
from vtcode.events.types import EVENT_TYPES, ITEM_TYPES
from vtcode.jsontypes import encode
from vtcode.schemas import reference_validator
from vtcode.validate import (
    FileStatus,
    FormatOption,
    Severity,
    ValidateOptions,
    build_report,
    validate_path,
)
from vtcode.validate.report import Profile

REPO = Path(__file__).resolve().parents[2]
LOGS = REPO / "fixtures" / "logs"
VALID = sorted((LOGS / "valid").glob("*.jsonl"))
INVALID = sorted((LOGS / "invalid").glob("*.jsonl"))


@dataclass(frozen=True)
class Expectation:
    file: str
    flags: tuple[str, ...]
    lines: frozenset[int]
    breaks: str


def _expectations() -> dict[str, Expectation]:
    out: dict[str, Expectation] = {}
    row = re.compile(r"^\| `([^`]+)` \|([^|]*)\|([^|]*)\|(.*)\|$")
    for text in (LOGS / "invalid" / "README.md").read_text(encoding="utf-8").splitlines():
        m = row.match(text)
        if m:
            name, flags, lines, breaks = m.groups()
            out[name] = Expectation(
                file=name,
                flags=tuple(shlex.split(flags.strip().strip("`"))),
                lines=frozenset(int(n) for n in lines.split(",")),
                breaks=breaks.strip(),
            )
    return out


EXPECT = _expectations()


def options_from_flags(flags: tuple[str, ...]) -> ValidateOptions:
    """The same options `vtcode validate FLAGS` builds (the CLI test checks they agree)."""
    kw: dict[str, object] = {}
    args = list(flags)
    while args:
        flag = args.pop(0)
        if flag == "--strict":
            kw["strict"] = True
        elif flag == "--partial":
            kw["partial"] = True
        elif flag == "--no-lifecycle":
            kw["lifecycle"] = False
        elif flag == "--max-line-bytes":
            kw["max_line_bytes"] = int(args.pop(0))
        elif flag == "--format":
            kw["format"] = FormatOption(args.pop(0))
        else:  # pragma: no cover - a typo in the README table
            raise AssertionError(f"unknown flag {flag!r} in invalid/README.md")
    return ValidateOptions(profile=Profile.VTCODE, **kw)  # type: ignore[arg-type]


def _rel(p: Path) -> str:
    return p.relative_to(REPO).as_posix()


def test_readme_lists_every_invalid_log_and_nothing_else() -> None:
    assert set(EXPECT) == {p.name for p in INVALID}
    assert len(VALID) + len(INVALID) >= 30


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_invalid_log_fails_at_exactly_the_documented_lines(path: Path) -> None:
    exp = EXPECT[path.name]
    report = validate_path(path, options_from_flags(exp.flags))
    assert report.status is FileStatus.INVALID, exp.breaks
    error_lines = {p.line for p in report.problems if p.severity is Severity.ERROR}
    assert error_lines == exp.lines, [(p.line, p.code.value, p.message) for p in report.problems]
    assert report.suppressed == 0


@pytest.mark.parametrize(
    "path", [p for p in INVALID if "--strict" in EXPECT[p.name].flags], ids=lambda p: p.name
)
def test_strict_only_logs_pass_by_default_with_warnings_at_the_same_lines(path: Path) -> None:
    exp = EXPECT[path.name]
    flags = tuple(f for f in exp.flags if f != "--strict")
    report = validate_path(path, options_from_flags(flags))
    assert report.status is FileStatus.VALID
    assert {p.line for p in report.problems} == exp.lines
    assert all(p.severity is Severity.WARNING for p in report.problems)


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
def test_valid_log_has_no_problem_at_all(path: Path, strict: bool) -> None:
    report = validate_path(path, ValidateOptions(profile=Profile.VTCODE, strict=strict))
    assert report.status is FileStatus.VALID
    assert report.problems == []
    assert report.events == report.lines > 0


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_valid_log_decodes_and_reencodes_to_the_same_bytes(path: Path) -> None:
    for raw_line in path.read_bytes().splitlines(keepends=True):
        env = decode_envelope(orjson.loads(raw_line))
        if env.shape is LineShape.RAW:
            again = encode_raw_line(env.event)
        else:
            assert env.schema_version == "0.11.0"
            again = encode_wrapped_line(env.event, seq=env.seq, ts=env.ts)
        assert again == raw_line


def test_valid_logs_cover_every_event_type_item_type_and_both_shapes() -> None:
    events: set[str] = set()
    items: set[str] = set()
    shapes: set[LineShape] = set()
    for path in VALID:
        for raw_line in path.read_bytes().splitlines():
            env = decode_envelope(orjson.loads(raw_line))
            shapes.add(env.shape)
            events.add(env.event.TYPE)
            item = getattr(env.event, "item", None)
            if item is not None:
                items.add(item.type)
    assert events == set(EVENT_TYPES)
    assert len(events) == 17
    assert items == set(ITEM_TYPES)
    assert len(items) == 11
    assert shapes == {LineShape.RAW, LineShape.WRAPPED}


def _report_doc(path: Path, options: ValidateOptions) -> dict[str, object]:
    report = build_report([validate_path(path, options, display=_rel(path))], options)
    doc: dict[str, object] = encode(report)
    reference_validator("validate-report").validate(doc)
    return doc


@pytest.mark.parametrize("path", VALID + INVALID, ids=lambda p: f"{p.parent.name}-{p.stem}")
def test_report_snapshot_default_options(path: Path, snapshot_json: SnapshotAssertion) -> None:
    assert _report_doc(path, ValidateOptions(profile=Profile.VTCODE)) == snapshot_json


@pytest.mark.parametrize("path", [p for p in INVALID if EXPECT[p.name].flags], ids=lambda p: p.stem)
def test_report_snapshot_documented_flags(path: Path, snapshot_json: SnapshotAssertion) -> None:
    assert _report_doc(path, options_from_flags(EXPECT[path.name].flags)) == snapshot_json
