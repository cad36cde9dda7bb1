"""Orient-layer costs, each next to a baseline measured in the same process (prints; never asserts).

    .venv/bin/python bench/bench_orient.py [--quick]

- `gather_orientation` + render on a populated workspace (artifacts, 50 sessions with ledgers,
  200 notes, a git repo) vs just reading the same files;
- loop-state save (lock held, atomic replace with fsync) vs a plain `write_bytes` of the bytes;
- loop-memory append (lock + tail check + one write + fsync) vs a bare `os.write` + fsync;
- `loop run` per-step overhead: a 3-step in-process loop vs 3 bare `run_exec` sessions.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from vtcode.config.model import VtcodeConfig
from vtcode.orient.context import gather_orientation
from vtcode.orient.loop_state import loop_lock, new_state, save_state
from vtcode.orient.memory import MemoryKind, append_entry
from vtcode.orient.models import CostBudget, ProgressLedger
from vtcode.orient.progress import save_progress


def _median(fn: Callable[[], object], n: int) -> float:
    samples = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def _populate(ws: Path) -> None:
    tasks = ws / ".vtcode/tasks"
    tasks.mkdir(parents=True)
    for name in ("spec", "contract", "sprint_contract", "evaluation", "feature_list"):
        (tasks / f"current_{name}.md").write_text(f"# {name}\n\n" + "line of text\n" * 200)
    for i in range(50):
        sid = f"s{i:03d}"
        (ws / ".vtcode/sessions" / sid).mkdir(parents=True)
        save_progress(
            ws, ProgressLedger(session_id=sid, goal="g", updated_at=f"2026-01-01T00:{i:02d}:00Z")
        )
    for i in range(200):
        append_entry(ws, MemoryKind.NOTES, f"note number {i} with some words in it")
    if shutil.which("git"):
        env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@e",
               "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@e"}  # fmt: skip
        subprocess.run(["git", "init", "-q"], cwd=ws, check=True, env=env)
        for i in range(10):
            (ws / "f").write_text(str(i))
            subprocess.run(["git", "add", "f"], cwd=ws, check=True, env=env)
            subprocess.run(["git", "commit", "-qm", f"c{i}"], cwd=ws, check=True, env=env)


def _read_all(ws: Path) -> None:
    for p in (ws / ".vtcode/tasks").iterdir():
        p.read_bytes()
    for p in (ws / ".vtcode/sessions").glob("*/derived/progress.json"):
        p.read_bytes()
    (ws / ".vtcode/state/notes.md").read_bytes()


def main() -> None:
    quick = "--quick" in sys.argv
    n = 5 if quick else 30
    root = Path(tempfile.mkdtemp(prefix="vtcode-bench-orient-"))
    try:
        ws = root / "ws"
        ws.mkdir()
        _populate(ws)
        t_orient = _median(lambda: gather_orientation(ws).to_prompt_section(), n)
        t_read = _median(lambda: _read_all(ws), n)
        section = gather_orientation(ws).to_prompt_section() or ""
        print(f"orientation: gather+render {t_orient * 1e3:.2f} ms "
              f"(reading the same files: {t_read * 1e3:.2f} ms, x{t_orient / t_read:.1f}; "
              f"section {len(section)} chars)")  # fmt: skip

        state = new_state("bench", prompt="p", budget=CostBudget())
        path = ws / ".vtcode/state/loop-bench.json"
        with loop_lock(ws, "bench"):
            s = save_state(ws, state)
            body = path.read_bytes()
            t_save = _median(lambda: save_state(ws, s), n)
        plain = ws / "plain.json"
        t_plain = _median(lambda: plain.write_bytes(body), n)
        print(f"loop state: atomic save {t_save * 1e3:.2f} ms "
              f"(plain write_bytes: {t_plain * 1e3:.3f} ms, x{t_save / t_plain:.0f})")  # fmt: skip

        t_append = _median(lambda: append_entry(ws, MemoryKind.DECISIONS, "a decision"), n)
        raw = ws / "raw.md"
        fd = os.open(raw, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

        def bare() -> None:
            os.write(fd, b"- [2026-01-01T00:00:00Z] a decision\n")
            os.fsync(fd)

        t_bare = _median(bare, n)
        os.close(fd)
        print(f"loop memory: append {t_append * 1e3:.2f} ms "
              f"(bare write+fsync: {t_bare * 1e3:.2f} ms, x{t_append / t_bare:.1f})")  # fmt: skip

        from vtcode.runtime.exec_run import ExecRequest, run_exec
        from vtcode.runtime.hooks import default_hooks_factory
        from vtcode.runtime.loop_runner import LoopRunRequest, run_loop

        cfg = VtcodeConfig()
        steps = 3
        warm = root / "warm"
        warm.mkdir()
        warm_req = ExecRequest(
            workspace=warm,
            config=cfg,
            prompt="step 1",
            script="loop-step",
            hooks_factory=default_hooks_factory,
            install_signals=False,
        )
        run_exec(warm_req)  # imports and caches: paid once, by neither measurement
        lw = root / "loop"
        lw.mkdir()
        t = time.perf_counter()
        run_loop(LoopRunRequest(workspace=lw, config=cfg, loop_id="b", prompt="p",
                                steps=steps, script="loop-step"))  # fmt: skip
        t_loop = (time.perf_counter() - t) / steps
        ew = root / "exec"
        ew.mkdir()
        t = time.perf_counter()
        for k in range(steps):
            run_exec(ExecRequest(workspace=ew, config=cfg, prompt=f"p\n\nstep {k + 1}",
                                 script="loop-step", hooks_factory=default_hooks_factory,
                                 install_signals=False))  # fmt: skip
        t_exec = (time.perf_counter() - t) / steps
        print(f"loop run: {t_loop * 1e3:.1f} ms per step "
              f"(bare run_exec with orientation: {t_exec * 1e3:.1f} ms, "
              f"overhead {(t_loop - t_exec) * 1e3:+.1f} ms)")  # fmt: skip
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
