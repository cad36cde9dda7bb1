"""Write-ahead dispatch through the real CLI: stdout never shows an event the log does not have.

`vtcode exec --json` runs a replay script of many tool round trips; the parent reads stdout
line by line and SIGKILLs the process after a random number of lines, then reads whatever
stdout still held (a consumer reading the pipe would see it too). Every event line stdout showed
must be in events.jsonl, in the same order at the same position (raw event JSON compared), in
`event` durability (fsynced first) and `turn` durability (written first). Before issue 11, 12
of 74 kills showed up to 22 events the log never got. bench/crash_cli.py runs >= 200 kills.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import forked_cli
from vtcode.schemas import fast_validator

REPO = Path(__file__).resolve().parents[2]
SESSION = "wa-session"
TURNS = 40
ARGS = ["exec", "--json", "--session-id", SESSION]


def many_events_script(turns: int = TURNS) -> str:
    """A replay script of `turns` list_files round trips, then an answer (~8 events a turn)."""
    parts = ['[provider]\nmodel = "replay-1"\n']
    for i in range(turns):
        parts.append(
            f'[[turn]]\ntext = "Step {i}: listing."\n'
            "usage = { input_tokens = 100, output_tokens = 10 }\n"
            '[[turn.tool_calls]]\nname = "list_files"\n'
            f'arguments = {{ path = ".", max_entries = {i + 1} }}\n'
        )
    parts.append('[[turn]]\ntext = "Done."\nusage = { input_tokens = 100, output_tokens = 5 }\n')
    return "\n".join(parts)


def logged_events(workspace: Path) -> list[dict[str, Any]]:
    """The complete lines of the session log (a torn last line is not an event yet)."""
    path = workspace / ".vtcode" / "sessions" / SESSION / "events.jsonl"
    if not path.exists():
        return []
    data = path.read_bytes()
    complete = data[: data.rfind(b"\n") + 1]
    validator = fast_validator("versioned-thread-event")
    out = []
    for line in complete.splitlines():
        env = json.loads(line)
        assert validator.is_valid(env), line
        out.append(env["event"])
    return out


@dataclass
class KillReport:
    kills: int = 0
    shown: int = 0
    shown_but_missing: int = 0
    worst: str = ""


def _run_and_kill(workspace: Path, script: Path, durability: str, after: int) -> list[str]:
    """Start exec --json, read `after` lines, SIGKILL it; return every line stdout held."""
    env = {**os.environ, "NO_COLOR": "1", "VTCODE_HOME": str(workspace / ".home")}
    args = [*ARGS, "-c", f"store.durability={durability}", "--script", str(script), "go"]
    proc = forked_cli.popen(
        args,
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    try:
        while len(lines) < after:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line.decode())
        proc.send_signal(signal.SIGKILL)
        rest = proc.stdout.read()  # what the pipe still held was shown as well
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    lines += [ln + "\n" for ln in rest.decode().splitlines()]
    return [ln for ln in lines if ln.endswith("\n")]


def kill_loop(root: Path, kills: int, durability: str, seed: int) -> KillReport:
    """`kills` runs killed after a random number of stdout lines; count shown-but-missing."""
    rng = random.Random(seed)
    script = root / "many.toml"
    script.write_text(many_events_script())
    report = KillReport()
    for n in range(kills):
        ws = root / f"ws{n}"
        ws.mkdir()
        shown = _run_and_kill(ws, script, durability, rng.randint(1, TURNS * 8))
        logged = logged_events(ws)
        events = [json.loads(ln) for ln in shown]
        report.kills += 1
        report.shown += len(events)
        # stdout is a prefix of the log: same events, same order, same bytes once decoded
        missing = [e for i, e in enumerate(events) if i >= len(logged) or logged[i] != e]
        if missing:
            report.shown_but_missing += 1
            report.worst = report.worst or f"run {n}: {len(missing)} shown, not logged"
    return report


KILLS_IN_SUITE = 20


@pytest.mark.parametrize("durability", ["event", "turn"])
def test_sigkill_never_shows_an_event_the_log_lacks(tmp_path: Path, durability: str) -> None:
    # 20 kills keep the suite short; the code before write-ahead failed 22-24 of 30, so a
    # regression cannot slip through. bench/crash_cli.py runs the 200-kill version.
    report = kill_loop(tmp_path, KILLS_IN_SUITE, durability, seed=11)
    assert report.kills == KILLS_IN_SUITE
    assert report.shown > KILLS_IN_SUITE  # the kills really landed mid-run, after events showed
    assert report.shown_but_missing == 0, report.worst


def test_a_completed_run_shows_exactly_the_log(tmp_path: Path) -> None:
    """Unkilled, stdout and the log hold the same events (the control for the loop above)."""
    script = tmp_path / "many.toml"
    script.write_text(many_events_script(5))
    env = {**os.environ, "NO_COLOR": "1", "VTCODE_HOME": str(tmp_path / ".home")}
    proc = forked_cli.run(
        [*ARGS, "--script", str(script), "go"], cwd=tmp_path, env=env, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    shown = [json.loads(ln) for ln in proc.stdout.splitlines()]
    assert shown == logged_events(tmp_path)
    assert shown[-1]["type"] == "thread.completed"
