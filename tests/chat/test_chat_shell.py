"""`!CMD` in `vtcode chat`: the user's own shell command, recorded as `command_execution` items.

End to end in tmux (the harness of tests/test_chat_tmux.py): the command really runs in the
workspace through the run's exec_command executor (so the permission policy applies: a `deny`
rule refuses it, and nothing runs), its output and exit status are shown, Ctrl-C stops a long
one without ending the session, and the model's turns go on as before. The canonical log
validates (`vtcode validate` and the published schema) and matches a reviewed snapshot: each
command is `item.started(command_execution{status: in_progress, aggregated_output: ""})` then
`item.completed` with status, exit code and output (upstream-contract §1.4).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from tests.chat.test_chat_tmux import Chat, chat, checked_snapshot, wait_until  # noqa: F401
from tests.exec_support import vtcode
from tests.report.test_html_page import Page

DENY_RM = ("-c", 'permissions.deny=["exec_command(rm *)"]')
SLEEP = "123.4567"  # a sleep no other process runs


def _commands(events: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (e["type"], e["item"])
        for e in events
        if e["type"].startswith("item.") and e["item"]["type"] == "command_execution"
    ]


def test_bang_commands_run_and_are_recorded(
    chat: Callable[..., Chat],  # noqa: F811
    snapshot_json: Any,
) -> None:
    c = chat("chat-two-turns", glob=DENY_RM)
    c.say("!printf 'one\\ntwo\\n'; exit 3")
    c.wait_text("[shell done] failed, exit 3")
    c.say("!echo made > made.txt && cat made.txt")
    c.wait_text("[shell done] completed, exit 0")
    c.say("!rm notes.txt")  # denied by the policy: never runs
    c.wait_text("[shell done] failed, no exit code")
    c.say("hello there")  # the model's turns are unaffected (the script's first reply)
    c.wait_text("Hello! I can read, run and change things")
    c.wait_prompt()
    c.key("C-d")
    assert c.exit_code() == 0
    assert (c.ws / "notes.txt").read_text() == "hi\n"
    assert (c.ws / "made.txt").read_text() == "made\n"
    screen = c.screen()
    assert "[shell] $ printf 'one\\ntwo\\n'; exit 3" in screen
    assert "one\ntwo\n[shell done] failed, exit 3" in screen
    events = checked_snapshot(c.ws)
    items = _commands(events)
    assert [kind for kind, _ in items] == ["item.started", "item.completed"] * 3
    for _, item in items[::2]:
        assert (item["status"], item["aggregated_output"]) == ("in_progress", "")
        assert "exit_code" not in item
    done = [item for _, item in items[1::2]]
    assert [(d["status"], d.get("exit_code")) for d in done] == [
        ("failed", 3),
        ("completed", 0),
        ("failed", None),
    ]
    assert done[0]["aggregated_output"] == "one\ntwo\n"
    assert done[1]["aggregated_output"] == "made\n"
    assert "permission denied for exec_command" in done[2]["aggregated_output"]
    # commands at the prompt lie between turns: the one user turn is still one pair
    assert [e["type"] for e in events].count("turn.started") == 1
    assert events == snapshot_json
    # the session's page shows the commands and the turn's typed prompt
    target = c.ws.parent / "chat-page.html"
    proc = vtcode(["sessions", "show", "chat-session", "--html", str(target)], c.ws)
    assert proc.returncode == 0, proc.stderr
    page = Page(target.read_text(encoding="utf-8"))
    assert page.count("li", "kind-command_execution") == 3
    assert "$ printf 'one\\ntwo\\n'; exit 3" in page.all_text and "exit 3" in page.all_text
    assert "permission denied for exec_command" in page.all_text
    assert page.count("div", "turn-prompt") == 1
    assert "userhello there" in page.all_text  # the label, then what was typed


def test_ctrl_c_stops_a_bang_command_not_the_session(
    chat: Callable[..., Chat],  # noqa: F811
    snapshot_json: Any,
) -> None:
    c = chat("chat-two-turns")
    c.say(f"!touch started.flag; exec sleep {SLEEP}")
    wait_until("the command to start", lambda: _sleepers() and (c.ws / "started.flag").exists())
    c.key("C-c")
    c.wait_text("[shell done] failed, no exit code")
    wait_until("the command to be stopped", lambda: not _sleepers())
    c.say("hello there")
    c.wait_text("Hello! I can read, run and change things")
    c.wait_prompt()
    c.key("C-d")
    assert c.exit_code() == 0  # the session ended normally, not as cancelled
    events = checked_snapshot(c.ws)
    (_, done) = _commands(events)[1]
    assert done["aggregated_output"] == "\n[stopped by Ctrl-C]\n"
    assert events[-1]["outcome_code"] == "completed"
    assert events == snapshot_json


def _sleepers() -> list[str]:
    """Live processes running `sleep SLEEP` (the sandbox may give the command its own pid
    namespace, so its `$$` means nothing out here: it is found by its unique argument)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if argv[:2] == [b"sleep", SLEEP.encode()] and state != "Z":
            found.append(entry)
    return found


def test_bang_lines_parse_to_shell_commands() -> None:
    import pytest

    from vtcode.interactive.commands import Command, ParseError, help_text, parse_line

    assert parse_line("  !ls -la  ") == Command("shell", "ls -la")
    assert parse_line("!!not a command") == Command(None, "!not a command")
    assert parse_line("say !this") == Command(None, "say !this")
    with pytest.raises(ParseError, match="! needs a command"):
        parse_line("!  ")
    assert "!CMD" in help_text()
