"""No default provider: a run that chose none is refused before anything runs (issue 26).

A CI job that forgot its provider used to "succeed" on the replay provider's default script
(exit 0, outcome success, nothing done). Now `exec` and `loop run` exit 2 before any session or
loop step exists, naming the three ways to choose one; each of those ways, and `--script` (which
implies the replay provider), still runs.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import orjson
import pytest

from tests import forked_cli
from tests.exec_support import SCRIPTS


def _run(args: list[str], ws: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "VTCODE_PROVIDER"}
    full = {**base, "NO_COLOR": "1", "VTCODE_HOME": str(ws / ".home"), **env}
    return forked_cli.run(args, cwd=ws, env=full, text=True, timeout=120)


@pytest.mark.parametrize(
    "args",
    [
        ["exec", "Refactor the parser"],
        ["exec", "--json", "Refactor the parser"],
        ["loop", "run", "--id", "nightly", "--steps", "1", "Refactor the parser"],
    ],
    ids=["exec", "exec-json", "loop-run"],
)
def test_no_provider_is_exit_2_before_anything_exists(tmp_path: Path, args: list[str]) -> None:
    proc = _run(args, tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    err = proc.stderr
    assert "no provider chosen" in err
    for way in ("--provider", "VTCODE_PROVIDER", "agent.provider", "--script"):
        assert way in err, err
    assert "Traceback" not in err
    # Nothing was started: no session folder, no loop state.
    assert not (tmp_path / ".vtcode" / "sessions").exists() or not any(
        (tmp_path / ".vtcode" / "sessions").iterdir()
    )
    assert not (tmp_path / ".vtcode" / "loops").exists() or not any(
        (tmp_path / ".vtcode" / "loops").iterdir()
    )


def _result(proc: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert proc.returncode == 0, proc.stderr
    last = orjson.loads(proc.stdout.strip().splitlines()[-1])
    assert last["type"] == "thread.completed"
    return dict(last)


@pytest.mark.parametrize(
    ("how", "args", "env", "toml"),
    [
        ("flag", ["--provider", "replay"], {}, None),
        ("env", [], {"VTCODE_PROVIDER": "replay"}, None),
        ("config", [], {}, '[agent]\nprovider = "replay"\n'),
    ],
)
def test_each_way_of_choosing_runs(
    tmp_path: Path, how: str, args: list[str], env: dict[str, str], toml: str | None
) -> None:
    if toml is not None:
        (tmp_path / "vtcode.toml").write_text(toml)
        env = {**env, "VTCODE_TRUST_WORKSPACE": "1"}
    last = _result(_run(["exec", "--json", *args, "hi"], tmp_path, **env))
    # The default script says what it is, not "no --script given".
    assert last["result"] == (
        "This is the replay provider's default script: it answers once and does nothing."
    ), how


def test_a_script_implies_the_replay_provider(tmp_path: Path) -> None:
    script = str(SCRIPTS / "scenario-success.toml")
    last = _result(_run(["exec", "--json", "--script", script, "hi"], tmp_path))
    assert last["subtype"] == "success"


def test_an_explicit_provider_wins_over_the_environment(tmp_path: Path) -> None:
    proc = _run(["exec", "--provider", "nosuch", "hi"], tmp_path, VTCODE_PROVIDER="replay")
    assert proc.returncode == 2
    assert "unknown provider 'nosuch'" in proc.stderr
