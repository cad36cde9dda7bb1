"""Rendering helpers: JSON to stdout, human text to stderr, colour only when wanted."""

from __future__ import annotations

import os
import sys
from typing import Any

import orjson

from vtcode.redact import redact_text
from vtcode.termtext import inert


def want_color(color: bool, stream: Any = None) -> bool:
    stream = stream or sys.stderr
    return (
        color
        and not os.environ.get("NO_COLOR")
        and bool(getattr(stream, "isatty", lambda: False)())
    )


def stderr_console(color: bool = True) -> Any:
    """A rich Console on stderr (imported lazily: rich costs start-up time)."""
    from rich.console import Console

    use = want_color(color)
    return Console(
        stderr=True,
        no_color=not use,
        highlight=False,
        force_terminal=None if use else False,
        color_system="auto" if use else None,  # None: no bold either, not just no colour
    )


def emit_json(data: Any, *, pretty: bool = True) -> None:
    """One JSON document on stdout."""
    opts = orjson.OPT_INDENT_2 if pretty else 0
    sys.stdout.buffer.write(orjson.dumps(data, option=opts) + b"\n")
    sys.stdout.flush()


def print_error(message: str, *, color: bool = False) -> None:
    prefix = "\x1b[31merror\x1b[0m" if want_color(color) else "error"
    # Messages quote paths, values, URLs and log text: no credential, no escape sequence.
    sys.stderr.write(f"{prefix}: {inert(redact_text(message))}\n")
    sys.stderr.flush()


def print_warning(message: str, *, color: bool = False) -> None:
    prefix = "\x1b[33mwarning\x1b[0m" if want_color(color) else "warning"
    sys.stderr.write(f"{prefix}: {inert(redact_text(message))}\n")
    sys.stderr.flush()
