"""`vtcode.gitsafe` in isolation: the argv, the environment and the reading of a config listing
(the end-to-end proof through the CLI is test_git_immunity.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from vtcode.gitsafe import (
    HARDENED_CONFIG,
    UnsafeRepositoryError,
    git_argv,
    git_env,
    repo_overrides,
    run_git,
)
from vtcode.orient import gitutil

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _listing(*entries: tuple[str, str, str | None]) -> str:
    out = []
    for scope, key, value in entries:
        out += [scope, key if value is None else f"{key}\n{value}"]
    return "\0".join(out) + "\0"


def _no_gitdir() -> Path | None:
    raise AssertionError("asked for the git dir without a core.worktree")


def test_argv_hardens_before_the_subcommand_and_adds_per_command_flags() -> None:
    argv = git_argv(["-c", "user.name=x", "log", "--oneline"])
    assert argv[:2] == ["git", "--no-pager"]
    pairs = [argv[i + 1] for i, a in enumerate(argv) if a == "-c"]
    assert pairs[: len(HARDENED_CONFIG)] == [f"{k}={v}" for k, v in HARDENED_CONFIG]
    assert argv[-5:] == ["user.name=x", "log", "--no-ext-diff", "--no-textconv", "--oneline"]
    assert git_argv(["status", "-z"])[-3:] == ["status", "--ignore-submodules=dirty", "-z"]
    assert git_argv(["rev-parse", "HEAD"])[-2:] == ["rev-parse", "HEAD"]


def test_env_drops_every_inherited_git_variable_but_identity() -> None:
    base = {
        "PATH": "/bin",
        "GIT_CONFIG_PARAMETERS": "'core.fsmonitor=x'",
        "GIT_CONFIG_COUNT": "1",
        "GIT_DIR": "/elsewhere",
        "GIT_EXTERNAL_DIFF": "x",
        "GIT_TRACE": "/tmp/trace",
        "GIT_AUTHOR_NAME": "me",
        "GIT_CEILING_DIRECTORIES": "/home",
        "GIT_CONFIG_GLOBAL": "/home/me/.gitconfig-ci",
        "GIT_CONFIG_SYSTEM": "/etc/other",
    }
    env = git_env(base)
    assert env["PATH"] == "/bin" and env["GIT_AUTHOR_NAME"] == "me"
    assert env["GIT_CEILING_DIRECTORIES"] == "/home"
    assert env["GIT_CONFIG_GLOBAL"] == "/home/me/.gitconfig-ci"  # the user's own, like HOME
    for gone in ("GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_DIR", "GIT_EXTERNAL_DIFF",
                 "GIT_TRACE", "GIT_CONFIG_SYSTEM"):  # fmt: skip
        assert gone not in env
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["GIT_OPTIONAL_LOCKS"] == "0"


def test_repository_driver_keys_are_reset_to_the_users_value_or_empty() -> None:
    listing = _listing(
        ("global", "filter.lfs.process", "git-lfs filter-process"),
        ("global", "filter.lfs.required", "true"),
        ("local", "filter.lfs.process", "evil"),
        ("local", "filter.We=ird.Name.clean", "evil"),
        ("worktree", "merge.m.driver", "evil"),
        ("local", "diff.d.textconv", "evil"),
        ("local", "diff.d.xfuncname", "^x"),  # not a program: left alone
        ("local", "filter.flag.required", None),
        ("local", "merge.ff", "false"),  # two-level key: not a driver
        ("command", "filter.cmd.clean", "vtcode's own"),
    )
    assert repo_overrides(listing, _no_gitdir) == [
        ("diff.d.textconv", ""),
        ("filter.We=ird.Name.clean", ""),
        ("filter.flag.required", "false"),
        ("filter.lfs.process", "git-lfs filter-process"),
        ("merge.m.driver", ""),
    ]


def test_a_config_defined_hook_is_refused() -> None:
    with pytest.raises(UnsafeRepositoryError, match=r"hook\.x\.command"):
        repo_overrides(_listing(("local", "hook.x.command", "evil")), _no_gitdir)
    # The user's own (global) config-defined hooks are not the repository's.
    assert repo_overrides(_listing(("global", "hook.x.command", "mine")), _no_gitdir) == []


@needs_git
def test_core_worktree_must_name_this_repositorys_folder(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    gitdir = ws / ".git"
    same = _listing(("local", "core.worktree", ".."))
    assert repo_overrides(same, lambda: gitdir) == []
    for elsewhere in ("/", str(tmp_path), "../..", "../.git"):
        with pytest.raises(UnsafeRepositoryError, match=r"core\.worktree"):
            repo_overrides(_listing(("local", "core.worktree", elsewhere)), lambda: gitdir)
    with pytest.raises(UnsafeRepositoryError):  # git dir unknown: refused, not guessed
        repo_overrides(same, lambda: None)


@needs_git
def test_a_malformed_config_fails_the_call_and_runs_nothing(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    with (ws / ".git/config").open("a") as f:
        f.write("[core\n\tfsmonitor = touch planted\n")
    proc = run_git(["status"], ws, timeout=10)
    assert proc is not None and proc.returncode != 0 and "bad config" in proc.stderr
    assert gitutil.modified_files(ws) is None
    assert not (ws / "planted").exists()


def test_no_other_module_starts_git() -> None:
    """One definition: a list or tuple starting with the word "git" (an argv) appears only in
    vtcode/gitsafe.py, so a new caller cannot bypass it by building its own command line."""
    import ast

    package = Path(__file__).resolve().parents[2] / "vtcode"
    offenders = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "gitsafe.py" and path.parent == package:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        exported = {  # `__all__ = ["git", ...]` names, it does not run
            id(n.value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Assign)
            and [getattr(t, "id", "") for t in n.targets] == ["__all__"]
        }
        for node in ast.walk(tree):
            if id(node) in exported:
                continue
            if isinstance(node, ast.List | ast.Tuple) and node.elts:
                first = node.elts[0]
                if isinstance(first, ast.Constant) and first.value == "git":
                    offenders.append(f"{path.relative_to(package.parent)}:{node.lineno}")
    assert offenders == []


def test_transports_open_only_what_a_clone_needs_and_never_ext() -> None:
    argv = git_argv(["clone", "r", "d"], transports=("file", "ssh"))
    pairs = [argv[i + 1] for i, a in enumerate(argv) if a == "-c"]
    assert "protocol.file.allow=always" in pairs and "protocol.ssh.allow=always" in pairs
    assert "protocol.ext.allow=never" in pairs and "protocol.https.allow=never" in pairs
    assert not any(p.startswith("core.sshCommand") for p in pairs)  # the user's own ssh
    assert "core.sshCommand=false" in git_argv(["fetch"])
    with pytest.raises(ValueError, match="ext"):
        git_argv(["clone"], transports=("ext",))
