"""Per-user-turn cost of `vtcode chat`, end to end in process, against `exec` in the same run.

`chat` runs `run_chat` with a real `Terminal` over text streams (the typed lines are a StringIO,
the screen another), so everything but the TTY is the real thing: replay provider, runner in
interactive mode, dispatch gate, canonical store with its fsyncs, transcript, context and orient
parts, and the renderer. Each user turn is one streamed answer. It prints ms per user turn for
sessions of N user turns and the ratio of the last window of turns to the first (flat = 1).

The baseline is `exec` over the same number of model requests (tool rounds of a tiny
`read_file`, one turn pair each, as exec emits them), measured in the same process: the cost of
one model request + events + a turn boundary without a user in the loop.

Growth with session length comes from the replay provider's per-request capacity estimate (it
sums the bytes of the whole history each request, so O(history)); profile with cProfile to see it.

Run: .venv/bin/python bench/chat.py [--turns 200,1000] [--durability turn]
"""

from __future__ import annotations

import argparse
import io
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("VTCODE_TOKENIZER", "bytes")

from vtcode.config.load import load_config
from vtcode.interactive.run import ChatRequest, run_chat
from vtcode.interactive.terminal import Terminal
from vtcode.runtime.exec_run import ExecRequest, run_exec
from vtcode.runtime.hooks import default_hooks_factory


class _Stamped(io.StringIO):
    """The screen: records when each prompt was shown (a user turn ends at the next prompt)."""

    def __init__(self) -> None:
        super().__init__()
        self.prompts: list[float] = []

    def write(self, s: str) -> int:
        if s == "> ":
            self.prompts.append(time.perf_counter())
        return super().write(s)


def _script(path: Path, n: int, *, tools: bool) -> None:
    parts = ['[provider]\nmodel = "replay-1"\n']
    for i in range(n):
        if tools:  # a different file each round, so it is no repetition
            parts.append(
                "[[turn]]\nusage = { input_tokens = 100, output_tokens = 5 }\n"
                f'[[turn.tool_calls]]\nname = "read_file"\narguments = {{ path = "f{i}.txt" }}\n'
            )
        else:
            parts.append(
                '[[turn]]\ntext = "ok, noted."\nusage = { input_tokens = 100, output_tokens = 5 }\n'
            )
    if tools:
        parts.append('[[turn]]\ntext = "done"\n')
    path.write_text("\n".join(parts))


def _config(ws: Path, durability: str) -> object:
    return load_config(
        workspace=ws,
        config_file=None,
        overrides=[
            f'store.durability="{durability}"',
            "agent.max_conversation_turns=1000000",
            "automation.full_auto.max_turns=1000000",
            "tools.max_tool_loops=0",
            "agent.harness.auto_compaction_enabled=false",
        ],
    ).config


def chat_session(n: int, durability: str) -> tuple[float, list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        (ws / "notes.txt").write_text("hi\n")
        script = ws / "s.toml"
        _script(script, n, tools=False)
        screen = _Stamped()
        lines = "".join(f"message {i}\n" for i in range(n)) + "/exit\n"
        term = Terminal(stdin=io.StringIO(lines), stdout=screen)
        started = time.perf_counter()
        result = run_chat(
            ChatRequest(
                workspace=ws,
                config=_config(ws, durability),
                terminal=term,  # type: ignore[arg-type]
                script=str(script),
                session_id="bench",
            )
        )
        total = time.perf_counter() - started
        assert int(result.exit_code) == 0, result
        stamps = screen.prompts
        turns = [b - a for a, b in itertools.pairwise(stamps)]
        assert len(turns) == n, (len(turns), n)
        return total, turns


def exec_rounds(n: int, durability: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        for i in range(n):
            (ws / f"f{i}.txt").write_text(f"file {i}\n")
        script = ws / "s.toml"
        _script(script, n, tools=True)
        started = time.perf_counter()
        result = run_exec(
            ExecRequest(
                workspace=ws,
                config=_config(ws, durability),
                prompt="go",  # type: ignore[arg-type]
                script=str(script),
                session_id="bench",
                hooks_factory=default_hooks_factory,
                max_turns=n + 5,
            )
        )
        total = time.perf_counter() - started
        assert int(result.exit_code) == 0, result
        return total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", default="200,1000")
    ap.add_argument("--durability", default="turn", choices=["event", "turn", "os"])
    a = ap.parse_args()
    print(f"store.durability = {a.durability}; python {sys.version.split()[0]}")
    for n in (int(x) for x in a.turns.split(",")):
        total, turns = chat_session(n, a.durability)
        per = sum(turns) / len(turns) * 1000
        w = max(1, len(turns) // 10)
        first, last = sum(turns[:w]) / w, sum(turns[-w:]) / w
        base = exec_rounds(n, a.durability) / (n + 1) * 1000
        print(
            f"chat {n:>5} user turns: {per:7.3f} ms/turn (session {total:6.2f} s), "
            f"last/first tenth {last / first:4.2f}; exec {n + 1} requests: {base:7.3f} ms/request; "
            f"chat/exec {per / base:4.2f}"
        )


if __name__ == "__main__":
    main()
