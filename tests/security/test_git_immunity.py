"""vtcode's own git runs nothing a repository names (issue 23 item 3), through the real CLI.

A sandboxed command may write `.git/`. Every setting of `git_plants.PLANTS` is planted in a
real repository (each names `evil.sh`, which leaves a marker outside and inside the
workspace), then every vtcode command that runs git runs for real: exec (orientation), orient,
handoff, loop run, agent run with a worktree, worktree list / merge / drop, agent verify. No
marker may appear, each command must still work and report what it reported before (branch
state, modified files, the recent log). Afterwards each row's control fires it with plain git
on a copy of the planted repository, proving the plant was live.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.security.git_plants import (
    ATTRIBUTES,
    IDENTITY,
    PLANTS,
    Plant,
    evil_program,
    git,
    plant,
    run_control,
)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

CONFIG = """
[agent.subagents.fixer]
isolation = "worktree"
script = "loop-subagent-edit"

[agent.subagents.reviewer]
read_only = true
script = "loop-verifier-approve"
"""

BASE_FILES = {
    ".gitignore": ".vtcode/\n.inside-markers\n",
    ".gitattributes": ATTRIBUTES,
    "greeting.txt": "hello\n",
    "notes.txt": "notes\n",
    "info.txt": "info\n",
    "inc.txt": "inc\n",
    "incif.txt": "incif\n",
    "odd.txt": "odd\n",
    "vtcode.toml": CONFIG,
}


def vt(ws: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vtcode", "-q", *args],
        cwd=ws,
        env={**os.environ, **IDENTITY, "NO_COLOR": "1", "VTCODE_HOME": str(ws.parent / "home"),
             **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )  # fmt: skip


def make_repo(root: Path) -> Path:
    ws = root / "ws"
    ws.mkdir(parents=True)
    git(ws, "init", "-q", "-b", "main")
    for rel, text in BASE_FILES.items():
        (ws / rel).write_text(text)
    git(ws, "add", ".")
    git(ws, "commit", "-q", "-m", "base commit")
    return ws


def markers(root: Path, ws: Path) -> list[str]:
    found: list[str] = []
    for path in (root / "outside-markers", ws / ".inside-markers"):
        if path.exists():
            found += path.read_text().split()
    return found


def test_the_table_is_consistent() -> None:
    names = [p.name for p in PLANTS]
    assert len(names) == len(set(names))
    for group in {p.group for p in PLANTS}:
        keys = [k.lower() for p in PLANTS if p.group == group for k, _ in p.config]
        assert len(keys) == len(set(keys)), f"group {group} sets a key twice"


def _run_every_git_command(root: Path, ws: Path, env: dict[str, str], head: str) -> None:
    """Each vtcode command that runs git; each must work as it does in a clean repository and
    leave no marker (checked after each, so a failure names the command)."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        r = vt(ws, env, *args)
        assert r.returncode == 0, f"vtcode {' '.join(args)}: {r.stderr}"
        ran = markers(root, ws)
        assert ran == [], f"vtcode {' '.join(args)} ran planted programs: {sorted(set(ran))}"
        return r

    run("exec", "--provider", "replay", "--session-id", "s1", "hello")
    ledger = orjson.loads((ws / ".vtcode/sessions/s1/derived/progress.json").read_bytes())
    assert ledger["git_checkpoint"] == head  # orientation read HEAD

    r = run("orient")
    assert "### Recent Git Log" in r.stdout and "base commit" in r.stdout

    r = run("handoff", "--json", "--summary", "s", "--test-cmd", "true")
    assert "notes.txt" in orjson.loads(r.stdout)["modified_files"]  # the dirty file

    run("loop", "run", "--id", "L", "--steps", "1", "--script", "loop-step", "do step one")

    r = run("agent", "run", "fixer", "--json", "greet")
    wt = Path(orjson.loads(r.stdout)["worktree"]["path"])
    assert (wt / "greeting.txt").read_text() == "hello from the subagent\n"
    listed = orjson.loads(run("worktree", "list", "--json").stdout)["worktrees"]
    assert [(w["name"], w["changed"]) for w in listed] == [(wt.name, ["greeting.txt"])]
    r = run("worktree", "merge", wt.name, "--json")
    assert orjson.loads(r.stdout)["removed"] is True
    assert (ws / "greeting.txt").read_text() == "hello from the subagent\n"

    r = run("agent", "run", "fixer", "--json", "greet again")
    run("worktree", "drop", Path(orjson.loads(r.stdout)["worktree"]["path"]).name, "--json")

    run("agent", "verify", "reviewer", "--files", "greeting.txt", "--json")


@pytest.mark.parametrize("group", sorted({p.group for p in PLANTS}))
def test_no_planted_setting_runs(tmp_path: Path, group: str) -> None:
    rows = tuple(p for p in PLANTS if p.group == group)
    ws = make_repo(tmp_path)
    evil = evil_program(tmp_path, ws)
    env = plant(ws, evil, rows)
    head = git(ws, "rev-parse", "HEAD").strip()  # rev-parse runs nothing planted
    (ws / "notes.txt").write_text("notes, edited\n")  # a dirty file (different size)

    _run_every_git_command(tmp_path, ws, env, head)

    # Each plant was live: plain git runs it (alone in a fresh repository, so that no other
    # row, such as a failing signing program, stops the command first).
    dead = [row.name for row in rows if row.control is not None and not _fires(tmp_path, row)]
    assert dead == [], f"these plants never fire, even with plain git: {dead}"


def _fires(tmp_path: Path, row: Plant) -> bool:
    root = tmp_path / "control" / row.name
    ws, evil, _ = _plant_one(root, row)
    (ws / "notes.txt").write_text("notes, edited\n")
    run_control(ws, evil, row)
    return row.name in markers(root, ws)


def _plant_one(tmp_path: Path, row: Plant) -> tuple[Path, Path, dict[str, str]]:
    ws = make_repo(tmp_path)
    evil = evil_program(tmp_path, ws)
    return ws, evil, plant(ws, evil, (row,))


def test_a_merge_driver_is_never_run_and_the_merge_stops(tmp_path: Path) -> None:
    """Both sides change a file whose attribute names a planted merge driver: git would run it;
    vtcode's merge refuses instead (the driver is empty), leaving the main tree as it was."""
    [row] = [p for p in PLANTS if p.name == "merge-driver"]
    ws, _, env = _plant_one(tmp_path, row)
    r = vt(ws, env, "agent", "run", "fixer", "--json", "greet")
    assert r.returncode == 0, r.stderr
    name = Path(orjson.loads(r.stdout)["worktree"]["path"]).name
    (ws / "greeting.txt").write_text("hello from main\n")
    git(ws, "commit", "-q", "-am", "main changes the greeting")
    head = git(ws, "rev-parse", "HEAD")
    r = vt(ws, env, "worktree", "merge", name)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "merge.<name>.driver), which vtcode never runs" in r.stderr
    assert markers(tmp_path, ws) == []
    assert git(ws, "rev-parse", "HEAD") == head
    assert (ws / "greeting.txt").read_text() == "hello from main\n"
    assert git(ws, "status", "--porcelain", "--untracked-files=no") == ""


def test_core_worktree_elsewhere_is_refused_and_lists_nothing_outside(tmp_path: Path) -> None:
    """`core.worktree` pointing out of the repository would make vtcode's `git status` index
    another folder (its file names would land in the handoff, readable by the sandbox)."""
    ws = make_repo(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret-name.txt").write_text("x")
    git(ws, "config", "core.worktree", str(outside))
    r = vt(ws, {}, "handoff", "--json", "--summary", "s")
    assert r.returncode == 0, r.stderr
    assert orjson.loads(r.stdout)["modified_files"] == []
    r = vt(ws, {}, "orient")
    assert r.returncode == 0 and "secret-name" not in r.stdout
    r = vt(ws, {}, "agent", "run", "fixer", "greet")
    assert r.returncode == 2, r.stderr
    assert "core.worktree" in r.stderr and "Traceback" not in r.stderr
    assert not (ws / ".vtcode/worktrees").exists() or not any((ws / ".vtcode/worktrees").iterdir())


def test_a_submodule_with_an_absorbed_git_dir_still_works(tmp_path: Path) -> None:
    """A submodule's git dir (`.git/modules/<name>`) sets `core.worktree` to the submodule's
    own folder: that is the repository's work tree, so vtcode's git runs there as before."""
    sub = make_repo(tmp_path / "sub")
    ws = make_repo(tmp_path / "super")
    git(ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "lib")
    git(ws, "commit", "-q", "-m", "add lib")
    inner = ws / "lib"
    assert "worktree = " in (ws / ".git/modules/lib/config").read_text()
    (inner / "notes.txt").write_text("edited in the submodule\n")
    r = vt(inner, {}, "handoff", "--json", "--summary", "s")
    assert r.returncode == 0, r.stderr
    assert orjson.loads(r.stdout)["modified_files"] == ["notes.txt"]


def test_a_config_defined_hook_is_refused(tmp_path: Path) -> None:
    """Newer git runs hooks named in config (`hook.<name>.command`), which no command-line
    setting switches off: vtcode refuses to run git in such a repository (worktree: exit 2)."""
    ws = make_repo(tmp_path)
    evil = evil_program(tmp_path, ws)
    git(ws, "config", "hook.evil.command", f"{evil} config-hook")
    git(ws, "config", "hook.evil.event", "pre-commit")
    r = vt(ws, {}, "agent", "run", "fixer", "greet")
    assert r.returncode == 2 and "hook.evil.command" in r.stderr, r.stderr
    r = vt(ws, {}, "orient")
    assert r.returncode == 0, r.stderr
    assert markers(tmp_path, ws) == []


SANDBOX_PLANTS = [
    # Straight into .git/ (the sandbox keeps config, hooks/ and info/ read-only: refused)...
    "git config core.fsmonitor {evil}",
    "printf '#!/bin/sh\\n{evil}\\n' > .git/hooks/post-checkout",
    "chmod +x .git/hooks/post-checkout",
    # ...and through a config file the repository includes from the workspace (writable).
    'printf \'[core]\\n\\tfsmonitor = {evil}\\n[filter "evil"]\\n\\tclean = {evil}\\n'
    "\\tsmudge = {evil}\\n' > team.gitconfig",
]


def _plant_from_the_sandbox(root: Path, ws: Path, commands: list[str]) -> None:
    from vtcode.sandbox import Sandbox

    if not Sandbox().available:
        pytest.skip("no Landlock + namespaces on this machine")
    evil = evil_program(root, ws)
    run = str(evil.parent / "evil-fsmonitor")  # any row's wrapper: it records "fsmonitor"
    lines = ["[[turn]]", 'text = "Planting."']
    for cmd in commands:
        quoted = orjson.dumps(cmd.format(evil=run)).decode()
        lines += ["[[turn.tool_calls]]", 'name = "exec_command"',
                  f"arguments = {{ command = {quoted} }}"]  # fmt: skip
    script = root / "plant.toml"
    script.write_text("\n".join([*lines, "", "[[turn]]", 'text = "Done."']) + "\n")
    r = vt(ws, {}, "exec", "--script", str(script), "plant")
    assert r.returncode == 0, r.stderr


def test_what_a_sandboxed_command_plants_never_runs_outside(tmp_path: Path) -> None:
    """The issue's attack end to end: `exec_command` (in the sandbox, workspace-write) plants
    settings, here through a team config file the repository includes (`include.path =
    ../team.gitconfig`, a common pattern) that the sandbox can write; vtcode's next handoff
    and worktree run none of them, while plain git does."""
    ws = make_repo(tmp_path)
    git(ws, "config", "include.path", "../team.gitconfig")
    _plant_from_the_sandbox(tmp_path, ws, SANDBOX_PLANTS)
    assert "fsmonitor" in (ws / "team.gitconfig").read_text()
    (ws / "notes.txt").write_text("notes, edited\n")
    r = vt(ws, {}, "handoff", "--json", "--summary", "s")
    assert r.returncode == 0 and "notes.txt" in orjson.loads(r.stdout)["modified_files"]
    r = vt(ws, {}, "agent", "run", "fixer", "--json", "greet")
    assert r.returncode == 0, r.stderr
    assert markers(tmp_path, ws) == []
    subprocess.run(["git", "status"], cwd=ws, capture_output=True, check=False)
    assert "fsmonitor" in markers(tmp_path, ws)  # the plant is live for plain git


def test_a_repository_the_sandbox_creates_runs_nothing_either(tmp_path: Path) -> None:
    """A workspace that is no repository: the command makes one (`git init`, whose config
    nothing protects yet) with a planted fsmonitor and filter; vtcode's next orientation and
    handoff treat it as any repository and run none of it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("notes\n")
    _plant_from_the_sandbox(tmp_path, ws, [
        "git init -q && git config core.fsmonitor {evil} && git config filter.evil.clean {evil}",
        "echo '* filter=evil' > .gitattributes",
    ])  # fmt: skip
    assert "fsmonitor" in (ws / ".git/config").read_text()
    r = vt(ws, {}, "handoff", "--json", "--summary", "s")
    assert r.returncode == 0, r.stderr
    assert "notes.txt" in orjson.loads(r.stdout)["modified_files"]
    r = vt(ws, {}, "exec", "--provider", "replay", "--session-id", "after", "hello")
    assert r.returncode == 0, r.stderr
    assert markers(tmp_path, ws) == []
    subprocess.run(["git", "status"], cwd=ws, capture_output=True, check=False)
    assert "fsmonitor" in markers(tmp_path, ws)


def test_the_users_own_global_filter_still_runs_and_a_repository_override_does_not(
    tmp_path: Path,
) -> None:
    """A driver from the user's global config (git-lfs is one) is the user's: vtcode keeps it,
    also when the repository redefines the same name, in which case the user's value wins
    (here: the checkout of a subagent worktree smudges every file through it)."""
    ws = make_repo(tmp_path)
    evil = evil_program(tmp_path, ws)
    home = tmp_path / "home-user"
    home.mkdir()
    user_filter = tmp_path / "user-filter"
    user_filter.write_text(f"#!/bin/sh\necho user >> {tmp_path / 'user-ran'}\nexec cat\n")
    user_filter.chmod(0o755)
    (home / ".gitconfig").write_text(f'[filter "evil"]\n\tsmudge = {user_filter}\n')
    git(ws, "config", "filter.evil.smudge", f"{evil.parent / 'evil-filter-smudge'}")
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    r = vt(ws, env, "agent", "run", "fixer", "--json", "greet")
    assert r.returncode == 0, r.stderr
    assert markers(tmp_path, ws) == []
    assert (tmp_path / "user-ran").exists()


def test_a_planted_filter_inside_a_submodule_never_runs(tmp_path: Path) -> None:
    """`git status` checks a dirty submodule by running git inside it, under the submodule's
    own config, which vtcode never read: vtcode's status does not look inside (dirty)."""
    sub = make_repo(tmp_path / "sub")
    ws = make_repo(tmp_path / "super")
    git(ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "lib")
    git(ws, "commit", "-q", "-m", "add lib")
    evil = evil_program(tmp_path, ws)
    config = ws / ".git/modules/lib/config"
    config.write_text(
        config.read_text() + f'[filter "evil"]\n\tclean = {evil.parent / "evil-filter-clean"}\n'
    )
    os.utime(ws / "lib/notes.txt", (1, 1))
    r = vt(ws, {}, "handoff", "--json", "--summary", "s")
    assert r.returncode == 0, r.stderr
    assert markers(tmp_path, ws) == []
    subprocess.run(["git", "status"], cwd=ws, capture_output=True, check=False)
    assert "filter-clean" in markers(tmp_path, ws)  # plain git runs it


def test_a_partial_clone_never_fetches_a_missing_object(tmp_path: Path) -> None:
    """A repository dressed as a partial clone whose promisor remote is an `ext::` command,
    with a blob deleted: git would run the command to fetch it lazily. vtcode's worktree
    checkout fails instead (exit 1, no traceback) and the command never runs."""
    ws = make_repo(tmp_path)
    evil = evil_program(tmp_path, ws)
    blob = git(ws, "rev-parse", "HEAD:greeting.txt").strip()
    (ws / ".git/objects" / blob[:2] / blob[2:]).unlink()
    for key, value in (
        ("core.repositoryFormatVersion", "1"),
        ("extensions.partialClone", "ext"),
        ("remote.ext.promisor", "true"),
        ("remote.ext.url", f"ext::{evil.parent / 'evil-ext-remote'}"),
        ("protocol.ext.allow", "always"),
    ):
        git(ws, "config", key, value)
    r = vt(ws, {}, "agent", "run", "fixer", "greet")
    assert r.returncode == 1 and "git worktree add" in r.stderr and "Traceback" not in r.stderr
    r = vt(ws, {}, "handoff", "--json", "--summary", "s")
    assert r.returncode == 0, r.stderr
    assert markers(tmp_path, ws) == []
    subprocess.run(["git", "cat-file", "-p", blob], cwd=ws, capture_output=True, check=False)
    assert "ext-remote" in markers(tmp_path, ws)  # plain git runs it
