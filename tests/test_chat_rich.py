"""`vtcode chat` on a real terminal (tmux): prompt_toolkit input (Tab completion of slash
commands, a history file in the user's state folder), the activity line (spinner, what works,
elapsed seconds) and answers rendered as markdown, with colour only when it is wanted.

Same harness as tests/test_chat_tmux.py: type with send-keys, read with capture-pane, wait on
what the screen shows or a file the program writes, never a fixed sleep. The tool in the script
works until the test creates `go.flag`, so the activity line is on screen for as long as the test
needs to see it.
"""

from __future__ import annotations

import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.test_chat_tmux import Chat, chat, checked_snapshot, wait_until  # noqa: F401

SCRIPT = Path(__file__).parent / "fixtures" / "chat" / "spinner-markdown.toml"
SGR = re.compile(r"\x1b\[[0-9;]*m")


def _start(start: Callable[..., Chat], *, env: dict[str, str] | None = None) -> Chat:
    args = ["chat", "--session-id", "chat-session", "--script", str(SCRIPT)]
    return start(None, *args, env=env)


def _keys(c: Chat, text: str) -> None:
    """Type `text` without Enter."""
    c._tmux("send-keys", "-t", "chat", "-l", text)


def _colour_screen(c: Chat) -> str:
    return c._tmux("capture-pane", "-p", "-e", "-J", "-t", "chat", "-S", "-", "-E", "-")


def _wait_and_release(c: Chat) -> None:
    c.say("please wait")
    spinner = re.compile(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] exec_command \d+\.\ds")
    wait_until(f"the activity line:\n{c.screen()}", lambda: spinner.search(c.screen()))
    (c.ws / "go.flag").write_text("")
    c.wait_text("[turn done] tokens in 1900 / out 55")


def test_completion_spinner_markdown_and_history(
    chat: Callable[..., Chat],  # noqa: F811
    snapshot_json: Any,
) -> None:
    c = _start(chat)
    c.wait_prompt()
    _keys(c, "/ef")
    c.key("Tab")
    c.wait_text("> /effort")
    _keys(c, " h")
    c.key("Tab")
    c.wait_text("> /effort high")
    c.key("Enter")
    c.wait_text("reasoning effort high (a new request segment starts)")
    _wait_and_release(c)
    screen = "\n".join(c.lines())  # rich pads lines to the width: compare them stripped
    assert "The command printed released and exit 0." in screen  # no ** or ` left
    assert " • first point\n • second point" in screen
    assert "literal **code**" in screen  # a code block is shown as written
    assert "# Result" not in screen and "Result" in screen
    assert not re.search(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] ", screen)  # the activity line left no trace
    assert SGR.search(_colour_screen(c).split("Result", 1)[1]) is None  # NO_COLOR: no styling
    c.wait_prompt()
    c.key("C-d")
    assert c.exit_code() == 0
    assert checked_snapshot(c.ws) == snapshot_json
    # the history is in the user's state folder (VTCODE_HOME here), private, answers excluded
    history = c.home / "chat_history"
    assert stat.S_IMODE(history.stat().st_mode) == 0o600
    lines = [ln[1:] for ln in history.read_text().splitlines() if ln.startswith("+")]
    assert lines == ["/effort high", "please wait"]
    # a new chat recalls it with Up
    again = chat(None, "chat", "--session-id", "second", "--script", str(SCRIPT), ws=c.ws)
    again.wait_prompt()
    again.key("Up")
    again.wait_text("> please wait")
    again.key("Up")
    again.wait_text("> /effort high")
    again.key("C-u")
    again.key("C-d")
    assert again.exit_code() == 0


def test_answers_are_styled_when_colour_is_wanted(
    chat: Callable[..., Chat],  # noqa: F811
) -> None:
    c = _start(chat, env={"NO_COLOR": "", "TERM": "xterm-256color"})
    _wait_and_release(c)
    answer = _colour_screen(c).split("Waiting for the flag.", 1)[1]
    bold = re.search(r"\x1b\[[0-9;]*1[0-9;]*m(\x1b\[[0-9;]*m)*released", answer)
    assert bold is not None, answer  # **released** is bold, not asterisks
    c.wait_prompt()
    c.key("C-d")
    assert c.exit_code() == 0
