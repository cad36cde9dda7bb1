"""The suite API (vtcode.eval.suite): load, materialise, reference, check, protected files."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.eval.support import hello_task, write_task
from vtcode.eval.suite import (
    TaskError,
    apply_reference,
    load_suite,
    materialize,
    protected_digest,
    run_check,
)


def test_load_suite_sorts_by_id_and_ignores_other_folders(tmp_path: Path) -> None:
    hello_task(tmp_path, "b-task")
    hello_task(tmp_path, "a-task")
    (tmp_path / "notes").mkdir()
    (tmp_path / "README.md").write_text("x")
    suite = load_suite(tmp_path)
    assert [t.id for t in suite.tasks] == ["a-task", "b-task"]
    spec = suite.task("a-task").spec
    assert (spec.timeout, spec.max_turns, spec.check_timeout) == (300, 20, 120)
    assert spec.tags == ["easy", "create"]
    assert load_suite(tmp_path / "b-task").tasks[0].id == "b-task"  # one task folder


def _error(tmp_path: Path, toml: str, files: dict[str, str] | None = None) -> TaskError:
    write_task(tmp_path, "t", toml, files)
    with pytest.raises(TaskError) as exc:
        load_suite(tmp_path)
    return exc.value


def test_unknown_key_is_located_with_a_did_you_mean(tmp_path: Path) -> None:
    err = _error(
        tmp_path,
        """
        id = "t"
        prompt = "p"
        check = ["true"]
        max_turn = 3
        [setup]
        files = {}
        """,
    )
    text = str(err)
    assert f"{tmp_path / 't' / 'task.toml'}:4:1" in text
    assert "max_turn: unknown key" in text and "did you mean 'max_turns'?" in text
    err = _error(
        tmp_path,
        """
        id = "t"
        prompt = "p"
        check = ["true"]
        [setup]
        dirr = "x"
        """,
    )
    assert ":5:1" in str(err) and "did you mean 'dir'?" in str(err)


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('id = "other"\nprompt = "p"\ncheck = ["true"]\n[setup]\nfiles = {}', "folder name"),
        ('id = "t"\nprompt = " "\ncheck = ["true"]\n[setup]\nfiles = {}', "prompt is empty"),
        ('id = "t"\nprompt = "p"\ncheck = []\n[setup]\nfiles = {}', "needs a program"),
        ('id = "t"\nprompt = "p"\ncheck = ["true"]', "missing required field 'setup'"),
        ('id = "t"\nprompt = "p"\ncheck = ["true"]\n[setup]\n', "exactly one of"),
        (
            'id = "t"\nprompt = "p"\ncheck = ["true"]\n[setup]\nfiles = {}\ngit = {repo = "r"}',
            "has files, git",
        ),
        ('id = "t"\nprompt = "p"\ncheck = ["true"]\n[setup]\ndir = "../x"', "without '..'"),
        ('id = "t"\nprompt = "p"\ncheck = ["true"]\n[setup]\ndir = "."', "inside the folder"),
        ('id = "t"\nprompt = "p"\ncheck = ["true"]\n[setup]\ndir = "nope"', "no folder 'nope'"),
        ('id = "t"\nprompt = "p"\ncheck = ["true"]\n[setup]\nfiles = {"/etc/x" = ""}', "relative"),
        (
            'id = "t"\nprompt = "p"\ncheck = ["true"]\nprotect = ["../x"]\n[setup]\nfiles = {}',
            "protect[0]",
        ),
        (
            'id = "t"\nprompt = "p"\ncheck = ["true"]\nscript = "r.toml"\n[setup]\nfiles = {}',
            "no replay script",
        ),
        ('id = "t"\nprompt = "p"\ncheck = ["true"]\ntimeout = 0\n[setup]\nfiles = {}', "timeout"),
        ('id = "t"\nprompt = "p"\ncheck = ["true"]\nmax_turns = 0\n[setup]\nfiles = {}', "below"),
        ('id = "t"\nprompt = "p"\ncheck = "true"\n[setup]\nfiles = {}', "expected an array"),
        ('id = "t"\nprompt = = "p"', "invalid TOML"),
        ('id = "t"\nprompt = "a\\u0000b"\ncheck = ["true"]\n[setup]\nfiles = {}', "NUL byte"),
        ('id = "a..b"\nprompt = "p"\ncheck = ["true"]\n[setup]\nfiles = {}', "folder name"),
    ],
)
def test_bad_task_files_are_located_errors(tmp_path: Path, toml: str, message: str) -> None:
    err = _error(tmp_path, toml)
    assert message in str(err)
    assert str(tmp_path / "t" / "task.toml") in str(err)
    assert err.exit_code == 2


def test_an_empty_or_missing_suite_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match="no task"):
        load_suite(tmp_path)
    with pytest.raises(TaskError, match="not a suite folder"):
        load_suite(tmp_path / "missing")


def test_a_setup_dir_symlink_out_of_the_task_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    suite = tmp_path / "suite"
    folder = write_task(
        suite, "t", 'id = "t"\nprompt = "p"\ncheck = ["true"]\n[setup]\ndir = "setup"\n'
    )
    (folder / "setup").symlink_to(outside)
    with pytest.raises(TaskError, match="no folder 'setup'"):
        load_suite(suite)


def test_materialize_dir_keeps_symlinks_and_hides_checker_files(tmp_path: Path) -> None:
    folder = write_task(
        tmp_path / "suite",
        "t",
        """
        id = "t"
        prompt = "p"
        check = ["python3", "check.py"]
        [setup]
        dir = "setup"
        commands = [["python3", "-c", "open('gen.txt', 'w').write('x' * 10)"]]
        """,
        {"setup/src/a.py": "print(1)\n", "check.py": "import sys; sys.exit(0)\n"},
    )
    (folder / "setup" / "link").symlink_to("/etc/hostname")
    ws = tmp_path / "ws"
    task = load_suite(tmp_path / "suite").tasks[0]
    materialize(task, ws)
    assert (ws / "src" / "a.py").read_text() == "print(1)\n"
    assert (ws / "link").is_symlink() and os.readlink(ws / "link") == "/etc/hostname"
    assert (ws / "gen.txt").read_text() == "x" * 10
    assert not (ws / "check.py").exists() and not (ws / "task.toml").exists()
    with pytest.raises(TaskError, match="new or empty"):
        materialize(task, ws)


def test_a_failing_setup_command_is_a_task_error(tmp_path: Path) -> None:
    write_task(
        tmp_path / "suite",
        "t",
        """
        id = "t"
        prompt = "p"
        check = ["true"]
        [setup]
        files = {}
        commands = [["python3", "-c", "import sys; print('boom'); sys.exit(3)"]]
        """,
    )
    task = load_suite(tmp_path / "suite").tasks[0]
    with pytest.raises(TaskError, match=r"(?s)exit 3.*boom"):
        materialize(task, tmp_path / "ws")


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    out = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                         check=True)  # fmt: skip
    return out.stdout.strip()


def test_materialize_git_checks_out_the_ref_and_runs_no_hook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = tmp_path / "suite"
    folder = write_task(
        suite,
        "t",
        'id = "t"\nprompt = "p"\ncheck = ["true"]\n[setup]\ngit = { repo = "repo", ref = "v1" }\n',
    )
    repo = folder / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "f.txt").write_text("one\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one")
    _git(repo, "tag", "v1")
    (repo / "f.txt").write_text("two\n")
    _git(repo, "commit", "-qam", "two")
    # A hook named by the environment (as a hostile parent could) must not run.
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    marker = tmp_path / "hook-ran"
    hook = hooks / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.hooksPath")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(hooks))
    ws = tmp_path / "ws"
    materialize(load_suite(suite).tasks[0], ws)
    assert (ws / "f.txt").read_text() == "one\n"
    assert not marker.exists()


def test_reference_passes_the_check_and_the_untouched_setup_fails(tmp_path: Path) -> None:
    hello_task(tmp_path / "suite")
    task = load_suite(tmp_path / "suite").tasks[0]
    ws = tmp_path / "ws"
    materialize(task, ws)
    failed = run_check(task, ws)
    assert (failed.passed, failed.exit_code, failed.timed_out) == (False, 1, False)
    apply_reference(task, ws)
    assert run_check(task, ws).passed
    assert not (ws / "check.py").exists()  # the checker was removed after the check


def test_a_workspace_file_named_like_a_checker_file_is_put_back(tmp_path: Path) -> None:
    hello_task(tmp_path / "suite")
    task = load_suite(tmp_path / "suite").tasks[0]
    ws = tmp_path / "ws"
    materialize(task, ws)
    (ws / "check.py").write_text("import sys; sys.exit(0)  # the agent's own")
    assert not run_check(task, ws).passed  # the task's checker ran, not the agent's
    assert (ws / "check.py").read_text().endswith("# the agent's own")


def test_check_placeholder_env_timeout_and_missing_program(tmp_path: Path) -> None:
    write_task(
        tmp_path / "suite",
        "t",
        """
        id = "t"
        prompt = "p"
        check = ["python3", "{task_dir}/c.py"]
        check_timeout = 1
        [setup]
        files = {}
        """,
        {"c.py": "import os, time\nprint(os.environ['VTCODE_EVAL_TASK_DIR'])\ntime.sleep(60)\n"},
    )
    task = load_suite(tmp_path / "suite").tasks[0]
    ws = tmp_path / "ws"
    materialize(task, ws)
    res = run_check(task, ws)
    assert res.timed_out and not res.passed and res.seconds < 30
    assert str(task.folder) in res.output
    (task.folder / "task.toml").write_text(
        'id = "t"\nprompt = "p"\ncheck = ["no-such-program-xyz"]\n[setup]\nfiles = {}\n'
    )
    res = run_check(load_suite(tmp_path / "suite").tasks[0], ws)
    assert not res.passed and res.exit_code is None and "no-such-program-xyz" in res.output


def test_protected_digest_sees_change_removal_addition_and_never_blocks(tmp_path: Path) -> None:
    write_task(
        tmp_path / "suite",
        "t",
        """
        id = "t"
        prompt = "p"
        check = ["true"]
        protect = ["tests/*.py", "data"]
        [setup]
        files = { "tests/test_a.py" = "a", "data/x.txt" = "x", "main.py" = "m" }
        """,
    )
    task = load_suite(tmp_path / "suite").tasks[0]
    ws = tmp_path / "ws"
    materialize(task, ws)
    before = protected_digest(task, ws)
    assert list(before) == ["data/x.txt", "tests/test_a.py"]
    (ws / "main.py").write_text("changed")  # not protected
    assert protected_digest(task, ws) == before
    (ws / "tests" / "test_a.py").write_text("b")
    assert protected_digest(task, ws) != before
    (ws / "tests" / "test_a.py").write_text("a")
    (ws / "data" / "new.txt").write_text("n")
    assert protected_digest(task, ws) != before
    (ws / "data" / "new.txt").unlink()
    (ws / "tests" / "test_a.py").unlink()
    os.mkfifo(ws / "tests" / "test_a.py")  # a FIFO in its place: typed, never opened
    after = protected_digest(task, ws)
    assert after["tests/test_a.py"].startswith("special:")
    (ws / "tests" / "test_a.py").unlink()
    (ws / "tests" / "test_a.py").symlink_to(tmp_path / "suite" / "t" / "task.toml")
    assert protected_digest(task, ws)["tests/test_a.py"].startswith("symlink:")


def test_a_fifo_in_the_setup_folder_is_refused_not_waited_on(tmp_path: Path) -> None:
    folder = write_task(
        tmp_path / "suite",
        "t",
        'id = "t"\nprompt = "p"\ncheck = ["true"]\n[setup]\ndir = "setup"\n',
        {"setup/a.txt": "a"},
    )
    os.mkfifo(folder / "setup" / "pipe")
    with pytest.raises(TaskError, match="only regular files"):
        materialize(load_suite(tmp_path / "suite").tasks[0], tmp_path / "ws")
