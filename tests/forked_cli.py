"""`vtcode ARGS` as a real child process, forked from the test process instead of exec'd.

Most of a CLI test's time went to a fresh interpreter importing vtcode again (0.5-1.5 s a run,
thousands of runs). A forked child starts with vtcode already imported and is otherwise what
`python -m vtcode` is: its own pid, a child of the test, its own stdin/stdout/stderr (the pipes
`subprocess` made), cwd and environment, signals delivered to it and its exit status read by
`waitpid`. So `ForkedVtcode` is a `subprocess.Popen` whose `_execute_child` forks and runs
`vtcode.cli.entry.main` where Popen would exec; `communicate`, `wait`, `send_signal`, `kill`
and timeouts are Popen's own.

In the child, what a fresh interpreter would not have is undone first: every descriptor above 2
is closed (the test's servers and pipes), signal handlers and warning filters go back to
Python's start-up state, logging loses the test's handlers, atexit forgets the test's exit
functions, and `sys.std*` are rebuilt over fds 0-2 as Python's start-up builds them. The exit
follows Python's own order: non-daemon threads joined, atexit functions run, streams flushed.

Where a real exec is the point (a tty, start-up itself, a process tree seen from outside, the
interpreter's own flags), a test uses `python -m vtcode`; `VTCODE_TEST_EXEC=1` makes every run
a real exec, to compare.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import io
import logging
import os
import pkgutil
import signal
import subprocess
import sys
import threading
import traceback
import warnings
import weakref
from collections.abc import Callable, Sequence
from typing import Any

# Python's own warning filters and signal dispositions before pytest or a test changed them.
_START_FILTERS = list(warnings.filters)
_SIGNALS = [s for s in signal.valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP)]
_START_HANDLERS = {s: signal.getsignal(s) for s in _SIGNALS}
_MAXFD = os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 65536


def real_exec() -> bool:
    """Every run a real `python -m vtcode` (`VTCODE_TEST_EXEC=1`)."""
    return os.environ.get("VTCODE_TEST_EXEC") == "1"


def command(args: Sequence[str]) -> list[str]:
    """The argv a real exec would run (also what a forked run reports as `args`)."""
    return [sys.executable, "-m", "vtcode", *args]


def preload() -> None:
    """Import every vtcode module once, in the test process, so a child never does.

    A run imports much of vtcode lazily (the hooks, the tool registry and jsonschema, a
    provider, the sandbox): importing only the command line left each forked `exec` about
    150 ms of imports, most of a replay run's time. An optional extra that is not installed
    is skipped; its run imports it (and fails) as a real one would.
    """
    import vtcode

    for module in pkgutil.walk_packages(vtcode.__path__, "vtcode."):
        if module.name.endswith(".__main__"):
            continue  # runs the command line
        with contextlib.suppress(ImportError):
            importlib.import_module(module.name)
    for name in _LAZY_DEPENDENCIES:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


# Libraries vtcode imports inside functions, on nearly every run (found by listing what a forked
# `exec` child imported after the loop above: about 40 modules, 50 ms).
_LAZY_DEPENDENCIES = ("jsonschema", "jsonschema_rs", "rfc3339_validator", "pprint")


def popen(args: Sequence[str], *, real: bool | None = None, **kwargs: Any) -> subprocess.Popen[Any]:
    """`subprocess.Popen(python -m vtcode ARGS, **kwargs)`, forked unless `real` (by default
    `real_exec()`)."""
    cls = subprocess.Popen if (real_exec() if real is None else real) else ForkedVtcode
    return cls(command(args), **kwargs)


def run(
    args: Sequence[str],
    *,
    input: str | bytes | None = None,
    timeout: float | None = None,
    real: bool | None = None,
    **kwargs: Any,
) -> subprocess.CompletedProcess[Any]:
    """`subprocess.run(python -m vtcode ARGS, capture_output=True, ...)`, forked unless
    `real_exec()`: stdin is closed unless `input` is given, a timeout kills the run."""
    stdin = subprocess.PIPE if input is not None else subprocess.DEVNULL
    pipes = {"stdin": stdin, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    with popen(args, real=real, **pipes, **kwargs) as proc:
        try:
            out, err = proc.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


class ForkedVtcode(subprocess.Popen[Any]):
    """`subprocess.Popen([python, -m, vtcode, *args], ...)`, forked (see the module doc)."""

    def _execute_child(
        self,
        args: list[str],
        executable: object,
        preexec_fn: object,
        close_fds: bool,
        pass_fds: Sequence[int],
        cwd: str | os.PathLike[str] | None,
        env: dict[str, str] | None,
        startupinfo: object,
        creationflags: int,
        shell: bool,
        p2cread: int,
        p2cwrite: int,
        c2pread: int,
        c2pwrite: int,
        errread: int,
        errwrite: int,
        restore_signals: bool,
        gid: object,
        gids: object,
        uid: object,
        umask: int,
        start_new_session: bool,
        *_rest: object,
    ) -> None:
        if preexec_fn is not None or uid is not None or gid is not None or gids is not None:
            raise ValueError("a forked vtcode run takes no preexec_fn or user: use real=True")
        argv = list(args)[3:]  # after python -m vtcode
        keep = tuple(sorted(int(fd) for fd in pass_fds))
        environ = dict(os.environ if env is None else env)
        for stream in (sys.stdout, sys.stderr):  # nothing buffered here is written twice
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        pid = os.fork()
        if pid == 0:
            if start_new_session:
                os.setsid()
            _child(argv, cwd, environ, (p2cread, c2pwrite, errwrite), keep)  # never returns
        self.pid = pid
        self._child_created = True
        self._close_pipe_fds(p2cread, p2cwrite, c2pread, c2pwrite, errread, errwrite)  # type: ignore[attr-defined]


def _child(
    argv: list[str],
    cwd: str | os.PathLike[str] | None,
    environ: dict[str, str],
    fds: tuple[int, int, int],
    keep: tuple[int, ...],
) -> None:
    code = 1
    try:
        code = _run_as_fresh_interpreter(argv, cwd, environ, fds, keep)
    except BaseException:
        try:
            traceback.print_exc()
            sys.stderr.flush()
        except BaseException:
            pass
    os._exit(code)


def _run_as_fresh_interpreter(
    argv: list[str],
    cwd: str | os.PathLike[str] | None,
    environ: dict[str, str],
    fds: tuple[int, int, int],
    keep: tuple[int, ...],
) -> int:
    for target, fd in enumerate(fds):
        if fd != -1 and fd != target:
            os.dup2(fd, target)
    low = 3
    for fd in (*keep, _MAXFD):
        os.closerange(low, fd)
        low = fd + 1
    for fd in keep:
        os.set_inheritable(fd, True)
    _forget_cached_state()
    for sig, disposition in _START_HANDLERS.items():
        with contextlib.suppress(OSError, ValueError, TypeError):
            signal.signal(sig, disposition if disposition is not None else signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    if cwd is not None:
        os.chdir(cwd)
    os.environ.clear()
    os.environ.update(environ)
    warnings.filters[:] = _START_FILTERS  # type: ignore[index]
    warnings._filters_mutated()  # type: ignore[attr-defined]
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.setLevel(logging.WARNING)
    atexit._clear()
    _fresh_std_streams()
    sys.argv = ["vtcode", *argv]
    code = _exit_code_of_main(argv)
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    return _flushed(code)


def _forget_cached_state() -> None:
    """vtcode's per-process caches (a sandbox probe, `which env`, a workspace's realpath) as a
    fresh interpreter has them: empty. An in-process test may have filled them in this process
    with another environment."""
    for name, module in list(sys.modules.items()):
        if name != "vtcode" and not name.startswith("vtcode."):
            continue
        for value in list(vars(module).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear) and getattr(value, "__module__", None) == name:
                clear()
    for name, attr, fresh in RESETS:
        if name in sys.modules:
            owner = sys.modules[name]
            assert hasattr(owner, attr), f"{name}.{attr} is gone: update tests/forked_cli.py"
            setattr(owner, attr, fresh())


# Per-process registries an in-process test may have filled (a lock object filelock refuses to
# use across a fork, a live command another test started), and their guards, which a thread of
# this process may have held at the fork: a forked run gets them as a fresh interpreter has them.
RESETS: list[tuple[str, str, Callable[[], object]]] = [
    ("vtcode.redact", "_remembered", frozenset),
    ("vtcode.context.tokens", "_DEFAULT", lambda: None),
    ("vtcode.store.locks", "_REGISTRY", dict),
    ("vtcode.store.locks", "_REGISTRY_GUARD", threading.Lock),
    ("vtcode.orient.progress", "_MONITORS", dict),
    ("vtcode.orient.progress", "_MONITORS_GUARD", threading.Lock),
    ("vtcode.eval.proc", "_live", set),
    ("vtcode.eval.proc", "_live_lock", threading.Lock),
    ("vtcode.tools.exec_sessions", "_LIVE_MANAGERS", weakref.WeakSet),
]
# Module-level containers that only cache what is derived from code (a dataclass's fields): a
# forked run may keep them.
DERIVED_CACHES = {
    ("vtcode.jsontypes", "_FIELDS_CACHE"),
    ("vtcode.jsontypes", "_ENCODER_CACHE"),
    ("vtcode.redact", "_FIELDS"),
    ("vtcode.events.describe", "_missing"),  # checked once at import, always empty
}


def _fresh_std_streams() -> None:
    """fds 0-2 as Python's start-up wraps them: UTF-8 here (the tests' locale), stderr with
    backslashreplace, line-buffered on a tty, stdout block-buffered otherwise."""
    encoding = os.environ.get("PYTHONIOENCODING", "utf-8").split(":")[0] or "utf-8"

    def wrap(fd: int, mode: str, errors: str) -> io.TextIOWrapper | None:
        try:
            os.fstat(fd)
        except OSError:
            return None
        tty = os.isatty(fd)
        raw = io.FileIO(fd, mode, closefd=False)
        buffered = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
        line = tty or (fd == 2)  # Python 3.9+: stderr is line-buffered even off a tty
        return io.TextIOWrapper(buffered, encoding, errors, line_buffering=line)

    sys.stdin = sys.__stdin__ = wrap(0, "r", "strict")  # type: ignore[misc]
    sys.stdout = sys.__stdout__ = wrap(1, "w", "strict")  # type: ignore[misc]
    sys.stderr = sys.__stderr__ = wrap(2, "w", "backslashreplace")  # type: ignore[misc]


def _exit_code_of_main(argv: list[str]) -> int:
    from vtcode.cli.entry import main

    try:
        main(argv)
    except SystemExit as e:
        return _system_exit_code(e.code)
    except KeyboardInterrupt:
        traceback.print_exc()
        sys.stderr.flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        return 130


def _system_exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _flushed(code: int) -> int:
    """Python's exit flushes stdout, then stderr; a failed stdout flush is exit 120."""
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue
        try:
            stream.flush()
        except (OSError, ValueError):
            if stream is sys.stdout:
                code = 120
    return code
