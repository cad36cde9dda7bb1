"""Output options never write vtcode's own files, by any name (issue 23 item 7, issue 30 item 2),
and SIGTERM ends a stuck vtcode in bounded time (issue 30 item 1).

Every output option is pointed at a session's events.jsonl (and at the store and VTCODE_HOME)
through a hard link, a symlink planted in the workspace, the real path, a folder, and a FIFO
nobody reads: each is exit 2 naming the option and the path, the canonical log stays
byte-identical and still validates. Adding an option or a form is one line.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import forked_cli
from tests.exec_support import SESSION

TIMEOUT = 20
GRACE = 2  # VTCODE_CANCEL_GRACE_SECS for the stuck-hook test


def _env(root: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    return {**os.environ, "NO_COLOR": "1", "VTCODE_HOME": str(root / "home"), **(extra or {})}


def _cli(root: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    """A forked run (tests/forked_cli.py): the refusals under test are vtcode's path checks, not
    what exec sets up; the SIGTERM test below starts a real interpreter."""
    return forked_cli.run(
        ["-C", str(root / "ws"), *args],
        real=False,
        cwd=root,
        env=_env(root),
        timeout=TIMEOUT,
        text=True,
    )


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("outtargets")
    (root / "ws").mkdir()
    (root / "home").mkdir()
    run = _cli(root, ["exec", "--script", "default", "-q", "--session-id", SESSION, "hi"])
    assert run.returncode == 0, run.stderr
    (root / "home" / "trust.json").write_text("{}\n")
    return root


def _log(root: Path) -> Path:
    return root / "ws" / ".vtcode" / "sessions" / SESSION / "events.jsonl"


# option -> argv for a target (the option's own spelling is what the message must name)
OPTIONS: dict[str, Callable[[str], list[str]]] = {
    "-o": lambda t: ["exec", "--script", "default", "-q", "-o", t, "hi"],
    "--events": lambda t: ["exec", "--script", "default", "-q", "--events", t, "hi"],
    "--record": lambda t: ["exec", "--script", "default", "-q", "--record", t, "hi"],
    "--html": lambda t: ["sessions", "show", SESSION, "--html", t],
    "export -o": lambda t: ["sessions", "export", SESSION, "-o", t],
}


# form -> (make the target under `tmp` for the test root, and return its path)
def _hard_link(root: Path, tmp: Path) -> Path:
    os.link(_log(root), tmp / "answer.jsonl")
    return tmp / "answer.jsonl"


def _planted_symlink(root: Path, tmp: Path) -> Path:
    link = root / "ws" / "planted.jsonl"  # in the workspace, where a model could make it
    link.unlink(missing_ok=True)
    link.symlink_to(_log(root))
    return link


def _symlink_outside(root: Path, tmp: Path) -> Path:
    (tmp / "ln.jsonl").symlink_to(_log(root))
    return tmp / "ln.jsonl"


def _hard_link_home(root: Path, tmp: Path) -> Path:
    os.link(root / "home" / "trust.json", tmp / "t.json")
    return tmp / "t.json"


FORMS: dict[str, Callable[[Path, Path], Path]] = {
    "hard-link-to-log": _hard_link,
    "planted-symlink-to-log": _planted_symlink,
    "symlink-to-log": _symlink_outside,
    "hard-link-to-trust-store": _hard_link_home,
    "the-log-itself": lambda root, tmp: _log(root),
    "new-file-in-store": lambda root, tmp: root / "ws" / ".vtcode" / "sessions" / "x.jsonl",
    "trust-store-itself": lambda root, tmp: root / "home" / "trust.json",
}


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("option", list(OPTIONS))
def test_output_never_aliases_own_files(root: Path, tmp_path: Path, option: str, form: str) -> None:
    target = FORMS[form](root, tmp_path)
    before = _log(root).read_bytes()
    trust = (root / "home" / "trust.json").read_bytes()
    sessions = set((root / "ws" / ".vtcode" / "sessions").iterdir())
    run = _cli(root, OPTIONS[option](str(target)))
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr
    assert option.split()[-1] in run.stderr and target.name in run.stderr, run.stderr
    assert _log(root).read_bytes() == before
    assert (root / "home" / "trust.json").read_bytes() == trust
    assert set((root / "ws" / ".vtcode" / "sessions").iterdir()) == sessions  # nothing ran
    check = _cli(root, ["validate", str(_log(root))])
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize("option", ["-o", "--events", "--record", "export -o"])
def test_fifo_without_reader_is_refused_at_once(root: Path, tmp_path: Path, option: str) -> None:
    """`-o FIFO` used to block forever in open(2); now exit 2 without blocking."""
    fifo = tmp_path / "nobody-reads.fifo"
    os.mkfifo(fifo)
    before = _log(root).read_bytes()
    run = _cli(root, OPTIONS[option](str(fifo)))  # TimeoutExpired would fail the test
    assert run.returncode == 2, run.stderr
    assert "no process is reading" in run.stderr and fifo.name in run.stderr
    assert _log(root).read_bytes() == before


@pytest.mark.parametrize(
    "folder",
    [".vtcode", ".vtcode/sessions", f".vtcode/sessions/{SESSION}", "home-folder"],
)
def test_events_folder_in_the_store_is_refused(root: Path, folder: str) -> None:
    path = root / "home" if folder == "home-folder" else root / "ws" / folder
    entries = sorted(p.name for p in path.iterdir())
    run = _cli(root, OPTIONS["--events"](str(path)))
    assert run.returncode == 2, run.stderr
    assert "--events" in run.stderr and "Traceback" not in run.stderr
    assert sorted(p.name for p in path.iterdir()) == entries


def test_default_config_folder_is_vtcodes_own_without_vtcode_home(root: Path) -> None:
    """Without VTCODE_HOME the trust store lives in $XDG_CONFIG_HOME/vtcode: refused there too."""
    xdg = root / "xdg"
    (xdg / "vtcode").mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in _env(root).items() if k != "VTCODE_HOME"}
    env["XDG_CONFIG_HOME"] = str(xdg)
    target = xdg / "vtcode" / "trust.json"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "vtcode",
            "-C",
            str(root / "ws"),
            *OPTIONS["export -o"](str(target)),
        ],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert run.returncode == 2, run.stderr
    assert "vtcode's own files" in run.stderr and not target.exists()


def test_sigterm_ends_a_run_stuck_in_a_hook(root: Path, tmp_path: Path) -> None:
    """A session_start hook that sleeps 100 s (its timeout) holds the main thread where no
    cancel flag reaches; SIGTERM ends vtcode within the watchdog's grace (10 s by default, 2 s
    here so the test does not wait out the default), exit 130."""
    case = tmp_path / "case"
    (case / "ws").mkdir(parents=True)
    (case / "home").mkdir()
    pidfile = tmp_path / "hook.pid"
    (case / "home" / "config.toml").write_text(
        "[[hooks.lifecycle.session_start]]\n"
        f'hooks = [{{ argv = ["sh", "-c", "echo $$ > {pidfile}; exec sleep 100"], '
        "timeout_seconds = 100 }]\n"
    )
    argv = ["-C", str(case / "ws"), "exec", "--script", "default", "-q", "hi"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "vtcode", *argv],
        env=_env(case, {"VTCODE_CANCEL_GRACE_SECS": str(GRACE)}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + TIMEOUT
        while not (pidfile.exists() and pidfile.read_text().strip()):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the hook never started"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        start = time.monotonic()
        _, err = proc.communicate(timeout=TIMEOUT)
        took = time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if pidfile.exists() and pidfile.read_text().strip():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pidfile.read_text()), signal.SIGKILL)  # the hook's own process
    assert proc.returncode == 130, err
    assert GRACE <= took < GRACE + 5, took
    assert "after the cancel signal" in err and "Traceback" not in err
