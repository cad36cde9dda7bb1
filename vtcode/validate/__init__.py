"""Event-log validation: JSON syntax, schema per line and lifecycle rules over the sequence.

Core only (no click): `vtcode validate` renders what `validate_files` returns.
"""

from vtcode.validate.engine import (
    Progress,
    build_report,
    exit_code_for,
    validate_files,
    validate_path,
    validate_stream,
)
from vtcode.validate.report import (
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MAX_PROBLEMS,
    REPORT_SCHEMA_VERSION,
    FileReport,
    FileStatus,
    FormatOption,
    Problem,
    ProblemCode,
    Profile,
    RuleGroup,
    Severity,
    Totals,
    ValidateOptions,
    ValidateReport,
)

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_PROBLEMS",
    "REPORT_SCHEMA_VERSION",
    "FileReport",
    "FileStatus",
    "FormatOption",
    "Problem",
    "ProblemCode",
    "Profile",
    "Progress",
    "RuleGroup",
    "Severity",
    "Totals",
    "ValidateOptions",
    "ValidateReport",
    "build_report",
    "exit_code_for",
    "validate_files",
    "validate_path",
    "validate_stream",
]
