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

import pytest

from tests.chat.test_chat_tmux import Chat, chat, checked_snapshot, wait_until  # noqa: F401

SCRIPT = Path(__file__).parents[1] / "fixtures" / "chat" / "spinner-markdown.toml"
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


def test_no_color_flag_plain_answers(
    chat: Callable[..., Chat],  # noqa: F811
) -> None:
    args = ["--no-color", "chat", "--session-id", "chat-session", "--script", str(SCRIPT)]
    c = chat(None, *args, env={"NO_COLOR": "", "TERM": "xterm-256color"})
    _wait_and_release(c)
    answer = _colour_screen(c).split("Waiting for the flag.", 1)[1]
    assert SGR.search(answer) is None, answer  # --no-color: layout kept, no styling
    assert " • first point" in answer
    c.wait_prompt()
    c.key("C-d")
    assert c.exit_code() == 0


def test_the_model_spinner_counts_while_a_request_waits(
    chat: Callable[..., Chat],  # noqa: F811
) -> None:
    c = chat("slow-turn")  # the first reply comes after 30 s: Ctrl-C ends the wait
    c.say("hello")
    model = re.compile(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] model (\d+\.\d)s")
    first = wait_until(f"the model spinner:\n{c.screen()}", lambda: model.search(c.screen()))
    wait_until(
        "the elapsed time to grow",
        lambda: (m := model.search(c.screen())) is not None and m[1] != first[1],
    )
    c.key("C-c")
    c.wait_text("[turn failed] turn cancelled")
    c.wait_prompt()
    assert not model.search(c.screen())  # erased, not left on screen
    c.key("C-d")
    assert c.exit_code() == 0


# ---- the parts, in-process -------------------------------------------------------------------


def test_slash_completion_offers_commands_then_effort_levels() -> None:
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    from vtcode.interactive.editor import SlashCompleter

    def offered(text: str) -> list[str]:
        found = SlashCompleter().get_completions(Document(text), CompleteEvent(True))
        return [text[: len(text) + c.start_position] + c.text for c in found]

    assert offered("/s") == ["/status", "/steer"]
    assert offered("/EF") == ["/effort"]
    assert offered("/effort m") == ["/effort medium"]
    assert offered("/effort ") == ["/effort low", "/effort medium", "/effort high"]
    assert offered("hello /s") == [] and offered("//s") == [] and offered("/model g") == []


def test_history_lives_in_the_user_state_folder(tmp_path: Path) -> None:
    from vtcode.interactive.editor import history_path

    assert history_path({"VTCODE_HOME": "/h"}) == Path("/h/chat_history")
    state = {"XDG_STATE_HOME": "/s", "HOME": "/u"}
    assert history_path(state) == Path("/s/vtcode/chat_history")
    relative = {"XDG_STATE_HOME": "rel", "HOME": str(tmp_path)}
    assert history_path(relative) == Path.home() / ".local/state/vtcode/chat_history"


def test_markdown_is_inert_and_plain_without_colour() -> None:
    from vtcode.interactive.markdown import render_markdown

    hostile = "**bold** \x1b]52;c;QUFBQQ==\x07 [link](https://example.invalid) \x1b[2J`x`"
    plain = render_markdown(hostile, width=80, color=False)
    assert "\x1b" not in plain and "\x07" not in plain
    # the OSC 52 (clipboard) and erase-screen sequences are gone; the link shows its target
    assert plain == "bold  link (https://example.invalid) x\n"
    coloured = render_markdown(hostile, width=80, color=True)
    assert "\x1b]" not in coloured  # no OSC (clipboard, hyperlink): only SGR styling
    assert all(seq.endswith("m") for seq in re.findall(r"\x1b\[[0-9;]*[A-Za-z]", coloured))
    assert all(len(line) < 80 for line in plain.splitlines())  # never fills the last column


def test_the_history_file_keeps_no_known_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vtcode.interactive.editor import _history
    from vtcode.redact import MARKER

    key = "sk-test-" + "h1st" * 10
    monkeypatch.setenv("OPENAI_API_KEY", key)
    path = tmp_path / "state" / "chat_history"
    history = _history(path)
    history.store_string(f"use {key} please")
    assert key not in path.read_text() and f"+use {MARKER} please" in path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
