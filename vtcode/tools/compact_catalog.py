"""The tool catalog as a small model is shown it: the `compact` harness (issue 28).

Measured on Qwen2.5-Coder 0.5B/1.5B (docs/eval.md): the full catalog costs ~1,300 prompt tokens
of schemas (`write_stdin` and `exec_command` alone ~670), and a small model given seven tools
with options it never needs picks the wrong one or invents one. The compact view offers four
tools, each with one line of description and only the arguments a small model uses:

- `read_file(path)`, `write_file(path, content)` (a whole file: small models cannot write
  patches, so `apply_patch` is not offered), `exec_command(command)`, `list_files(path)`.

The view changes only what the model is *shown*: every call is still validated against the
tool's full schema and runs through the same permissions, hooks and sandbox. One default the
view hides is filled in: `exec_command` waits up to `COMPACT_YIELD_MS` for the command to end
(the full catalog's 1 s default relies on `write_stdin`, which is not offered). And a
command's result is shown as its output and exit code, not the full JSON record: a small model
given the record copies it back as its next answer (bench, fix-off-by-one, 2026-12-06).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from vtcode.messages import ToolSpec
from vtcode.tools.salient import salient_lines

__all__ = ["COMPACT_TOOLS", "COMPACT_YIELD_MS", "CompactCatalog"]

# How long a compact exec_command waits for its command before returning (the tool's maximum is
# 300 s; a command still running then returns what it printed so far, as in the full catalog).
COMPACT_YIELD_MS = 120_000
# A cut output's tail as a compact model reads it: the preview's 6 KiB of a long log is ~1,500
# tokens of lines that are not the point; the lines that report errors are added apart.
COMPACT_TAIL_CHARS = 2000
# A command that only sets shell state (`export X=1`, `cd dir`) changes nothing for the next
# command, each run in a fresh shell: qwen1.5b exported BUILD_MODE alone, then said "Done."
_LONE_STATE = re.compile(r"^\s*(?:export|cd|set|unset|source|\.)\s+[^;&|\n]*$")
_FRESH_SHELL_NOTE = (
    "\n[each command runs in a fresh shell: this changes nothing for the next one; put both on "
    "one line, for example: export X=1 && python3 build.py]"
)

_STRING = {"type": "string", "minLength": 1}
# The arguments the read-only tools take (their full schemas'); any other key a small model adds
# to a read (qwen0.5b: read_file {"path": ..., "content": "server.port = 8443"}) is dropped.
_READ_ARGUMENTS = {
    "read_file": frozenset({"path", "offset", "limit"}),
    "list_files": frozenset({"path", "recursive", "max_entries"}),
}
# JSON Schema keywords of the shown specs; none is an argument of a compact tool.
_SCHEMA_WORDS = frozenset({"required", "type", "properties", "additionalProperties"})

# name -> (description, {argument: schema}, required arguments)
COMPACT_TOOLS: dict[str, tuple[str, dict[str, dict[str, Any]], tuple[str, ...]]] = {
    "read_file": ("Show the lines of a text file.", {"path": _STRING}, ("path",)),
    "write_file": (
        "Create a file, or replace a file's whole content with `content`.",
        {"path": _STRING, "content": {"type": "string"}},
        ("path", "content"),
    ),
    "exec_command": (
        "Run a shell command in the folder; returns its output and exit code.",
        {"command": {**_STRING, "description": "a bash command line"}},
        ("command",),
    ),
    "list_files": ("List the files in a folder.", {"path": _STRING}, ()),
}


class CompactCatalog:
    """Which tools a small model is offered, how each is shown, and the defaults it omits."""

    names = tuple(COMPACT_TOOLS)

    def offers(self, name: str) -> bool:
        return name in COMPACT_TOOLS

    def present(self, spec: ToolSpec) -> ToolSpec:
        """`spec` as the compact catalog shows it (a tool it does not know, unchanged)."""
        shown = COMPACT_TOOLS.get(spec.name)
        if shown is None:
            return spec
        description, properties, required = shown
        parameters: dict[str, Any] = {
            "type": "object",
            "properties": properties,
            "required": list(required),
        }
        return ToolSpec(name=spec.name, description=description, parameters=parameters)

    def complete(self, name: str, arguments: Any) -> Any:
        """The call's arguments with the defaults the compact view hides filled in, and without
        the schema words a small model copies from the spec into its call (qwen0.5b on
        fix-typo: `{"command": "...", "required": ["command"]}`), and of a read, any key it
        does not take; a write's or a command's other keys are kept, so a real mistake there
        still fails the full schema's check."""
        if name not in COMPACT_TOOLS or not isinstance(arguments, dict):
            return arguments
        args = {k: v for k, v in arguments.items() if k not in _SCHEMA_WORDS}
        reads = _READ_ARGUMENTS.get(name)
        if reads is not None:  # a read changes nothing: an extra key cannot change what it does
            args = {k: v for k, v in args.items() if k in reads}
        if name == "exec_command" and "yield_time_ms" not in args:
            args["yield_time_ms"] = COMPACT_YIELD_MS
        return args

    def show(self, name: str, output: str, spool: Path | None = None) -> str:
        """A tool's result as the model reads it: exec_command's record as plain text. A cut
        output keeps its last `COMPACT_TAIL_CHARS` and gains the lines of the full output
        (`spool`) that report an error (`tools/salient.py`)."""
        if name != "exec_command":
            return output
        try:
            record = json.loads(output)
        except ValueError:
            return output
        if not isinstance(record, dict) or not isinstance(record.get("output"), str):
            return output
        text = record["output"].rstrip("\n")
        if record.get("output_truncated"):
            text = _tail(text)
            text += f"\n[output cut: {record.get('total_output_bytes')} bytes in all]"
            text += _salient(spool, text)
        if _LONE_STATE.match(str(record.get("command", ""))):
            text += _FRESH_SHELL_NOTE
        if record.get("cancelled"):
            return f"{text}\n[stopped: the run was cancelled]".lstrip("\n")
        if record.get("is_exited") is False:
            return f"{text}\n[still running after {COMPACT_YIELD_MS // 1000} s]"
        return f"{text}\n[exit code {record.get('exit_code')}]".lstrip("\n")


def _tail(text: str) -> str:
    """The last `COMPACT_TAIL_CHARS` of a cut output, from a line's start."""
    if len(text) <= COMPACT_TAIL_CHARS:
        return text
    cut = text[-COMPACT_TAIL_CHARS:]
    newline = cut.find("\n")
    return "[...]\n" + (cut[newline + 1 :] if 0 <= newline < len(cut) - 1 else cut)


def _salient(spool: Path | None, shown: str) -> str:
    """The lines of the whole output that report an error and are not in `shown`."""
    if spool is None:
        return ""
    found = salient_lines(spool, shown=shown)
    if not found.lines:
        return ""
    listed = "\n".join(found.lines)
    more = f" ({found.total} in all; the first shown)" if found.total > len(found.lines) else ""
    return f"\n[lines of the whole output that report an error{more}:]\n{listed}"
