"""The forked vtcode runs most CLI tests use (tests/forked_cli.py) answer as real execs do.

Each command runs twice, as `python -m vtcode` and forked from this process after this process
has itself dirtied what a fork inherits (a cached sandbox probe, a remembered secret, NO_COLOR
unset here, a warning filter that turns warnings into errors): exit code, stdout and stderr
must be the same.
"""

from __future__ import annotations

import os
import subprocess
import warnings
from pathlib import Path

import pytest

from tests import forked_cli
from tests.exec_support import SCRIPTS, SESSION

CASES: dict[str, list[str]] = {
    "version": ["--version"],
    "usage error": ["exec", "--no-such-flag"],
    "unknown command": ["frobnicate"],
    "config error": ["-c", "agent.max_turns=banana", "exec", "--script", "x", "hi"],
    "exec": [
        "exec",
        "--json",
        "--session-id",
        SESSION,
        "--script",
        str(SCRIPTS / "scenario-success.toml"),
        "hi",
    ],
    "validate a missing file": ["validate", "no-such.jsonl"],
    "stdin prompt": ["exec", "--session-id", "s2", "--script", "x", "-"],
}


def _both(args: list[str], tmp_path: Path) -> tuple[subprocess.CompletedProcess[bytes], ...]:
    results = []
    for kind in ("real", "forked"):
        ws = tmp_path / kind
        ws.mkdir()
        env = {**os.environ, "NO_COLOR": "1", "VTCODE_HOME": str(ws / ".home")}
        run = forked_cli.run(
            args, cwd=ws, env=env, input=b"from stdin", timeout=120, real=kind == "real"
        )
        results.append(run)
    return tuple(results)


def _same_text(out: bytes, tmp_path: Path, kind: str) -> str:
    return out.decode().replace(str(tmp_path / kind), "<ws>")


@pytest.mark.parametrize("name", list(CASES))
def test_a_forked_run_answers_as_a_real_exec(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vtcode.redact import remember_secrets

    remember_secrets([{"API_TOKEN": "Aa1-this-test-secret"}])  # this process only
    monkeypatch.delenv("NO_COLOR", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        real, forked = _both(CASES[name], tmp_path)
    assert forked.returncode == real.returncode, forked.stderr
    assert _same_text(forked.stdout, tmp_path, "forked") == _same_text(
        real.stdout, tmp_path, "real"
    )
    assert _same_text(forked.stderr, tmp_path, "forked") == _same_text(
        real.stderr, tmp_path, "real"
    )


def test_a_forked_run_is_a_child_that_signals_reach(tmp_path: Path) -> None:
    """SIGKILL ends it where it stands, as it would a real process: the parent reads -9."""
    proc = forked_cli.popen(
        ["exec", "--session-id", SESSION, "--script", "x", "-"],
        cwd=tmp_path,
        env={**os.environ, "VTCODE_HOME": str(tmp_path / ".home")},
        stdin=subprocess.PIPE,  # held open: vtcode waits for its prompt
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        real=False,
    )
    assert isinstance(proc, forked_cli.ForkedVtcode)
    assert Path(f"/proc/{proc.pid}").exists() and proc.pid != os.getpid()
    proc.kill()
    proc.communicate(timeout=60)
    assert proc.returncode == -9


def test_every_module_level_registry_is_reset_in_a_fork_or_known_to_be_derived() -> None:
    """A module that grows per-process state (an empty dict, set or lock at import) would hand
    a forked run the test process's: it must be in forked_cli.RESETS or DERIVED_CACHES. The
    heuristic is the import-time shape (constant tables are not empty)."""
    import importlib
    import pkgutil
    import sys
    import threading
    import weakref

    import vtcode

    for info in pkgutil.walk_packages(vtcode.__path__, "vtcode."):
        importlib.import_module(info.name)
    containers = (dict, set, list, weakref.WeakSet, weakref.WeakValueDictionary)
    locks = (type(threading.Lock()), type(threading.RLock()))
    found = set()
    for name, module in list(sys.modules.items()):
        if name != "vtcode" and not name.startswith("vtcode."):
            continue
        for attr, value in vars(module).items():
            registry = isinstance(value, containers) and not value
            if not attr.startswith("__") and (registry or isinstance(value, locks)):
                found.add((name, attr))
    known = {(name, attr) for name, attr, _ in forked_cli.RESETS} | forked_cli.DERIVED_CACHES
    assert found - known == set()
    for name, attr, _ in forked_cli.RESETS:  # (filled by an earlier test, it is not "found")
        assert hasattr(sys.modules[name], attr), (name, attr)
