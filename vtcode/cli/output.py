"""Rendering helpers: JSON to stdout, human text to stderr, colour only when wanted."""

from __future__ import annotations

import os
import sys
from typing import Any

import orjson

from vtcode.termtext import inert


def want_color(color: bool, stream: Any = None) -> bool:
    """Colour on `stream`: never when refused (--no-color, --color never, NO_COLOR), always with
    FORCE_COLOR (non-empty; --color always sets it), else only on a terminal."""
    stream = stream or sys.stderr
    if not color or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return bool(getattr(stream, "isatty", lambda: False)())


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
    _report("error", "31", message, color)


def print_warning(message: str, *, color: bool = False) -> None:
    _report("warning", "33", message, color)


def _report(label: str, sgr: str, message: str, color: bool) -> None:
    """One `label: message` line on stderr. Messages quote paths, values, URLs and log text:
    no credential and no escape sequence gets through. The redactor is imported here, on the
    error path, so it costs nothing at start-up."""
    from vtcode.redact import redact_text

    prefix = f"\x1b[{sgr}m{label}\x1b[0m" if want_color(color) else label
    sys.stderr.write(f"{prefix}: {inert(redact_text(message))}\n")
    sys.stderr.flush()
