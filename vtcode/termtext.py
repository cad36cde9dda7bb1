"""Make text that vtcode did not write inert before it reaches a terminal.

Agent text, reasoning, tool names and arguments, command output, file names, notes, config values
and log lines are controlled by a model or a repository. Printed raw, an escape sequence in them
clears the screen (CSI 2J), rewrites the window title or the clipboard (OSC 0/52), fakes a
hyperlink (OSC 8), or a carriage return overwrites the line a user is reading. `inert` is the one
function every human renderer passes such text through: it removes whole escape sequences (CSI,
OSC, DCS, SOS, PM, APC, in their 7-bit and 8-bit C1 forms, terminated or not) and then every other
C0/C1 control except newline and tab, and the Unicode bidirectional overrides that make text read
differently from what it is ("Trojan Source"). vtcode's own colours are added after this, by the
renderer, so they survive.
"""

from __future__ import annotations

import re

# An escape sequence, removed whole. Unterminated string sequences (OSC/DCS/…) run to the end of
# the text: a terminal would swallow everything after them too, so nothing readable is lost.
_SEQUENCE = re.compile(
    r"(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC … BEL/ST
    r"|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)?"  # DCS/SOS/PM/APC … ST
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI params intermediates final
    r"|\x1b[ -/]*[0-~]?"  # any other ESC sequence (charset selection, RIS, DECSC, …)
)
# What is left: C0 controls but tab and newline, DEL, C1 controls, bidi embeddings/overrides.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_C1_INTRO = re.compile("[\x90\x98\x9b\x9d\x9e\x9f]")
_QUICK = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def strip_sequences(text: str) -> str:
    """`text` without escape sequences, other characters (CR and backspace included) kept.

    For command output handed to the model: colours and cursor moves are noise there, while a
    carriage return still tells a progress bar's story.
    """
    if "\x1b" not in text and _C1_INTRO.search(text) is None:
        return text
    return _SEQUENCE.sub("", text)


def inert(text: str, *, newlines: bool = True) -> str:
    """`text` without escape sequences or control characters (newline and tab kept).

    With `newlines=False` a newline or tab becomes a space, for one-line renderings.
    """
    if _QUICK.search(text) is not None:
        text = _CONTROL.sub("", _SEQUENCE.sub("", text))
    if not newlines and ("\n" in text or "\t" in text):
        text = text.replace("\n", " ").replace("\t", " ")
    return text


def inert_line(text: object) -> str:
    """`inert(str(text))` on one line: for table cells, ids, names and single-line messages."""
    return inert(str(text), newlines=False)
