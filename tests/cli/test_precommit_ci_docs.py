"""docs/ci.md: the GitHub Actions and GitLab CI jobs parse, upload the session whatever happens,
and their shell script, run for real (bash -eo pipefail, as both CI systems run it) on the replay
provider, exits with the documented code, says why, and validates the log.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.exec_support import REPO, SCRIPTS

DOC = REPO / "docs" / "ci.md"
PROVIDER = '--provider anthropic --model "$VTCODE_MODEL"'
REPLAY = '--script "$REPLAY_SCRIPT"'


def _yaml_blocks() -> list[Any]:
    yaml = pytest.importorskip("ruamel.yaml", reason="ruamel.yaml (from check-jsonschema) parses")
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    return [yaml.YAML(typ="safe").load(b) for b in blocks]


@pytest.fixture(scope="module")
def jobs() -> dict[str, Any]:
    github, gitlab = _yaml_blocks()
    return {"github": github, "gitlab": gitlab}


def _github_script(job: Any) -> str:
    steps = job["jobs"]["agent"]["steps"]
    return str(next(s for s in steps if s.get("name") == "Run the agent")["run"])


def _scripts(jobs: dict[str, Any]) -> dict[str, str]:
    return {
        "github": _github_script(jobs["github"]),
        "gitlab": jobs["gitlab"]["vtcode-agent"]["script"][0],
    }


def test_both_jobs_run_one_script_and_always_upload_the_session(jobs: dict[str, Any]) -> None:
    scripts = _scripts(jobs)
    assert scripts["github"] == scripts["gitlab"]
    script = scripts["github"]
    assert script.count(PROVIDER) == 1
    assert 'case "$rc" in' in script
    for code in ("0)", "3)", "4)", "75)", "130)"):
        assert f"\n  {code}" in script
    upload = next(
        s
        for s in jobs["github"]["jobs"]["agent"]["steps"]
        if "upload-artifact" in s.get("uses", "")
    )
    assert upload["if"] == "always()"
    assert upload["with"]["include-hidden-files"] is True
    assert ".vtcode/sessions/" in upload["with"]["path"].split()
    gitlab = jobs["gitlab"]["vtcode-agent"]
    assert gitlab["artifacts"]["when"] == "always"
    assert ".vtcode/sessions/" in gitlab["artifacts"]["paths"]
    assert gitlab["retry"]["exit_codes"] == [75]


def _run(
    script: str, ws: Path, replay: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    inherited = {
        k: v
        for k, v in os.environ.items()
        if k not in ("VTCODE_MAX_TURNS", "VTCODE_MAX_BUDGET_USD")
    }
    full = {
        **inherited,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "NO_COLOR": "1",
        "VTCODE_HOME": str(ws / ".home"),
        "SESSION_ID": "ci-123-1",
        "PROMPT": "fix the failing test",
        "VTCODE_MODEL": "unused",
        "REPLAY_SCRIPT": str(SCRIPTS / f"{replay}.toml"),
        "AGENT_SCRIPT": script.replace(PROVIDER, REPLAY),
        **env,
    }
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", 'eval "$AGENT_SCRIPT"'],
        cwd=ws,
        env=full,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.mark.parametrize(
    ("replay", "env", "rc", "says"),
    [
        ("scenario-success", {}, 0, "vtcode: success"),
        ("scenario-max-turns", {"VTCODE_MAX_TURNS": "2"}, 3, "turn limit (error_max_turns)"),
        ("scenario-budget", {"VTCODE_MAX_BUDGET_USD": "0.02"}, 4, "budget cap"),
        ("scenario-provider-fatal", {}, 1, "vtcode: failed (exit 1"),
        ("scenario-success", {"PROMPT": ""}, 2, "usage or config error"),
    ],
    ids=["success", "max-turns", "budget", "failed", "usage"],
)
def test_the_job_script_exits_with_the_documented_code(
    jobs: dict[str, Any], tmp_path: Path, replay: str, env: dict[str, str], rc: int, says: str
) -> None:
    proc = _run(_scripts(jobs)["github"], tmp_path, replay, env)
    assert proc.returncode == rc, proc.stdout + proc.stderr
    assert says in proc.stdout
    session = tmp_path / ".vtcode" / "sessions" / "ci-123-1"
    if rc == 2:
        assert not session.exists()
        assert not (tmp_path / "session.html").exists()
        return
    assert "events.jsonl: valid" in proc.stdout  # the log was validated
    assert (session / "events.jsonl").is_file()  # what the artifact upload picks up
    assert "<svg" in (tmp_path / "session.html").read_text(encoding="utf-8")


def test_an_invalid_log_fails_a_run_that_passed(jobs: dict[str, Any], tmp_path: Path) -> None:
    # a PATH shim whose `validate` always fails, to see the script's handling of it
    shim = tmp_path / "bin"
    shim.mkdir()
    real = Path(sys.executable).parent / "vtcode"
    (shim / "vtcode").write_text(
        f'#!/bin/sh\nif [ "$1" = validate ]; then echo "invalid!"; exit 1; fi\nexec {real} "$@"\n'
    )
    (shim / "vtcode").chmod(0o755)
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"PATH": f"{shim}{os.pathsep}{os.environ['PATH']}"}
    proc = _run(_scripts(jobs)["gitlab"], ws, "scenario-success", env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "vtcode: success" in proc.stdout and "invalid!" in proc.stdout


@pytest.mark.parametrize(("code", "says"), [(75, "session lock"), (130, "cancelled")])
def test_case_statement_names_lock_busy_and_cancelled(
    jobs: dict[str, Any], code: int, says: str
) -> None:
    script = _scripts(jobs)["github"]
    block = script[script.index("case ") : script.index("esac") + 4]
    proc = subprocess.run(
        ["bash", "-c", f"rc={code}\n{block}"], capture_output=True, text=True, timeout=30
    )
    assert proc.returncode == 0 and says in proc.stdout


def test_the_prompt_stays_text(jobs: dict[str, Any], tmp_path: Path) -> None:
    prompt = "$(touch pwned) `touch pwned2` \"quoted\" 'single'"
    proc = _run(_scripts(jobs)["github"], tmp_path, "scenario-success", {"PROMPT": prompt})
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "pwned2").exists()
    transcript = (tmp_path / ".vtcode/sessions/ci-123-1/transcript.jsonl").read_text()
    assert "$(touch pwned)" in transcript
