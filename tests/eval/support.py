"""Building small eval suites in a temp folder for the tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

CHECK_HELLO = """\
import pathlib, sys
text = pathlib.Path("hello.txt").read_text() if pathlib.Path("hello.txt").exists() else ""
sys.exit(0 if text.strip() == "hello" else 1)
"""


def write_task(
    suite: Path,
    task_id: str,
    toml: str,
    files: dict[str, str] | None = None,
) -> Path:
    """`suite/task_id/task.toml` with `toml` (dedented) and the other files given."""
    folder = suite / task_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "task.toml").write_text(textwrap.dedent(toml).lstrip(), encoding="utf-8")
    for name, text in (files or {}).items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def hello_task(suite: Path, task_id: str = "make-hello", **extra: str) -> Path:
    """A task solved by writing `hello` into hello.txt; its reference does exactly that."""
    lines = "\n".join(f"{k} = {v}" for k, v in extra.items())
    return write_task(
        suite,
        task_id,
        f"""
        id = "{task_id}"
        prompt = "Write hello into hello.txt"
        tags = ["easy", "create"]
        check = ["python3", "check.py"]
        protect = ["keep.txt"]
        {lines}
        [setup]
        files = {{ "keep.txt" = "do not touch\\n" }}
        """,
        {"check.py": CHECK_HELLO, "reference/hello.txt": "hello\n"},
    )


WRITE_HELLO = """
[provider]
model = "replay-1"
pricing = { input_per_mtok = 3.0, output_per_mtok = 15.0 }
[[turn]]
text = "Writing it."
usage = { input_tokens = 1000, output_tokens = 20 }
[[turn.tool_calls]]
name = "exec_command"
arguments = { command = "COMMAND" }
[[turn]]
text = "Done."
usage = { input_tokens = 1100, output_tokens = 5 }
"""


def replay_task(
    suite: Path,
    task_id: str,
    script: str,
    *,
    extra: str = "",
    command: str = "echo hello > hello.txt",
) -> Path:
    """A hello task whose model is the replay `script` (WRITE_HELLO runs `command`)."""
    folder = hello_task(suite, task_id)
    (folder / "replay.toml").write_text(script.replace("COMMAND", command), encoding="utf-8")
    toml = (folder / "task.toml").read_text(encoding="utf-8")
    head, setup = toml.split("[setup]", 1)
    (folder / "task.toml").write_text(
        f'{head}script = "replay.toml"\n{extra}\n[setup]{setup}', encoding="utf-8"
    )
    return folder


_TEXT_TURN = """
[[turn]]
text = "I would write hello into hello.txt."
usage = { input_tokens = 900, output_tokens = 9 }
"""
# Twice: vtcode may nudge an answer that only announces work once.
TEXT_ONLY = _TEXT_TURN * 2

_CALL_TURN = """
[[turn]]
text = '''
```json
{"name": "write_hello", "arguments": {"path": "hello.txt"}}
```'''
usage = { input_tokens = 900, output_tokens = 19 }
"""
# Twice: vtcode answers the first with one corrective nudge.
CALL_AS_TEXT = _CALL_TURN * 2

PROVIDER_FAILS = """
[[turn]]
fail = "fatal"
message = "401 unauthorized (injected)"
"""

SLOW = """
[[turn]]
delay_ms = 60000
text = "too late"
"""

BAD_SCRIPT = """
[[turn]]
txet = "a typo: the replay loader refuses this script (vtcode exits 2)"
"""


def runner_suite(suite: Path) -> dict[str, str]:
    """One task per outcome; returns {task id: expected failure class ('' = passes)}."""
    replay_task(suite, "pass", WRITE_HELLO)
    replay_task(suite, "check-fails", WRITE_HELLO, command="echo goodbye > hello.txt")
    replay_task(suite, "no-tool", TEXT_ONLY)
    replay_task(suite, "call-as-text", CALL_AS_TEXT)
    replay_task(suite, "provider-fails", PROVIDER_FAILS)
    replay_task(suite, "crash", BAD_SCRIPT)
    # 5 s: vtcode must have reached its run (signal handlers in) before the SIGTERM, which on a
    # loaded 2-core machine took over 2 s of imports and wiring; SIGTERM then closes the session.
    replay_task(suite, "timeout", SLOW, extra="timeout = 5")
    replay_task(suite, "turn-limit", WRITE_HELLO, extra="max_turns = 1",
                command="echo nothing")  # fmt: skip
    replay_task(suite, "protected", WRITE_HELLO,
                command="echo hello > hello.txt; echo changed > keep.txt")  # fmt: skip
    return {
        "pass": "",
        "check-fails": "check_failed",
        "no-tool": "no_tool_call",
        "call-as-text": "unparsable_tool_call",
        "provider-fails": "provider_error",
        "crash": "agent_crashed",
        "timeout": "limit",
        "turn-limit": "limit",
        "protected": "protected_changed",
    }
