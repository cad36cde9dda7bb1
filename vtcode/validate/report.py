"""The `vtcode validate` report: options, problems and per-file results as typed JSON.

These dataclasses are the one definition of the report; `vtcode validate --json` prints
`encode(ValidateReport)` and `schemas/validate-report.schema.json` is generated from them, so
scripts can rely on the shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any

from vtcode.jsontypes import U64, Doc, IntRange
from vtcode.lineshape import LineShape

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_PROBLEMS",
    "REPORT_SCHEMA_VERSION",
    "FileReport",
    "FileStatus",
    "FormatOption",
    "LineShape",
    "Problem",
    "ProblemCode",
    "Profile",
    "RuleGroup",
    "Severity",
    "Totals",
    "ValidateOptions",
    "ValidateReport",
]

REPORT_SCHEMA_VERSION = 1
DEFAULT_MAX_PROBLEMS = 1000
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024


class FormatOption(StrEnum):
    """Which line shape to expect: detected per file from its first parsable line, or forced."""

    AUTO = "auto"
    RAW = "raw"
    WRAPPED = "wrapped"


class Profile(StrEnum):
    """Which rules decide: vtcode's (shape, envelope, lifecycle, stricter checks) or upstream's
    reader alone (each line as `vtcode-exec-events`' serde types read it, nothing else); `auto`
    picks vtcode's for a log that carries vtcode's envelope (`seq`/`ts`), upstream's for others."""

    AUTO = "auto"
    VTCODE = "vtcode"
    UPSTREAM = "upstream"


class RuleGroup(StrEnum):
    """The rule group a problem belongs to (docs/validate.md lists what each checks).

    `shape`: upstream's reader (serde_json and the Rust types) refuses the line. `strict`: the
    line reads upstream but breaks a vtcode rule for its own writer (a repeated key anywhere,
    null for an optional field, an unknown field...). `envelope`: vtcode's `seq`/`ts`/version.
    `lifecycle`: the order of events over the log. `reading`: the file itself (empty, too long).
    """

    SHAPE = "shape"
    STRICT = "strict"
    ENVELOPE = "envelope"
    LIFECYCLE = "lifecycle"
    READING = "reading"


class Severity(StrEnum):
    """Errors make a file invalid (exit 1); warnings are reported but do not."""

    ERROR = "error"
    WARNING = "warning"


class FileStatus(StrEnum):
    """The verdict on one input."""

    VALID = "valid"
    INVALID = "invalid"
    UNREADABLE = "unreadable"


class ProblemCode(StrEnum):
    """Short, stable problem codes (scripts may match on them)."""

    # reading and JSON syntax
    UNREADABLE = "unreadable"
    EMPTY_LOG = "empty-log"
    BLANK_LINE = "blank-line"
    LINE_TOO_LONG = "line-too-long"
    TORN_LINE = "torn-line"
    MISSING_NEWLINE = "missing-newline"
    MALFORMED_JSON = "malformed-json"
    INVALID_UTF8 = "invalid-utf8"
    LONE_SURROGATE = "lone-surrogate"
    NON_FINITE_NUMBER = "non-finite-number"
    TOO_DEEP = "too-deep"
    # reader parity: JSON that upstream's serde_json refuses although it parses
    DUPLICATE_KEY = "duplicate-key"
    FLOAT_FOR_INTEGER = "float-for-integer"
    UPSTREAM_REJECTS = "upstream-rejects"
    # schema
    SHAPE_MISMATCH = "shape-mismatch"
    WRONG_TYPE = "wrong-type"
    NULL_VALUE = "null-value"
    MISSING_FIELD = "missing-field"
    EXTRA_FIELD = "extra-field"
    UNKNOWN_EVENT_TYPE = "unknown-event-type"
    UNKNOWN_ITEM_TYPE = "unknown-item-type"
    UNKNOWN_ENUM_VALUE = "unknown-enum-value"
    BAD_VALUE = "bad-value"
    OUT_OF_RANGE = "out-of-range"
    BAD_FORMAT = "bad-format"
    SCHEMA_VIOLATION = "schema-violation"
    # envelope
    SCHEMA_VERSION = "schema-version"
    SEQ_GAP = "seq-gap"
    # lifecycle
    NOT_STARTED_FIRST = "not-started-first"
    DUPLICATE_THREAD_STARTED = "duplicate-thread-started"
    DUPLICATE_THREAD_COMPLETED = "duplicate-thread-completed"
    AFTER_THREAD_COMPLETED = "after-thread-completed"
    MISSING_THREAD_COMPLETED = "missing-thread-completed"
    THREAD_ID_MISMATCH = "thread-id-mismatch"
    NESTED_TURN = "nested-turn"
    TURN_NOT_STARTED = "turn-not-started"
    UNCLOSED_TURN = "unclosed-turn"
    ITEM_NOT_STARTED = "item-not-started"
    DUPLICATE_ITEM_STARTED = "duplicate-item-started"
    ITEM_AFTER_COMPLETED = "item-after-completed"
    ITEM_TYPE_CHANGED = "item-type-changed"
    ITEM_NOT_COMPLETED = "item-not-completed"
    UNKNOWN_CALL_ID = "unknown-call-id"


@dataclass(frozen=True, slots=True, kw_only=True)
class ValidateOptions:
    """What to check; the same object is echoed in the report so a result is self-describing."""

    format: FormatOption = FormatOption.AUTO
    profile: Annotated[
        Profile,
        Doc(
            "vtcode: every rule group; upstream: upstream's reader verdict per line only; "
            "auto: vtcode for a log with vtcode's envelope (seq/ts), upstream for others"
        ),
    ] = Profile.AUTO
    strict: Annotated[
        bool, Doc("also flag what only upstream readers tolerate (unknown types/enums, extras)")
    ] = False
    lifecycle: Annotated[bool, Doc("check the event sequence rules")] = True
    partial: Annotated[
        bool, Doc("accept a valid prefix: a live or crashed session, no thread.completed yet")
    ] = False
    max_problems: Annotated[int, IntRange(1, 2**32 - 1), Doc("problems listed per file")] = (
        DEFAULT_MAX_PROBLEMS
    )
    max_line_bytes: Annotated[int, IntRange(1, 2**63 - 1), Doc("longest accepted line")] = (
        DEFAULT_MAX_LINE_BYTES
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Problem:
    """One finding, located by line (1-based; 0 = the file itself), column and JSON pointer."""

    line: U64
    column: Annotated[U64 | None, Doc("1-based, for JSON syntax errors")] = None
    pointer: Annotated[str, Doc("JSON pointer into the line's document ('' = the whole line)")]
    code: ProblemCode
    severity: Severity
    message: str
    value: Annotated[Any | None, Doc("the real offending value (type tag, enum string, key)")] = (
        None
    )
    rule: Annotated[RuleGroup, Doc("the rule group that found it (docs/validate.md)")] = (
        RuleGroup.SHAPE
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class FileReport:
    """The result for one input (`-` is stdin)."""

    path: str
    status: FileStatus
    format: Annotated[LineShape | None, Doc("the line shape checked (detected or forced)")] = None
    lines: U64 = 0
    events: Annotated[U64, Doc("lines that parsed as a JSON object")] = 0
    bytes: U64 = 0
    errors: U64 = 0
    warnings: U64 = 0
    suppressed: Annotated[U64, Doc("problems counted but not listed (over max_problems)")] = 0
    event_types: Annotated[
        dict[str, U64], Doc("events per known type; any other type is counted under `unknown`")
    ] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class Totals:
    """Sums over every file."""

    files: U64
    lines: U64
    events: U64
    errors: U64
    warnings: U64


@dataclass(frozen=True, slots=True, kw_only=True)
class ValidateReport:
    """The whole `vtcode validate --json` document."""

    schema_version: Annotated[int, IntRange(1, 1)] = REPORT_SCHEMA_VERSION
    valid: bool
    exit_code: Annotated[int, Doc("0 valid, 1 invalid, 2 unreadable input")]
    options: ValidateOptions
    totals: Totals
    files: list[FileReport]
