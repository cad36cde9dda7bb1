"""Issue 23.4/23.5 through the real CLI: `vtcode exec` with a user allow rule `exec_command(git
*)` runs plain git and refuses, headless, git told to run another program (the tool failure names
the part and why); with a deny rule on rm, bash's line-continuation trick is denied. A scripted
model makes the calls; the files prove nothing ran.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from tests.exec_support import SESSION, normalise, raw_events, vtcode

CALLS = [
    "git status --short",
    "git -c core.fsmonitor='touch pwned' status",
    "GIT_PAGER='touch pwned' git -p log",
    "git config core.hooksPath /tmp/hooks",
    "git log --output=../outside.txt",
]


def _script(calls: list[str]) -> str:
    turns = []
    for n, command in enumerate(calls):
        turns.append(
            f"[[turn]]\nusage = {{ input_tokens = 100, output_tokens = 10 }}\n"
            f'text = "step {n}"\n[[turn.tool_calls]]\nname = "exec_command"\n'
            f"arguments = {{ command = {_toml(command)}, yield_time_ms = 30000 }}\n"
        )
    turns.append('[[turn]]\nusage = { input_tokens = 100, output_tokens = 10 }\ntext = "done"\n')
    return "\n".join(turns)


def _toml(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _run(tmp_path: Path, rules: str, calls: list[str]) -> list[dict[str, Any]]:
    home = tmp_path / ".home"
    home.mkdir()
    (home / "config.toml").write_text(f"[permissions]\n{rules}\n")
    script = tmp_path / "model.toml"
    script.write_text(_script(calls))
    proc = vtcode(
        ["exec", "--json", "--session-id", SESSION, "--script", str(script), "go"], tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return raw_events(proc.stdout)  # each line validated against schemas/thread-event


def _outputs(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [
        (e["item"]["status"], e["item"]["output"])
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "tool_output"
    ]


def test_allow_git_runs_git_and_refuses_what_git_would_run(
    tmp_path: Path, snapshot_json: Any
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    events = _run(ws, 'allow = ["exec_command(git *)"]', CALLS)
    outputs = _outputs(events)
    assert outputs[0][0] == "completed", outputs[0]
    refused = "permission denied for exec_command: exec_command call is not covered by the "
    refused += "allow rules 'exec_command(git *)'; "
    whys = [
        "`git -c core.fsmonitor` may name a program git runs",
        "setting `GIT_PAGER` can make a later command run a program",
        "`git config core.hookspath` may name a program git runs",
        f"writes {tmp_path / 'outside.txt'} outside the workspace",
    ]
    for (status, output), why in zip(outputs[1:], whys, strict=True):
        assert status == "failed"
        assert output.startswith(refused), output
        assert why in output
        assert output.endswith("nobody can approve in headless mode")
    assert not (ws / "pwned").exists()
    assert not (tmp_path / "outside.txt").exists()
    config = subprocess.run(
        ["git", "-C", str(ws), "config", "--get", "core.hooksPath"], capture_output=True
    )
    assert config.returncode == 1  # never set
    assert [normalise(e, tmp_path) for e in events] == snapshot_json


def test_deny_rm_denies_bash_line_continuation(tmp_path: Path) -> None:
    (tmp_path / "victim").write_text("x")
    calls = [
        "r\\\nm -f victim",
        "printf -v 'a[$(rm -f victim)]' x",
        "hash -p /bin/rm ls; ls victim",
    ]
    events = _run(tmp_path, 'deny = ["exec_command(rm *)"]', calls)
    outputs = _outputs(events)
    assert outputs[0] == (
        "failed",
        "permission denied for exec_command: denied by rule 'exec_command(rm *)'",
    )
    assert "an array subscript bash evaluates" in outputs[1][1]
    assert "`hash -p` makes a command name run another program" in outputs[2][1]
    assert all(status == "failed" for status, _ in outputs)
    assert (tmp_path / "victim").read_text() == "x"
