"""How long one TAB takes: `vtcode` answering a completion request, next to its start-up floor.

Run: .venv/bin/python bench/completion.py [--quick]

Each figure is the median wall time of a fresh process (what the shell script spawns per TAB):
- python:    `python -c pass` (the interpreter alone)
- version:   `vtcode --version` (the lazy CLI's start-up)
- commands:  completing `vtcode sess<TAB>` (command names)
- sessions:  completing `vtcode sessions show <TAB>` in a workspace with N real sessions
             (written through the store), for N = 10 and 200
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vtcode.config.model import Durability, StoreConfig
from vtcode.events.enums import ThreadCompletionSubtype
from vtcode.events.types import (
    ThreadCompletedEvent,
    ThreadStartedEvent,
    TurnCompletedEvent,
    TurnStartedEvent,
    Usage,
)
from vtcode.store import DispatchGate, SessionWriter


def make_sessions(ws: Path, n: int) -> None:
    cfg = StoreConfig(durability=Durability.OS)
    for i in range(n):
        sid = f"session-{i:04d}"
        gate = DispatchGate(SessionWriter.create(ws, sid, cfg))
        for e in (
            ThreadStartedEvent(thread_id=sid),
            TurnStartedEvent(),
            TurnCompletedEvent(usage=Usage(input_tokens=10)),
            ThreadCompletedEvent(
                thread_id=sid,
                session_id=sid,
                subtype=ThreadCompletionSubtype.SUCCESS,
                outcome_code="success",
                usage=Usage(input_tokens=10),
                num_turns=1,
            ),
        ):
            gate.emit(e)
        gate.close()


def median_ms(argv: list[str], cwd: Path, env: dict[str, str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def complete_env(words: str, cword: int) -> dict[str, str]:
    return {
        **os.environ,
        "_VTCODE_COMPLETE": "bash_complete",
        "COMP_WORDS": words,
        "COMP_CWORD": str(cword),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="5 runs each instead of 15")
    runs = 5 if parser.parse_args().quick else 15
    vt = [sys.executable, "-m", "vtcode"]
    root = Path(tempfile.mkdtemp(prefix="bench-completion-"))
    try:
        rows: list[tuple[str, float]] = []
        env = dict(os.environ)
        rows.append(("python -c pass", median_ms([sys.executable, "-c", "pass"], root, env, runs)))
        rows.append(("vtcode --version", median_ms([*vt, "--version"], root, env, runs)))
        rows.append(("vtcode sess<TAB>", median_ms(vt, root, complete_env("vtcode sess", 1), runs)))
        for n in (10, 200):
            ws = root / f"ws{n}"
            ws.mkdir()
            make_sessions(ws, n)
            cmd = complete_env("vtcode sessions show ", 3)
            rows.append((f"sessions show <TAB>, {n} sessions", median_ms(vt, ws, cmd, runs)))
        floor = rows[1][1]
        for name, ms in rows:
            print(f"{name:<34} {ms:8.1f} ms   x{ms / floor:5.2f} of vtcode --version")
    finally:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
