"""An assistant answer as markdown on a real terminal (rich), as text the terminal can print.

The text is made inert first (no escape sequence or control character from the model reaches the
terminal), links are not turned into OSC 8 hyperlinks, and without colour (NO_COLOR,
`--color never`) rich writes no escape sequence at all: the layout (headings, bullets, code
blocks, wrapping) stays, the styling goes.
"""

from __future__ import annotations

import io

from rich.console import Console
from rich.markdown import Markdown

from vtcode.termtext import inert

__all__ = ["render_markdown"]


def render_markdown(text: str, *, width: int, color: bool) -> str:
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=max(20, width - 1),
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
        highlight=False,
        emoji=False,
        markup=False,
    )
    console.print(Markdown(inert(text), hyperlinks=False))
    # rich pads every line to the width; a line that fills the terminal's last column would
    # leave the cursor waiting to wrap, so the padding goes (and the width keeps one column)
    return "".join(line.rstrip(" ") + "\n" for line in buffer.getvalue().splitlines())
