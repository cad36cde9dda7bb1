"""`vtcode eval` without a provider: refused before anything is written when a task needs a model.

`vtcode exec` has no default provider (issue 26.1); an eval of unscripted tasks used to run every
one and class each as `agent_crashed`. Scripted tasks still run with no provider.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests import forked_cli

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / "evals" / "public"


def _eval(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "VTCODE_PROVIDER"}
    full = {**env, "VTCODE_HOME": str(ws / ".home"), "NO_COLOR": "1"}
    return forked_cli.run(
        ["eval", str(SUITE), "-q", *args], cwd=ws, env=full, text=True, timeout=300
    )


def test_unscripted_tasks_without_a_provider_are_exit_2_and_write_nothing(tmp_path: Path) -> None:
    proc = _eval(tmp_path, "--task", "create-file", "--task", "csv-sum")
    assert proc.returncode == 2, proc.stderr
    assert "no provider chosen for vtcode, and 1 task(s) have no replay script: csv-sum" in (
        proc.stderr
    )
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / ".vtcode" / "evals").exists()


def test_scripted_tasks_run_without_a_provider(tmp_path: Path) -> None:
    proc = _eval(tmp_path, "--task", "create-file", "--min-pass-rate", "1")
    assert proc.returncode == 0, proc.stderr
