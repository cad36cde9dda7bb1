"""`vtcode validate`: parse options, call `vtcode.validate`, render the report.

Output contract: with `--json`, exactly one report document (schema `validate-report`) on stdout
and nothing else there. Without it, one summary line per file on stdout (`PATH: valid ...`) and
every problem on stderr as `PATH:LINE[:COL]: SEVERITY [CODE] (RULE) POINTER: MESSAGE`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import rich_click as click

from vtcode.cli.context import AppContext
from vtcode.errors import UsageError

_PROGRESS_MIN_BYTES = 4 * 1024 * 1024


class _ProgressBars:
    """A rich progress bar on stderr for large regular files, only when stderr is a terminal."""

    def __init__(self, enabled: bool, color: bool) -> None:
        self.enabled = enabled
        self.color = color
        self._progress: Any = None

    def for_file(self, name: str, size: int | None) -> Callable[[int], None] | None:
        if not self.enabled or size is None or size < _PROGRESS_MIN_BYTES:
            return None
        if self._progress is None:
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
                TransferSpeedColumn,
            )

            from vtcode.cli.output import stderr_console

            console = stderr_console(self.color)
            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                DownloadColumn(),
                TransferSpeedColumn(),
                TimeRemainingColumn(),
                console=console,
                transient=True,
            )
            self._progress.start()
        progress = self._progress
        task = progress.add_task(name, total=size)

        def update(done: int) -> None:
            progress.update(task, completed=done)

        return update

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def _render_human(report: Any, color: bool, *, strict: bool) -> None:
    from vtcode.cli.output import stderr_console
    from vtcode.termtext import inert_line
    from vtcode.validate import FileStatus, Severity

    console = stderr_console(color)
    out = sys.stdout
    for f in report.files:
        path = inert_line(f.path)  # a file name is whatever the caller (or a glob) passed
        for p in f.problems:
            where = f"{path}:{p.line}" if p.line else path
            if p.column:
                where += f":{p.column}"
            ptr = f" {p.pointer}" if p.pointer else ""
            style = "red" if p.severity is Severity.ERROR else "yellow"
            console.print(
                f"{where}: {p.severity.value} [{p.code.value}] ({p.rule.value}){inert_line(ptr)}: "
                f"{inert_line(p.message)}",
                style=style,
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
        if f.suppressed:
            console.print(
                f"{path}: {f.suppressed} more problem(s) not shown (raise --max-problems)",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
        if f.status is FileStatus.UNREADABLE:
            reason = f.problems[0].message if f.problems else "unreadable"
            out.write(f"{path}: unreadable: {inert_line(reason)}\n")
            continue
        parts = [f"{f.lines} lines"]
        if f.format:
            parts.append(f.format.value)
        parts.append(f"{f.errors} error(s), {f.warnings} warning(s)")
        out.write(f"{path}: {f.status.value} ({', '.join(parts)})\n")
    if len(report.files) > 1:
        by = {s: sum(1 for f in report.files if f.status is s) for s in FileStatus}
        out.write(
            f"{len(report.files)} files: {by[FileStatus.VALID]} valid, "
            f"{by[FileStatus.INVALID]} invalid, {by[FileStatus.UNREADABLE]} unreadable\n"
        )
    warnings = sum(f.warnings for f in report.files)
    if warnings and not strict:
        # A CI job that reads only the exit code never sees a warning (a mangled event type is
        # one): say what they mean for the exit code and how to make them count (issue 26).
        out.write(
            f"{warnings} warning(s) found; warnings do not change the exit code: "
            "--strict makes them errors (exit 1)\n"
        )
    out.flush()


@click.command("validate")
@click.argument("files", nargs=-1, metavar="[FILE...|-]")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "raw", "wrapped"]),
    default="auto",
    show_default=True,
    help="Line shape: raw ThreadEvent lines (exec --json), wrapped {schema_version, event} "
    "lines (events.jsonl), or auto-detected per file from its first parsable line.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one report document on stdout.")
@click.option(
    "--output-format",
    "output_format",
    type=click.Choice(["text", "json", "github", "gitlab"]),
    default=None,
    help="text (summary on stdout, problems on stderr), json (= --json), github (workflow "
    "annotations: ::error file=...,line=...::...), gitlab (a Code Quality JSON report).",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Also fail on what upstream readers merely tolerate: unknown event types, unknown "
    "catch-all enum strings, extra fields, absent defaulted fields, other schema versions.",
)
@click.option(
    "--profile",
    type=click.Choice(["auto", "vtcode", "upstream"]),
    default="auto",
    show_default=True,
    help="vtcode: every rule group (shape, strict, envelope, lifecycle). upstream: exactly what "
    "upstream's reader (vtcode-exec-events' serde types) accepts, line by line, and nothing "
    "else. auto: vtcode for a log that carries vtcode's envelope (seq/ts), upstream for any "
    "other log (docs/validate.md).",
)
@click.option("--no-lifecycle", is_flag=True, help="Check each line alone, not the sequence.")
@click.option(
    "--partial",
    is_flag=True,
    help="Accept a valid prefix (a live or crashed session): no thread.completed needed, "
    "open turns/items allowed, a torn final line is a warning.",
)
@click.option(
    "--max-problems",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="List at most N problems per file (default 1000); the rest are counted.",
)
@click.option(
    "--max-line-bytes",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Longest accepted line in bytes (default 64 MiB); longer lines are skipped.",
)
@click.option(
    "--jobs",
    type=click.IntRange(1, 2),
    default=None,
    metavar="N",
    help="Processes per file: 1, or 2 (the second half of a file in a second process). "
    "Default: 2 for a regular file of 8 MiB or more on a machine with two CPUs. The report "
    "is the same either way.",
)
@click.pass_obj
def validate(
    app: AppContext,
    files: tuple[str, ...],
    fmt: str,
    as_json: bool,
    output_format: str | None,
    strict: bool,
    profile: str,
    no_lifecycle: bool,
    partial: bool,
    max_problems: int | None,
    max_line_bytes: int | None,
    jobs: int | None,
) -> int:
    """Validate ThreadEvent JSONL logs against the published schemas and lifecycle rules.

    FILE may be `-` for standard input. Output: one summary line per file on stdout, and each
    problem on stderr as PATH:LINE[:COL]: SEVERITY [CODE] (RULE) POINTER: MESSAGE. With --json,
    stdout carries one report document instead (schema: `vtcode schema show validate-report`).

    Exit codes: 0 every file valid, 1 a file is invalid, 2 an input is unreadable or the
    arguments are wrong. Warnings (what upstream readers tolerate) never change the exit code
    unless --strict makes them errors.
    """
    from vtcode.validate import (
        DEFAULT_MAX_LINE_BYTES,
        DEFAULT_MAX_PROBLEMS,
        FormatOption,
        Profile,
        ValidateOptions,
        validate_files,
    )

    if not files:
        raise UsageError("no input given", hint="name one or more FILEs, or - for standard input")
    if files.count("-") > 1:
        raise UsageError("standard input (-) can be read only once")
    options = ValidateOptions(
        format=FormatOption(fmt),
        strict=strict,
        profile=Profile(profile),
        lifecycle=not no_lifecycle,
        partial=partial,
        max_problems=max_problems or DEFAULT_MAX_PROBLEMS,
        max_line_bytes=max_line_bytes or DEFAULT_MAX_LINE_BYTES,
    )
    from vtcode.cli.stdin import stdin_buffer

    bars = _ProgressBars(
        enabled=not app.quiet and bool(getattr(sys.stderr, "isatty", lambda: False)()),
        color=app.color,
    )
    try:
        report = validate_files(
            list(files), options, stdin=stdin_buffer(), progress_for=bars.for_file, jobs=jobs
        )
    finally:
        bars.close()
    shape = output_format or ("json" if as_json else "text")
    if as_json and shape != "json":
        raise UsageError("--json and --output-format " + shape + " disagree; give one of them")
    if shape == "json":
        from vtcode.cli.output import emit_json
        from vtcode.jsontypes import encode

        emit_json(encode(report))
    elif shape == "github":
        from vtcode.validate.annotations import github_annotations

        sys.stdout.write(github_annotations(report))
        sys.stdout.flush()
    elif shape == "gitlab":
        from vtcode.cli.output import emit_json
        from vtcode.validate.annotations import gitlab_code_quality

        emit_json(gitlab_code_quality(report))
    else:
        _render_human(report, app.color, strict=strict)
    return report.exit_code
