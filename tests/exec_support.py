"""Helpers for end-to-end `vtcode exec` tests: run it for real, read and normalise its events."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from tests import forked_cli
from vtcode.schemas import fast_validator

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "fixtures" / "scripts"
VOLATILE_KEYS = {"wall_time", "waited_seconds", "process_id", "duration_ms", "wait_ms"}
RUNNING_KEYS = {
    "output",
    "total_output_bytes",
    "output_truncated",
    "spool_path",
    "spool_complete",
    "output_spooled",
    "truncated",
    "spool_pending",
}
SESSION = "test-session"
STAMP = re.compile(r"\d{8}T\d{6}Z")


def _env(cwd: Path, extra: dict[str, str] | None) -> dict[str, str]:
    return {**os.environ, "NO_COLOR": "1", "VTCODE_HOME": str(cwd / ".home"), **(extra or {})}


def spawn_vtcode(
    args: list[str], cwd: Path, *, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    """Start `vtcode ARGS` in the background (stdout/stderr piped, stdin closed)."""
    return forked_cli.popen(
        args,
        cwd=cwd,
        env=_env(cwd, env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_path(path: Path, proc: subprocess.Popen[str], what: str, timeout: float = 60) -> None:
    """Wait (bounded) for a file a running command creates to say it has really started."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else "exited early"
        assert time.monotonic() < deadline, f"{what} never started"
        time.sleep(0.01)


def process_running(pid: int) -> bool:
    """True while `pid` exists and is not a zombie (exited, waiting to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def end_run_and_its_job(proc: subprocess.Popen[str], job: Path) -> None:
    """Clean-up after a run a test killed midway: the vtcode process, if it still runs, then the
    command it had started (its pid in `job`), which a SIGKILL of vtcode leaves orphaned."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    with contextlib.suppress(ProcessLookupError, ValueError, FileNotFoundError):
        os.kill(int(job.read_text()), signal.SIGKILL)


def vtcode(
    args: list[str],
    cwd: Path,
    *,
    env: dict[str, str] | None = None,
    input: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    full = _env(cwd, env)
    return forked_cli.run(args, cwd=cwd, env=full, input=input, timeout=timeout, text=True)


def _normalise_output(text: str) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return re.sub(r"\d+\.\d+s", "<secs>", text)
    if isinstance(data, dict):
        for k in VOLATILE_KEYS & data.keys():
            data[k] = "<volatile>"
        if data.get("is_exited") is False:
            # What a still-running command has printed so far depends on timing.
            for k in RUNNING_KEYS & data.keys():
                data[k] = "<running>"
        return json.dumps(data, sort_keys=True)
    return text


def _path_neutral_sizes(event: dict[str, Any], workspace: Path) -> dict[str, Any]:
    """A command's `total_output_bytes` as if the workspace path were `<workspace>`.

    Output that quotes the temp workspace (a traceback, say) is longer when the temp path is
    (another user, `pytest-9` becoming `pytest-10`); the count is corrected by the length
    difference of each occurrence, so the snapshot still checks the value.
    """
    item = event.get("item")
    if not (isinstance(item, dict) and item.get("type") == "tool_output"):
        return event
    try:
        data = json.loads(item.get("output", ""))
    except ValueError:
        return event
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("total_output_bytes"), int)
        or not isinstance(data.get("output"), str)
        or data.get("output_truncated")
    ):
        return event
    ws = str(workspace)
    hits = data["output"].count(ws)
    if not hits:
        return event
    data["total_output_bytes"] -= hits * (len(ws.encode()) - len(b"<workspace>"))
    return {**event, "item": {**item, "output": json.dumps(data)}}


def normalise(event: dict[str, Any], workspace: Path | None = None) -> dict[str, Any]:
    """Replace what legitimately differs run to run (times, pids, the temp workspace path and
    the sizes derived from it)."""
    if workspace is not None:
        event = _path_neutral_sizes(event, workspace)
    text = json.dumps(event)
    if workspace is not None:
        text = text.replace(str(workspace), "<workspace>")
    text = STAMP.sub("<stamp>", text)
    ev = json.loads(text)
    item = ev.get("item")
    if isinstance(item, dict) and item.get("type") == "tool_output":
        item["output"] = _normalise_output(item.get("output", ""))
        if '"is_exited": false' in item["output"] and "spool_path" in item:
            item["spool_path"] = "<running>"
    if isinstance(item, dict) and item.get("type") == "tool_invocation":
        args = item.get("arguments")
        if isinstance(args, str) and args.startswith("{"):
            item["arguments"] = args  # partial streamed JSON text stays as is
    for k in VOLATILE_KEYS & ev.keys():
        ev[k] = "<volatile>"
    return ev


def raw_events(stdout: str) -> list[dict[str, Any]]:
    validator = fast_validator("thread-event")
    out = []
    for line in stdout.splitlines():
        ev = json.loads(line)
        assert validator.is_valid(ev), line
        out.append(ev)
    return out


def canonical_lines(workspace: Path, session: str = SESSION) -> list[dict[str, Any]]:
    path = workspace / ".vtcode" / "sessions" / session / "events.jsonl"
    validator = fast_validator("versioned-thread-event")
    lines = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        env = json.loads(line)
        assert validator.is_valid(env), f"{path}:{n}: {line}"
        assert env["seq"] == n
        lines.append(env)
    return lines


def canonical_snapshot(workspace: Path, session: str = SESSION) -> list[dict[str, Any]]:
    return [
        {
            "schema_version": e["schema_version"],
            "seq": e["seq"],
            "event": normalise(e["event"], workspace),
        }
        for e in canonical_lines(workspace, session)
    ]
