"""Cost the exec_command sandbox adds per command, against a bare `bash -c true` in this run.

Run: .venv/bin/python bench/sandbox.py [--calls 200]

Each shape starts `bash -c true` CALLS times with `subprocess.run` and waits for it, in this
process, interleaved round by round so machine noise hits every shape alike:

- bare: `bash -c true`, no preexec (the baseline);
- pdeathsig: the unsandboxed fallback (`setpriv --pdeathsig KILL`, or a preexec without it);
- previous: the launcher before issue 23/30 (`setpriv --pdeathsig` + `unshare --pid --fork
  --kill-child --net` exec'd by vfork from a Landlock-restricted thread: no mount namespace, no
  fresh /proc, capabilities kept, no socket filter), rebuilt here for the ratio;
- pid-ns: the launcher with `network = true` in danger-full-access (PID, mount namespaces and
  a fresh /proc only);
- workspace-write: the default (keeper + init, PID/mount/network namespaces, fresh /proc,
  read-only policy paths, no capabilities, Landlock, the unix-socket filter and its broker);
- workspace-write+net: Landlock + PID namespace, network allowed;
- session: a whole `ExecSessionManager` command (pipes, pump and reaper threads), default
  sandbox, against the same through the unsandboxed path.

Prints the mean and median per command, the added milliseconds against the baseline, and the
default's cost as a ratio of the previous launcher's.
"""

from __future__ import annotations

import argparse
import os
import queue
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from vtcode.config.model import SandboxConfig, SandboxMode
from vtcode.sandbox import FORCE_UNAVAILABLE_ENV, Sandbox, landlock
from vtcode.tools.exec_sessions import ExecSessionManager


def _launcher(sandbox: Sandbox, ws: Path) -> Callable[[], None]:
    launch = sandbox.launch(ws)
    argv = [*launch.prefix, "bash", "-c", "true"]

    def run() -> None:
        proc = launch.spawn(
            lambda: subprocess.Popen(argv, preexec_fn=launch.preexec, start_new_session=True)
        )
        assert proc.wait() == 0

    return run


def _previous(ws: Path) -> Callable[[], None]:
    """The launcher before issue 23/30, for the ratio (see the module docstring)."""
    ruleset = landlock.build_ruleset(
        landlock.abi_version(), readable=[Path("/")], writable=[ws, Path(tempfile.gettempdir())]
    )
    jobs: queue.SimpleQueue[tuple[Callable[[], None], threading.Event]] = queue.SimpleQueue()

    def thread() -> None:
        landlock.restrict_self(ruleset.fd)
        while True:
            fn, done = jobs.get()
            fn()
            done.set()

    threading.Thread(target=thread, daemon=True).start()
    init = 'exec 3<&0; "$@" <&3 3<&- & wait $!'
    argv = ["setpriv", "--pdeathsig", "KILL", "--", "unshare", "--pid", "--fork",
            "--kill-child", "--net", "--", "/bin/sh", "-c", init, "vtcode-init",
            "bash", "-c", "true"]  # fmt: skip

    def run() -> None:
        done = threading.Event()
        jobs.put((lambda: _check(subprocess.Popen(argv, start_new_session=True)), done))
        done.wait()

    return run


def _check(proc: subprocess.Popen[bytes]) -> None:
    assert proc.wait() == 0


def _session(manager: ExecSessionManager, ws: Path) -> Callable[[], None]:
    never = threading.Event()

    def run() -> None:
        s = manager.start(
            argv=["bash", "-c", "true"],
            display="true",
            cwd=ws,
            workspace=ws,
            spool_dir=ws / ".vtcode" / "context" / "tool_outputs",
        )
        s.block(time.monotonic() + 30, never, drain_grace=1.0)
        assert s.exit_code == 0

    return run


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    ws = Path(tempfile.mkdtemp(prefix="vtcode-bench-sandbox-"))
    default = Sandbox(SandboxConfig())
    if not default.available:
        raise SystemExit(f"no sandbox here: {default.state.reason}")
    shapes: dict[str, Callable[[], None]] = {
        "bare": lambda: subprocess.run(["bash", "-c", "true"], check=True),
    }
    os.environ[FORCE_UNAVAILABLE_ENV] = "1"
    fallback = Sandbox(SandboxConfig())
    unsandboxed_manager = ExecSessionManager()
    unsandboxed_manager.sandbox  # noqa: B018 - probed now, while the variable is set
    del os.environ[FORCE_UNAVAILABLE_ENV]
    shapes["pdeathsig"] = _launcher(fallback, ws)
    shapes["previous"] = _previous(ws)
    pid_only = SandboxConfig(mode=SandboxMode.DANGER_FULL_ACCESS, network=True)
    shapes["pid-ns"] = _launcher(Sandbox(pid_only), ws)
    shapes["workspace-write"] = _launcher(default, ws)
    shapes["workspace-write+net"] = _launcher(Sandbox(SandboxConfig(network=True)), ws)
    shapes["session unsandboxed"] = _session(unsandboxed_manager, ws)
    shapes["session sandboxed"] = _session(ExecSessionManager(), ws)
    times: dict[str, list[float]] = {name: [] for name in shapes}
    for fn in shapes.values():
        fn()  # warm up
    for _ in range(args.calls):
        for name, fn in shapes.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    base = statistics.mean(times["bare"])
    base_sessions = statistics.mean(times["session unsandboxed"])
    print(f"{args.calls} commands per shape, interleaved; CPU count {os.cpu_count()}")
    print(f"{'shape':<22}{'mean ms':>10}{'median ms':>11}{'added ms':>10}")
    for name, samples in times.items():
        mean = statistics.mean(samples)
        ref = base_sessions if name.startswith("session") else base
        print(
            f"{name:<22}{mean * 1e3:>10.2f}{statistics.median(samples) * 1e3:>11.2f}"
            f"{(mean - ref) * 1e3:>10.2f}"
        )
    print("(sessions are compared with the unsandboxed session, the rest with bare)")
    prev, now = (statistics.mean(times[n]) - base for n in ("previous", "workspace-write"))
    print(f"default sandbox vs previous launcher: added {now * 1e3:.2f} ms vs {prev * 1e3:.2f} ms")
    ratio = statistics.mean(times["workspace-write"]) / statistics.mean(times["previous"])
    print(f"whole command, default / previous: {ratio:.2f}x")


if __name__ == "__main__":
    main()
