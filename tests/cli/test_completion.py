"""`vtcode completion bash|zsh|fish` and dynamic session-id completion.

The scripts are click's own; each is checked by the real shell's parser, and bash and fish run
them for real (bash calls the completion function, fish answers `complete -C`), against a temp
workspace holding real sessions made by `vtcode exec`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.shell_completion import get_completion_class

from tests.exec_support import SCRIPTS, vtcode

SESSIONS = ["alpha-1", "beta-2"]  # created in this order: beta-2 is the most recent
BIN = Path(sys.executable).parent
SYNTAX = {"bash": ["-n"], "zsh": ["-n"], "fish": ["--no-execute"]}
PACKAGES = {"bash": "bash", "zsh": "zsh", "fish": "fish"}

# (command line before the cursor, incomplete word) -> expected candidates
SESSION_LINES = [
    "sessions show",
    "sessions export",
    "sessions repair",
    "exec resume",
    "steer",
    "compact",
    "agent verify reviewer --parent",
    "chat --resume",
]


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("completion-ws")
    for sid in SESSIONS:
        proc = vtcode(
            [
                "exec",
                "-q",
                "--session-id",
                sid,
                "--script",
                str(SCRIPTS / "scenario-success.toml"),
                "hi",
            ],
            root,
        )
        assert proc.returncode == 0, proc.stderr
    # neither of these is a session: completion must not offer them
    (root / ".vtcode" / "sessions" / "not a session").mkdir()
    (root / ".vtcode" / "sessions" / "stray.txt").write_text("x")
    return root


def _complete(
    ws: Path, line: str, incomplete: str = "", shell: str = "bash", cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    words = ["vtcode", *line.split(), incomplete]
    env = {
        **os.environ,
        "_VTCODE_COMPLETE": f"{shell}_complete",
        "COMP_WORDS": " ".join(words),
        # bash and zsh pass the cursor's word index, fish the incomplete word itself
        "COMP_CWORD": incomplete if shell == "fish" else str(len(words) - 1),
    }
    return subprocess.run(
        [sys.executable, "-m", "vtcode"],
        cwd=cwd or ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _bash_values(out: str) -> list[str]:
    return [line.split(",", 1)[1] for line in out.splitlines()]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_script_is_clicks_own_and_the_shell_parses_it(
    shell: str, tmp_path: Path, debian_tool: object
) -> None:
    from vtcode.cli.main import cli

    proc = vtcode(["completion", shell], tmp_path)
    assert proc.returncode == 0, proc.stderr
    cls = get_completion_class(shell)
    assert cls is not None
    assert proc.stdout == cls(cli, {}, "vtcode", "_VTCODE_COMPLETE").source() + "\n"
    assert "_VTCODE_COMPLETE" in proc.stdout
    binary = debian_tool(shell, PACKAGES[shell])  # type: ignore[operator]
    script = tmp_path / f"vtcode.{shell}"
    script.write_text(proc.stdout)
    check = subprocess.run(
        [binary, *SYNTAX[shell], str(script)], capture_output=True, text=True, timeout=30
    )
    assert check.returncode == 0, check.stderr


def test_unknown_shell_is_a_usage_error(tmp_path: Path) -> None:
    proc = vtcode(["completion", "powershell"], tmp_path)
    assert proc.returncode == 2
    assert "powershell" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("line", SESSION_LINES)
def test_session_ids_complete_for_every_command_that_takes_one(ws: Path, line: str) -> None:
    proc = _complete(ws, line)
    assert proc.returncode == 0, proc.stderr
    assert _bash_values(proc.stdout) == ["beta-2", "alpha-1"]  # most recent first
    proc = _complete(ws, line, "al")
    assert _bash_values(proc.stdout) == ["alpha-1"]
    assert proc.stderr == ""


def test_workspace_option_is_honoured(ws: Path, tmp_path: Path) -> None:
    proc = _complete(ws, f"-C {ws} sessions show", cwd=tmp_path)
    assert _bash_values(proc.stdout) == ["beta-2", "alpha-1"]
    proc = _complete(ws, "sessions show", cwd=tmp_path)  # an empty workspace: nothing
    assert (proc.returncode, proc.stdout.strip(), proc.stderr) == (0, "", "")


def test_exec_words_offer_resume_then_sessions(ws: Path) -> None:
    assert _bash_values(_complete(ws, "exec", "re").stdout) == ["resume"]
    assert _complete(ws, "exec").stdout.strip() == ""  # a prompt comes next: no guess
    assert _complete(ws, "exec resume alpha-1").stdout.strip() == ""


def test_zsh_and_fish_answers_carry_a_description(ws: Path) -> None:
    zsh = _complete(ws, "sessions show", "b", shell="zsh").stdout.splitlines()
    assert zsh[:2] == ["plain", "beta-2"]
    assert zsh[2].startswith("completed - 1 turns - ")
    fish = _complete(ws, "sessions show", "b", shell="fish").stdout.splitlines()
    assert fish[0].startswith("plain,beta-2\tcompleted - 1 turns")
    assert "," not in fish[0].split("\t", 1)[1]  # fish's script splits answers on commas


def test_bash_runs_the_script_for_real(ws: Path) -> None:
    script = vtcode(["completion", "bash"], ws).stdout
    program = (
        f"{script}\n"
        'COMP_WORDS=(vtcode sessions show ""); COMP_CWORD=3\n'
        "_vtcode_completion vtcode\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", program],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["beta-2", "alpha-1"]


def test_fish_runs_the_script_for_real(ws: Path, debian_tool: object) -> None:
    fish = debian_tool("fish", "fish")  # type: ignore[operator]
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(
        [
            fish,
            "--no-config",
            "-c",
            'vtcode completion fish | source; complete -C "vtcode sessions show "',
        ],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    values = [line.split("\t")[0] for line in proc.stdout.splitlines()]
    assert sorted(values) == ["alpha-1", "beta-2"]  # fish sorts candidates itself


@pytest.mark.parametrize(
    ("line", "incomplete", "expected"),
    [
        ("exec --script", "scenario-max", {"scenario-max-turns", "scenario-max-output-tokens"}),
        ("loop run --script", "demo", {"demo"}),
        ("exec --provider", "", {"replay", "openai", "anthropic", "openai-responses", "local"}),
        ("config get", "agent.max_", {"agent.max_conversation_turns", "agent.max_task_retries"}),
        ("config set", "sandbox.mo", {"sandbox.mode"}),
        ("schema show", "thread-ev", {"thread-event", "thread-event-reader"}),
        ("loop status", "", {"docs", "nightly"}),
        ("loop run --id", "ni", {"nightly"}),
    ],
)
def test_completion_knows_scripts_providers_loops_keys_and_schemas(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    line: str,
    incomplete: str,
    expected: set[str],
) -> None:
    ws = tmp_path / "ws"
    (ws / ".vtcode" / "state").mkdir(parents=True)
    for loop in ("docs", "nightly"):
        (ws / ".vtcode" / "state" / f"loop-{loop}.json").write_text("{}")
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        '[providers.local]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
    )
    monkeypatch.setenv("VTCODE_HOME", str(home))  # _complete passes os.environ on
    proc = _complete(ws, line, incomplete)
    assert proc.returncode == 0, proc.stderr
    got = set(_bash_values(proc.stdout))
    assert expected <= got, (expected - got, sorted(got)[:20])
