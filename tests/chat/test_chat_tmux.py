"""`vtcode chat` end to end in a real terminal (tmux), on the replay provider.

Each test starts the real CLI in a private tmux server (`-x 120 -y 40`), types with `send-keys`
and reads the screen with `capture-pane`, waiting on what the program shows (its prompt, a
line) or writes (events in the canonical log, a file a command creates) with a bounded poll,
never a fixed sleep. Afterwards the canonical log must validate (`vtcode validate` and the
published schema through `fast_validator`) and match a reviewed syrupy snapshot (ids, times,
hashes and paths normalised).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ScriptedReply, SSEServer
from tests.exec_support import SCRIPTS, canonical_lines, normalise, vtcode

SESSION = "chat-session"
HASH = re.compile(r"\b[0-9a-f]{64}\b")
SEGMENT = re.compile(r"\bseg-(\d{3})-[0-9a-f]{12}\b")
TIMEOUT = 60.0


def wait_until(what: str, check: Callable[[], Any], timeout: float = TIMEOUT) -> Any:
    """Poll `check` until it returns something truthy; fail with `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


class Chat:
    """One `vtcode chat` process in its own tmux server."""

    def __init__(
        self, tmux: str, ws: Path, args: list[str], env: dict[str, str], name: str
    ) -> None:
        self.tmux = tmux
        self.ws = ws
        self.sock = ws.parent / f"{name}.tmux"
        self.rc_file = ws.parent / f"{name}.rc"
        self.prompts: dict[str, int] = {}  # prompt -> how many were answered
        # the user's home (config, trust, chat history) lies outside the workspace, as it would
        self.home = ws.parent / f"{ws.name}.home"
        full = {
            "NO_COLOR": "1",
            "VTCODE_HOME": str(self.home),
            "VTCODE_TOKENIZER": "bytes",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", str(ws)),
            **env,
        }
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in full.items())
        cmd = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "vtcode", *args])
        script = f"cd {shlex.quote(str(ws))} && env {exports} {cmd}; echo $? > {self.rc_file}"
        self._tmux("new-session", "-d", "-x", "120", "-y", "40", "-s", "chat", script)
        self._tmux("set-option", "-t", "chat", "remain-on-exit", "on")

    def _tmux(self, *args: str) -> str:
        proc = subprocess.run(
            [self.tmux, "-S", str(self.sock), *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        return proc.stdout

    def close(self) -> None:
        self._tmux("kill-server")

    # ------------------------------------------------------------------ screen

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-J", "-t", "chat", "-S", "-", "-E", "-")

    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen().splitlines()]

    def wait_text(self, text: str, timeout: float = TIMEOUT) -> None:
        wait_until(f"{text!r} on screen:\n{self.screen()}", lambda: text in self.screen(), timeout)

    def wait_prompt(self, prompt: str = ">") -> None:
        """Wait for the next bare prompt (`>`, `plan>`, a question) at the end of the screen."""

        seen = self.prompts.get(prompt, 0)

        def ready() -> bool:
            shown = [ln for ln in self.lines() if ln.strip()]
            count = sum(1 for ln in shown if ln == prompt or ln.startswith(prompt + " "))
            return count > seen and bool(shown) and shown[-1] == prompt

        wait_until(f"prompt {prompt!r} #{seen + 1}:\n{self.screen()}", ready)
        self.prompts[prompt] = seen + 1

    # ------------------------------------------------------------------ keys

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", "chat", "-l", text)
        self._tmux("send-keys", "-t", "chat", "Enter")

    def key(self, name: str) -> None:
        self._tmux("send-keys", "-t", "chat", name)

    def say(self, text: str, prompt: str = ">") -> None:
        """At the next prompt, type `text` and Enter."""
        self.wait_prompt(prompt)
        self.type(text)

    # ------------------------------------------------------------------ results

    def events(self) -> list[dict[str, Any]]:
        path = self.ws / ".vtcode" / "sessions" / SESSION / "events.jsonl"
        if not path.exists():
            return []
        out = []
        for line in path.read_text().splitlines():
            try:
                out.append(json.loads(line)["event"])
            except ValueError:
                break  # a line being written
        return out

    def wait_event(self, etype: str, count: int = 1) -> None:
        wait_until(
            f"{count} x {etype}:\n{self.screen()}",
            lambda: sum(e["type"] == etype for e in self.events()) >= count,
        )

    def exit_code(self) -> int:
        wait_until(
            f"vtcode to exit:\n{self.screen()}",
            lambda: self.rc_file.exists() and self.rc_file.read_text().strip(),
        )
        return int(self.rc_file.read_text())


@pytest.fixture
def chat(tmp_path: Path, debian_tool: Callable[[str, str], str]) -> Iterator[Callable[..., Chat]]:
    """Start `vtcode chat` sessions in tmux (installed with apt-get when missing)."""
    tmux = debian_tool("tmux", "tmux")
    started: list[Chat] = []

    def start(
        script: str | None,
        *args: str,
        glob: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        ws: Path | None = None,
    ) -> Chat:
        """`vtcode GLOB chat --session-id S --script SCRIPT ARGS` (script None: bare `vtcode`)
        in a fresh workspace, or in `ws` (after an earlier session there)."""
        if ws is None:
            ws = tmp_path / f"ws{len(started)}"
            ws.mkdir()
            (ws / "notes.txt").write_text("hi\n")
        cmd = [*glob]
        if script is not None:
            cmd += ["chat", "--session-id", SESSION, "--script", str(SCRIPTS / f"{script}.toml")]
        c = Chat(tmux, ws, [*cmd, *args], env or {}, name=f"chat{len(started)}")
        started.append(c)
        return c

    try:
        yield start
    finally:
        for c in started:
            c.close()


def checked_snapshot(ws: Path) -> list[dict[str, Any]]:
    """The canonical log: valid for `vtcode validate` and the schema, then normalised."""
    log = ws / ".vtcode" / "sessions" / SESSION / "events.jsonl"
    proc = vtcode(["validate", "--json", str(log)], ws)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = canonical_lines(ws, SESSION)  # each line against versioned-thread-event
    text = json.dumps([normalise(e["event"], ws) for e in lines])
    text = SEGMENT.sub(r"seg-\1-<hash>", HASH.sub("<sha256>", text))
    return list(json.loads(text))


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def turn_ends(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] in ("turn.completed", "turn.failed")]


# ---------------------------------------------------------------------------------------------


def test_two_turns_then_ctrl_d(chat: Callable[..., Chat], snapshot_json: Any) -> None:
    c = chat("chat-two-turns")
    c.say("hello there")
    c.wait_text("Hello! I can read, run and change things")
    c.say("please list the files")
    c.wait_text("There is one file, notes.txt.")
    c.wait_prompt()
    c.key("C-d")
    assert c.exit_code() == 0
    events = checked_snapshot(c.ws)
    assert types(events).count("turn.started") == 2  # one pair per USER turn
    assert [e["type"] for e in turn_ends(events)] == ["turn.completed", "turn.completed"]
    assert turn_ends(events)[1]["usage"]["input_tokens"] == 2100  # both requests of turn 2
    done = events[-1]
    assert (done["outcome_code"], done["subtype"]) == ("completed", "success")
    assert done["num_turns"] == 3 and done["result"] == "There is one file, notes.txt."
    assert "[outcome] success (completed)" in c.screen()
    assert events == snapshot_json


def test_compact_at_the_prompt(chat: Callable[..., Chat], snapshot_json: Any) -> None:
    c = chat("chat-compact")
    c.say("remember the answer")
    c.wait_text("Noted: the answer is 42.")
    c.say("/compact")
    c.wait_text("] manual/local: ")  # [compact], or [context] when nothing older was dropped
    c.say("what was it?")
    c.wait_text("The answer was 42.")
    c.say("/exit")
    assert c.exit_code() == 0
    events = checked_snapshot(c.ws)
    (boundary,) = [e for e in events if e["type"] == "thread.compact_boundary"]
    assert boundary["trigger"] == "manual"
    (raw,) = [e for e in c.events() if e["type"] == "thread.compact_boundary"]
    assert (c.ws / raw["history_artifact_path"]).is_file()
    at = events.index(boundary)
    assert events[at - 1]["type"] == "turn.completed"  # at the prompt, between the turns
    assert events[at + 1]["type"] == "turn.started"
    assert events == snapshot_json


def test_ctrl_c_cancels_the_turn_not_the_session(
    chat: Callable[..., Chat], snapshot_json: Any
) -> None:
    c = chat("chat-cancel")
    c.say("sleep for a while")
    wait_until("the command to start", lambda: (c.ws / "started.flag").exists())
    c.key("C-c")
    c.wait_text("[turn failed] turn cancelled")
    (output,) = [e["item"] for e in c.events() if e.get("item", {}).get("type") == "tool_output"]
    pid = json.loads(output["output"])["process_id"]
    with pytest.raises(ProcessLookupError):  # Ctrl-C stopped the command, like a shell's job
        os.kill(pid, 0)
    c.say("try again")
    c.wait_text("Understood, no more sleeping.")
    c.say("/exit")
    assert c.exit_code() == 0
    events = checked_snapshot(c.ws)
    ends = turn_ends(events)
    assert ends[0] == {
        "type": "turn.failed",
        "message": "turn cancelled",
        "usage": ends[0]["usage"],
    }
    assert ends[1]["type"] == "turn.completed"
    assert (events[-1]["outcome_code"], events[-1]["subtype"]) == ("completed", "success")
    warnings = [e["item"]["message"] for e in events if e.get("item", {}).get("type") == "error"]
    assert any(w.startswith("Ctrl-C stopped run-1") for w in warnings)
    assert events == snapshot_json


def test_ctrl_c_twice_at_the_prompt_exits(chat: Callable[..., Chat]) -> None:
    c = chat("chat-two-turns")
    c.say("hello")
    c.wait_text("[turn done]")
    c.wait_prompt()
    c.key("C-c")
    c.wait_text("Ctrl-C again leaves the session")
    c.wait_prompt()
    c.key("C-c")
    assert c.exit_code() == 130
    events = checked_snapshot(c.ws)
    assert (events[-1]["outcome_code"], events[-1]["subtype"]) == ("exit", "cancelled")
    assert types(events).count("turn.started") == 1


@pytest.mark.parametrize("answers", [("y", "n")], ids=["yes-then-no"])
def test_permission_prompt(
    chat: Callable[..., Chat], snapshot_json: Any, answers: tuple[str, str]
) -> None:
    c = chat("chat-permission", glob=("-c", 'permissions.ask=["exec_command(echo *)"]'))
    c.say("greet me")
    c.say(answers[0], prompt="Allow exec_command echo approved-run? [y]es / [n]o / [a]lways:")
    c.wait_text("It printed approved-run.")
    c.say("once more please")
    c.say(answers[1], prompt="Allow exec_command echo denied-run? [y]es / [n]o / [a]lways:")
    c.wait_text("You declined, so I did not run it.")
    c.say("/exit")
    assert c.exit_code() == 0
    events = checked_snapshot(c.ws)
    asked = [e for e in events if e["type"].startswith("permission.")]
    assert [(e["type"], e.get("decision")) for e in asked] == [
        ("permission.requested", None),
        ("permission.resolved", "allow"),
        ("permission.requested", None),
        ("permission.resolved", "deny"),
    ]
    assert all(e["tool_name"] == "exec_command" for e in asked)
    waits = [e["wait_ms"] for e in c.events() if e["type"] == "permission.resolved"]
    assert len(waits) == 2 and all(isinstance(w, int) and w >= 0 for w in waits)
    outcomes = [
        e["item"]["outcome"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "tool_invocation"
    ]
    assert outcomes == ["success", "permission_rejected"]
    assert events == snapshot_json


def _plan(c: Chat, request: str = "add a line to notes.txt", *, armed: bool = False) -> None:
    if armed:  # `/plan` alone: the next message is planned
        c.say("/plan")
        c.say(request, prompt="plan>")
    else:
        c.say(f"/plan {request}")
    c.wait_text("Plan ready. What now?")


@pytest.mark.parametrize("choice", ["execute", "fresh", "revise", "cancel"])
def test_plan_approval(chat: Callable[..., Chat], snapshot_json: Any, choice: str) -> None:
    c = chat(f"chat-plan-{choice}")
    _plan(c, armed=choice == "revise")
    c.say({"execute": "1", "fresh": "2", "revise": "3", "cancel": "4"}[choice], "choice [1-4]:")
    if choice == "execute":
        c.wait_text("Done: notes.txt has the planned line.")
    elif choice == "fresh":
        c.wait_text("Implemented: plan.txt exists.")
    elif choice == "revise":
        c.say("smaller steps please", prompt="what should change?")
        c.wait_text(" 2 Run the tests")  # the revised plan, as rich renders a numbered list
        c.say("4", "choice [1-4]:")
        c.wait_text("plan cancelled")
    else:
        c.wait_text("plan cancelled")
        c.say("now just say hi")
        c.wait_text("Hi.")
    c.say("/exit")
    assert c.exit_code() == 0
    events = checked_snapshot(c.ws)
    decisions = [e["decision"] for e in events if e["type"] == "plan.approval.resolved"]
    expected = {
        "execute": ["execute"],
        "fresh": ["fresh_context"],
        "revise": ["revise", "cancel"],
        "cancel": ["cancel"],
    }[choice]
    assert decisions == expected
    requested = [e for e in events if e["type"] == "plan.approval.requested"]
    assert len(requested) == len(expected)
    for r in requested:
        assert (c.ws / r["plan_file"]).read_text().startswith("1. ")
    _assert_plans_streamed(events, [r["turn_id"] for r in requested])
    resets = [e for e in events if e["type"] == "context.reset"]
    if choice == "fresh":
        (reset,) = resets
        assert reset["trigger"] == "plan_approval" and reset["plan_preserved"] is True
        assert reset["tool_budget_reset"] is True
        assert (c.ws / "plan.txt").read_text() == "done\n"
    else:
        assert resets == []
    if choice == "execute":
        assert "planned line" in (c.ws / "notes.txt").read_text()
    if choice == "cancel":  # read-only tools while planning, every tool afterwards
        outcomes = [
            e["item"]["outcome"]
            for e in events
            if e["type"] == "item.completed" and e["item"]["type"] == "tool_invocation"
        ]
        assert outcomes == ["invalid_tool", "success"]
        assert not (c.ws / "build.txt").exists() and (c.ws / "hi.txt").exists()
    assert events == snapshot_json


def _assert_plans_streamed(events: list[dict[str, Any]], turn_ids: list[str]) -> None:
    """Each proposal streamed as upstream does: the plan item starts empty, its `plan.delta`
    events (same thread, the proposal's turn) concatenate to exactly the completed text, and the
    completion ends the item, inside the turn it belongs to."""
    completed = [
        e["item"] for e in events if e["type"] == "item.completed" and e["item"]["type"] == "plan"
    ]
    assert len(completed) == len(turn_ids)
    for item, turn_id in zip(completed, turn_ids, strict=True):
        item_id = item["id"]
        mine = [
            e
            for e in events
            if e.get("item", {}).get("id") == item_id or e.get("item_id") == item_id
        ]
        kinds = [e["type"] for e in mine]
        assert kinds[0] == "item.started" and mine[0]["item"]["text"] == ""
        assert kinds[-1] == "item.completed" and set(kinds[1:-1]) == {"plan.delta"}
        deltas = mine[1:-1]
        assert "".join(d["delta"] for d in deltas) == item["text"]
        assert {(d["thread_id"], d["turn_id"]) for d in deltas} == {("chat-session", turn_id)}
        start, end = events.index(mine[0]), events.index(mine[-1])
        assert not any(e["type"].startswith("turn.") for e in events[start:end])


def test_model_switch_without_compaction(chat: Callable[..., Chat]) -> None:
    """`compact_on_model_switch = false`: no boundary, the next request opens a new segment."""
    c = chat("chat-model-switch", glob=("-c", "agent.harness.compact_on_model_switch=false"))
    c.say("first question")
    c.wait_text("First answer.")
    c.say("/model replay-2")
    c.wait_text("model replay-2 (a new request segment starts)")
    c.say("second question")
    c.wait_text("Second answer")
    c.say("/status")
    c.wait_text("model     replay-2 (replay)")
    assert re.findall(r"segment   (seg-\d{3})-", c.screen()) == ["seg-002"]
    c.say("/exit")
    assert c.exit_code() == 0
    events = checked_snapshot(c.ws)
    assert not [e for e in events if e["type"] == "thread.compact_boundary"]


def test_effort_and_model_start_new_segments(chat: Callable[..., Chat], snapshot_json: Any) -> None:
    c = chat("chat-model-switch", "--effort", "low")
    c.say("first question")
    c.wait_text("First answer.")
    c.say("/status")
    c.wait_text("effort low  mode chat")
    c.say("/effort high")
    c.wait_text("reasoning effort high")
    c.say("second question")
    c.wait_text("Second answer, with more effort.")
    c.say("/status")
    c.wait_text("mode chat+effort=high")
    segments = re.findall(r"segment   (seg-\d{3})-", c.screen())
    assert segments == ["seg-001", "seg-002"], c.screen()  # the effort change started one
    c.say("/model replay-2")
    c.wait_text("] model_switch/")  # [compact], or [context] when nothing older was dropped
    c.say("third question")
    c.wait_text("Third answer, from the new model.")
    c.say("/status")
    c.wait_text("model     replay-2 (replay)  effort high")
    c.say("/exit")
    assert c.exit_code() == 0
    events = checked_snapshot(c.ws)
    (boundary,) = [e for e in events if e["type"] == "thread.compact_boundary"]
    assert boundary["trigger"] == "model_switch"
    assert boundary["previous_segment_id"] != boundary["new_segment_id"]
    assert events == snapshot_json


def test_prompt_argument_is_the_first_turn(chat: Callable[..., Chat]) -> None:
    c = chat("chat-two-turns", "hello", "from", "argv")
    c.wait_text("> hello from argv")
    c.wait_text("Hello! I can read, run and change things")
    c.say("/exit")
    assert c.exit_code() == 0
    events = checked_snapshot(c.ws)
    assert types(events)[:2] == ["thread.started", "turn.started"]
    assert [e["type"] for e in turn_ends(events)] == ["turn.completed"]


def test_vtcode_without_a_command_on_a_tty_runs_chat(chat: Callable[..., Chat]) -> None:
    c = chat(None, env={"VTCODE_PROVIDER": "replay"})  # no default provider (issue 26.1)
    c.wait_text("vtcode chat: session")
    c.say("/help")
    c.wait_text("/plan [TEXT]")
    c.say("/exit")
    assert c.exit_code() == 0


def test_effort_reaches_an_openai_compatible_server(
    chat: Callable[..., Chat], sse_server: SSEServer
) -> None:
    """`--effort` then `/effort` over the real wire: each request carries the current level."""
    sse_server.queue(
        ScriptedReply.sse_file("openai_text.sse"), ScriptedReply.sse_file("openai_text.sse")
    )
    c = chat(
        None,
        "chat",
        "--session-id",
        SESSION,
        "--provider",
        "openai",
        "--model",
        "gpt-4o-mini",
        "--effort",
        "low",
        env={"OPENAI_BASE_URL": f"{sse_server.url}/v1", "OPENAI_API_KEY": "sk-test"},
    )
    c.say("first")
    c.wait_event("turn.completed")
    c.say("/effort high")
    c.wait_text("reasoning effort high")
    c.say("second")
    c.wait_event("turn.completed", 2)
    c.say("/exit")
    assert c.exit_code() == 0
    bodies = [r.json() for r in sse_server.requests]
    assert [b.get("reasoning_effort") for b in bodies] == ["low", "high"]
    assert [b["model"] for b in bodies] == ["gpt-4o-mini", "gpt-4o-mini"]
    checked_snapshot(c.ws)


def test_steer_queues_a_follow_up_turn(chat: Callable[..., Chat], snapshot_json: Any) -> None:
    c = chat("chat-steer")
    c.say("/steer also check the docs")
    c.wait_text("queued follow-up")
    c.say("start please")
    c.wait_text("Docs checked too.")
    c.say("/exit")
    assert c.exit_code() == 0
    events = checked_snapshot(c.ws)
    assert [e["type"] for e in turn_ends(events)] == ["turn.completed", "turn.completed"]
    queue = json.loads((c.ws / ".vtcode/sessions" / SESSION / "steering/queue.json").read_text())
    assert queue["pending"] == [] and len(queue["applied_intent_ids"]) == 1
    assert events == snapshot_json


def test_new_then_resume(chat: Callable[..., Chat]) -> None:
    c = chat("chat-two-turns")
    c.say("hello")
    c.wait_text("[turn done]")
    c.say("/new")
    c.wait_text("[outcome] success (new_session)")
    c.wait_text("vtcode chat: session ")  # the next session's banner
    c.say("hello again")  # the replay script starts over with the new session
    c.wait_text("[turn done]")
    c.say("/exit")
    assert c.exit_code() == 0
    first = checked_snapshot(c.ws)
    assert (first[-1]["outcome_code"], first[-1]["subtype"]) == ("new_session", "success")
    sessions = sorted(p.name for p in (c.ws / ".vtcode" / "sessions").iterdir() if p.is_dir())
    assert SESSION in sessions and len([s for s in sessions if not s.startswith(".")]) == 2
    # the first session goes on in a later `chat --resume`: same log, a second run appended
    again = chat("chat-two-turns", "--resume", SESSION, ws=c.ws)
    again.say("hello, I am back")
    again.wait_text("[turn done]")
    again.key("C-d")
    assert again.exit_code() == 0
    events = checked_snapshot(c.ws)
    assert types(events).count("thread.started") == 2
    assert [e["outcome_code"] for e in events if e["type"] == "thread.completed"] == [
        "new_session",
        "completed",
    ]
