"""The validate report as CI annotations: GitHub workflow commands and GitLab Code Quality.

`vtcode validate --output-format github` prints one `::error file=…,line=…::…` (or `::warning`)
per problem, which GitHub Actions shows on the file's line in the pull request; `gitlab` prints
one Code Quality JSON array (description, check_name, fingerprint, severity, location), the
report GitLab shows in merge requests (`artifacts: reports: codequality:`).

Problem messages quote what the log held, so everything is made inert (no escape sequences
reach a CI log) and escaped for the format (GitHub's `%`, CR, LF, and `:` `,` in properties).
"""

from __future__ import annotations

import hashlib
from typing import Any

from vtcode.termtext import inert_line
from vtcode.validate.report import FileReport, Problem, Severity, ValidateReport

__all__ = ["github_annotations", "gitlab_code_quality"]


def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def _summary(p: Problem) -> str:
    where = f"{p.pointer}: " if p.pointer else ""
    return inert_line(f"[{p.code.value}] {where}{p.message}")


def github_annotations(report: ValidateReport) -> str:
    """One workflow command per problem (and one per unreadable file), in report order."""
    lines: list[str] = []
    for f in report.files:
        for p in f.problems:
            level = "error" if p.severity is Severity.ERROR else "warning"
            props = [f"file={_gh_property(f.path)}"]
            if p.line:
                props.append(f"line={p.line}")
            if p.column:
                props.append(f"col={p.column}")
            props.append(f"title={_gh_property('vtcode validate ' + p.code.value)}")
            lines.append(f"::{level} {','.join(props)}::{_gh_data(_summary(p))}")
    return "".join(line + "\n" for line in lines)


def _fingerprint(f: FileReport, p: Problem) -> str:
    """Stable across runs for the same finding, distinct per (file, line, code, pointer)."""
    key = "\x00".join((f.path, str(p.line), p.code.value, p.pointer))
    return hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()


def gitlab_code_quality(report: ValidateReport) -> list[dict[str, Any]]:
    """The GitLab Code Quality report: a JSON array of issues."""
    out: list[dict[str, Any]] = []
    for f in report.files:
        for p in f.problems:
            out.append(
                {
                    "description": _summary(p),
                    "check_name": p.code.value,
                    "fingerprint": _fingerprint(f, p),
                    "severity": "major" if p.severity is Severity.ERROR else "minor",
                    "location": {"path": f.path, "lines": {"begin": max(p.line, 1)}},
                }
            )
    return out
