"""Every `list --json` prints an object with a named array, and `loop status` tells the truth.

A bare top-level array cannot grow a field later without breaking every `jq '.[]'`; an object
with a named array can (`sessions list --json` was `{"sessions": [...]}`, `loop list --json` was
a bare array). The walk over the command tree makes a new list command join this test.

`loop status`/`loop list` said `running` for a loop nobody ran: the stored LoopStatus `running`
means "resumable". The lock (a flock, held only while a process runs the loop) decides.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import click

from tests.exec_support import SCRIPTS, end_run_and_its_job, spawn_vtcode, vtcode, wait_for_path
from vtcode.cli.main import cli

# command path -> the name of its array
NAMED_ARRAYS = {
    ("agent", "list"): "subagents",
    ("decisions", "list"): "decisions",
    ("hooks", "list"): "hooks",
    ("loop", "list"): "loops",
    ("notes", "list"): "notes",
    ("schema", "list"): "schemas",
    ("sessions", "list"): "sessions",
    ("skills", "list"): "skills",
    ("worktree", "list"): "worktrees",
}


def _list_commands() -> set[tuple[str, ...]]:
    """Every command called `list` that has a `--json` option."""
    found: set[tuple[str, ...]] = set()

    def walk(cmd: click.Command, path: tuple[str, ...], ctx: click.Context) -> None:
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None:
                    walk(sub, (*path, name), click.Context(sub, parent=ctx, info_name=name))
        elif path[-1] == "list" and any("--json" in p.opts for p in cmd.params):
            found.add(path)

    # cli's own context settings, as a real run: click caches a command's help option
    walk(cli, (), click.Context(cli, info_name="vtcode", **cli.context_settings))
    return found


def test_the_walk_knows_every_list_command() -> None:
    assert _list_commands() == set(NAMED_ARRAYS)


def test_every_list_json_is_an_object_with_a_named_array(tmp_path: Path) -> None:
    ws = tmp_path
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    script = str(SCRIPTS / "loop-step.toml")
    assert vtcode(["-q", "loop", "run", "--id", "L", "--script", script, "p"], ws).returncode == 0
    assert vtcode(["-q", "notes", "add", "a note"], ws).returncode == 0
    assert vtcode(["-q", "decisions", "add", "a decision"], ws).returncode == 0
    for path, key in sorted(NAMED_ARRAYS.items()):
        proc = vtcode([*path, "--json"], ws)
        assert proc.returncode == 0, (path, proc.stderr)
        doc = json.loads(proc.stdout)
        assert isinstance(doc, dict), f"{' '.join(path)} --json is not an object"
        assert isinstance(doc.get(key), list), f"{' '.join(path)} --json has no {key!r} array"
    # the ones with data really list it under that name
    assert [
        x["loop_id"] for x in json.loads(vtcode(["loop", "list", "--json"], ws).stdout)["loops"]
    ] == ["L"]
    assert [
        x["text"] for x in json.loads(vtcode(["notes", "list", "--json"], ws).stdout)["notes"]
    ] == ["a note"]
    assert len(json.loads(vtcode(["sessions", "list", "--json"], ws).stdout)["sessions"]) == 1


HOLDER = """
import sys
from pathlib import Path
from vtcode.orient.loop_state import loop_lock
with loop_lock(Path(sys.argv[1]), "L"):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_loop_status_is_idle_when_nothing_runs_and_running_while_held(tmp_path: Path) -> None:
    script = str(SCRIPTS / "loop-step.toml")
    assert (
        vtcode(["-q", "loop", "run", "--id", "L", "--script", script, "p"], tmp_path).returncode
        == 0
    )
    stored = json.loads((tmp_path / ".vtcode/state/loop-L.json").read_text())["status"]
    assert stored == "running"  # the contract's "resumable"
    status = vtcode(["loop", "status", "L"], tmp_path)
    assert status.returncode == 0
    assert "status:     idle (resumable: stored status running)" in status.stdout
    assert "running now" not in status.stdout
    assert vtcode(["loop", "list"], tmp_path).stdout.split("\t")[:2] == ["L", "idle"]
    doc = json.loads(vtcode(["loop", "status", "--json"], tmp_path).stdout)
    assert (doc["status"], doc["activity"], doc["running_now"]) == ("running", "idle", False)

    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        assert "status:     running\n" in vtcode(["loop", "status", "L"], tmp_path).stdout
        assert vtcode(["loop", "list"], tmp_path).stdout.split("\t")[:2] == ["L", "running"]
        doc = json.loads(vtcode(["loop", "status", "--json"], tmp_path).stdout)
        assert (doc["activity"], doc["running_now"]) == ("running", True)
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    # the holder is gone: the kernel released its lock
    assert "status:     idle" in vtcode(["loop", "status", "L"], tmp_path).stdout


def test_a_killed_step_shows_interrupted_then_running_while_it_runs(tmp_path: Path) -> None:
    """While a step runs, `running`; after SIGKILL (no process, step recorded as started and
    never ended), `interrupted`: never `running`."""
    proc = spawn_vtcode(
        ["-q", "loop", "run", "--id", "L", "--script", "loop-slow-step", "long work"], tmp_path
    )
    job = tmp_path / "job.pid"
    try:
        wait_for_path(job, proc, "the step's command")
        assert vtcode(["loop", "list"], tmp_path).stdout.split("\t")[:2] == ["L", "running"]
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        end_run_and_its_job(proc, job)
    assert vtcode(["loop", "list"], tmp_path).stdout.split("\t")[:2] == ["L", "interrupted"]
    doc = json.loads(vtcode(["loop", "status", "--json", "L"], tmp_path).stdout)
    assert (doc["status"], doc["activity"], doc["running_now"]) == ("running", "interrupted", False)
