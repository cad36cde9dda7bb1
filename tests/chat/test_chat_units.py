"""`vtcode chat` pieces that need no terminal: the command parser, the permission prompt over
real text streams, the renderer's streaming, the session-end outcomes, and the CLI's refusals
(non-TTY `chat`, bare `vtcode` off a terminal) and laziness."""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunVtcode
from vtcode.events.enums import PermissionDecision
from vtcode.events.types import (
    AgentMessageItem,
    ItemCompletedEvent,
    ItemStartedEvent,
    ItemUpdatedEvent,
    PermissionRequestedEvent,
    PermissionResolvedEvent,
    ThreadItem,
)
from vtcode.interactive.commands import COMMANDS, Command, ParseError, help_text, parse_line
from vtcode.interactive.outcomes import leave_outcome
from vtcode.interactive.permission import PermissionPrompt
from vtcode.interactive.render import ChatRenderer
from vtcode.interactive.terminal import Key, Terminal
from vtcode.loop.cancel import Cancelled, CancelToken
from vtcode.loop.outcomes import Outcome, OutcomeKind
from vtcode.tools.permissions import Decision, PermissionVerdict


@pytest.mark.parametrize(
    ("line", "parsed"),
    [
        ("hello there", Command(None, "hello there")),
        ("  padded  ", Command(None, "padded")),
        ("//etc/hosts is a path", Command(None, "/etc/hosts is a path")),
        ("/help", Command("help")),
        ("/?", Command("help")),
        ("/quit", Command("exit")),
        ("/PLAN make it faster", Command("plan", "make it faster")),
        ("/plan", Command("plan")),
        ("/effort HIGH", Command("effort", "high")),
        ("/model gpt-4o", Command("model", "gpt-4o")),
        ("/steer also update the docs", Command("steer", "also update the docs")),
    ],
)
def test_parse_line(line: str, parsed: Command) -> None:
    assert parse_line(line) == parsed


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("/nope", "unknown command /nope"),
        ("/effort extreme", "choose one of low, medium, high"),
        ("/effort", "/effort needs LEVEL"),
        ("/model", "/model needs NAME"),
        ("/steer", "/steer needs TEXT"),
        ("/exit now", "/exit takes no argument"),
    ],
)
def test_bad_commands_never_reach_the_model(line: str, message: str) -> None:
    with pytest.raises(ParseError, match=re.escape(message)):
        parse_line(line)


def test_help_lists_every_command() -> None:
    text = help_text()
    for spec in COMMANDS:
        assert f"/{spec.name}" in text


def terminal(answers: str) -> tuple[Terminal, io.StringIO]:
    out = io.StringIO()
    return Terminal(stdin=io.StringIO(answers), stdout=out), out


ASK = PermissionVerdict(Decision.ASK, "exec_command(git *)", "rule 'exec_command(git *)' asks")


def prompt(answers: str) -> tuple[PermissionPrompt, list[Any], CancelToken, io.StringIO]:
    t, out = terminal(answers)
    p = PermissionPrompt(t)
    events: list[Any] = []
    cancel = CancelToken()
    p.bind(events.append, cancel)
    return p, events, cancel, out


def test_always_answers_every_later_call_of_the_same_rule() -> None:
    p, events, _, out = prompt("maybe\na\n")
    first = p.resolve("exec_command", {"command": "git status"}, ASK)
    assert first.decision is Decision.ALLOW
    assert "Allow exec_command git status?" in out.getvalue()
    assert "please answer y, n or a" in out.getvalue()  # the bad answer was asked again
    assert [type(e) for e in events] == [PermissionRequestedEvent, PermissionResolvedEvent]
    assert events[1].decision is PermissionDecision.ALLOW and events[1].wait_ms >= 0
    again = p.resolve("exec_command", {"command": "git log"}, ASK)
    assert again.decision is Decision.ALLOW and "approved for this session" in again.reason
    assert len(events) == 2  # no second question


def test_no_is_a_denial_the_model_sees() -> None:
    p, events, cancel, _ = prompt("n\n")
    verdict = p.resolve("exec_command", {"command": "git push"}, ASK)
    assert verdict.decision is Decision.DENY and "the user declined" in verdict.reason
    assert events[1].decision is PermissionDecision.DENY
    assert not cancel.cancelled


def test_eof_at_the_question_cancels_the_turn() -> None:
    p, events, cancel, _ = prompt("")
    with pytest.raises(Cancelled):
        p.resolve("exec_command", {"command": "git push"}, ASK)
    assert events[1].decision is PermissionDecision.CANCELLED
    assert cancel.cancelled and cancel.signum == signal.SIGINT


def test_verdicts_that_do_not_ask_pass_through_silently() -> None:
    p, events, _, out = prompt("")
    allow = PermissionVerdict(Decision.ALLOW, None, "no rule matched")
    deny = PermissionVerdict(Decision.DENY, "exec_command(rm *)", "denied")
    assert p.resolve("exec_command", {"command": "ls"}, allow) is allow
    assert p.resolve("exec_command", {"command": "rm -rf x"}, deny) is deny
    assert events == [] and out.getvalue() == ""


def test_terminal_reports_eof_as_a_key() -> None:
    t, _ = terminal("one\n")
    assert t.read("> ").text == "one"
    assert t.read("> ").key is Key.EOF


def _msg(event: type, text: str) -> Any:
    return event(item=ThreadItem(id="item_0", details=AgentMessageItem(text=text)))


def test_renderer_prints_each_streamed_character_once() -> None:
    t, out = terminal("")
    r = ChatRenderer(t)
    r.handle(_msg(ItemStartedEvent, "Hel"))
    r.handle(_msg(ItemUpdatedEvent, "Hello"))
    r.handle(_msg(ItemCompletedEvent, "Hello world"))
    r.handle(_msg(ItemCompletedEvent, "Lone"))  # a non-streamed message
    assert out.getvalue() == "Hello world\nLone\n"


def test_leaving_maps_to_the_interactive_outcome_codes() -> None:
    assert leave_outcome(OutcomeKind.COMPLETED, None).kind is OutcomeKind.COMPLETED
    assert leave_outcome(OutcomeKind.EXIT, None).kind.subtype.value == "cancelled"
    assert leave_outcome(OutcomeKind.NEW_SESSION, None).kind.code == "new_session"
    block = Outcome(OutcomeKind.LOOP_DETECTED, detail="3 identical rounds")
    blocked = leave_outcome(OutcomeKind.COMPLETED, block)
    assert (blocked.kind.code, blocked.kind.subtype.value) == ("blocked", "error_during_execution")
    assert "3 identical rounds" in blocked.detail
    # an interrupt stays exit
    assert leave_outcome(OutcomeKind.EXIT, block).kind is OutcomeKind.EXIT


def test_chat_refuses_a_non_terminal(run_vtcode: RunVtcode, tmp_path: Path) -> None:
    rc, out, err = run_vtcode(["chat"], cwd=tmp_path, input="hello\n")
    assert rc == 2
    assert "vtcode chat needs a terminal" in err and "vtcode exec" in err
    assert "Traceback" not in err and out == ""
    assert not (tmp_path / ".vtcode" / "sessions").exists()


def test_bare_vtcode_off_a_terminal_prints_help(run_vtcode: RunVtcode, tmp_path: Path) -> None:
    rc, out, _ = run_vtcode([], cwd=tmp_path)
    assert rc == 2
    assert "Usage: vtcode" in out and "chat" in out
    assert not (tmp_path / ".vtcode").exists()


def test_help_and_version_stay_lazy(tmp_path: Path) -> None:
    for args in (["--help"], ["--version"], ["chat", "--help"]):
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "vtcode", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines()}
        heavy = {m for m in imported if m.startswith(("vtcode.interactive", "vtcode.loop"))}
        assert not heavy, (args, heavy)


class _Shown(io.StringIO):
    """An output stream that says when the prompt has been written."""

    def __init__(self) -> None:
        super().__init__()
        self.prompted = threading.Event()

    def write(self, s: str) -> int:
        n = super().write(s)
        if s.endswith(": "):
            self.prompted.set()
        return n


@pytest.mark.parametrize(
    ("sig", "key", "run_cancelled"),
    [(signal.SIGINT, Key.INTERRUPT, False), (signal.SIGTERM, Key.TERMINATE, True)],
)
def test_signals_at_a_prompt_end_the_wait(sig: int, key: Key, run_cancelled: bool) -> None:
    """A real signal while a prompt blocks on a real pipe: Ctrl-C is the prompt's (the run is not
    cancelled), SIGTERM also reaches the run's token; the run's handlers come back afterwards."""
    r, w = os.pipe()
    out = _Shown()
    cancel = CancelToken()
    with os.fdopen(r) as stdin, cancel.installed():
        handler = signal.getsignal(signal.SIGINT)
        t = Terminal(stdin=stdin, stdout=out)

        main = threading.main_thread()
        assert main.ident is not None and main.native_id is not None
        stat = f"/proc/self/task/{main.native_id}/stat"

        def fire() -> None:
            assert out.prompted.wait(10)
            # Wait until the main thread sleeps in its read: a signal that lands between the
            # prompt's write and the read() call is only seen when read() returns.
            deadline = time.monotonic() + 10
            while Path(stat).read_text().split(") ", 1)[1][0] != "S":
                assert time.monotonic() < deadline
                time.sleep(0.001)
            # Aim at the main thread, as the kernel does once every vtcode thread blocks the
            # signal (vtcode.threads); a plain kill() could land on this helper thread instead.
            signal.pthread_kill(main.ident, sig)

        threading.Thread(target=fire, daemon=True).start()
        line = t.read("answer: ")
        assert line.key is key
        assert cancel.cancelled is run_cancelled
        assert signal.getsignal(signal.SIGINT) == handler
    os.close(w)
