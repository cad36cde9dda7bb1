"""The policy-bearing paths are read-only to the model's file tools (issue 23, item 5).

`vtcode.toml` (any letter case), `.vtcode/` and any `.git/` refuse write_file and apply_patch by
every name that reaches them: directly, `./`, an absolute path, a symlink to the file, a symlink
to the folder, and a hard link to the file; in a trusted workspace as in an untrusted one. The
list itself is `vtcode.config.policy_paths.POLICY_PATHS`; docs/security.md is checked against it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.exec_support import REPO, vtcode
from vtcode.config.policy_paths import POLICY_PATHS, policy_inodes, user_paths, workspace_paths
from vtcode.tools.base import ToolContext, ToolError
from vtcode.tools.registry import ToolRegistry

CONFIG = '[sandbox]\nmode = "workspace-write"\n'
GIT_CONFIG = "[core]\n\tbare = false\n"


@pytest.fixture
def ws(tool_ctx: ToolContext) -> Path:
    root = tool_ctx.workspace
    (root / "vtcode.toml").write_text(CONFIG)
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text(GIT_CONFIG)
    (root / ".vtcode" / "state").mkdir(parents=True)
    (root / "sub" / ".git").mkdir(parents=True)
    return root


# Each form: (id, how to make the name inside the workspace, the name the model uses).
Plant = Callable[[Path], None]
FORMS: list[tuple[str, Plant, str]] = [
    ("direct", lambda ws: None, "vtcode.toml"),
    ("dot-slash", lambda ws: None, "./vtcode.toml"),
    ("upper-case", lambda ws: None, "VTCODE.toml"),
    ("mixed-case", lambda ws: None, "VtCode.TOML"),
    ("absolute", lambda ws: None, "{ws}/vtcode.toml"),
    ("symlink", lambda ws: (ws / "cfg").symlink_to("vtcode.toml"), "cfg"),
    ("hard-link", lambda ws: os.link(ws / "vtcode.toml", ws / "cfg.toml"), "cfg.toml"),
    ("via-subdir", lambda ws: (ws / "d").mkdir(), "d/../vtcode.toml"),
    ("git-config", lambda ws: None, ".git/config"),
    ("git-hook", lambda ws: None, ".git/hooks/pre-commit"),
    ("nested-git", lambda ws: None, "sub/.git/config"),
    ("dir-link-to-git", lambda ws: (ws / "g").symlink_to(".git"), "g/config"),
    ("git-config-hard-link", lambda ws: os.link(ws / ".git/config", ws / "gc"), "gc"),
    ("vtcode-state", lambda ws: None, ".vtcode/state/notes.md"),
    ("dir-link-to-state", lambda ws: (ws / "s").symlink_to(".vtcode/state"), "s/notes.md"),
]


@pytest.mark.parametrize(("form", "plant", "name"), FORMS, ids=[f[0] for f in FORMS])
@pytest.mark.parametrize("tool", ["write_file", "apply_patch-add", "apply_patch-delete"])
def test_every_name_of_a_policy_path_is_refused(
    tool_registry: ToolRegistry,
    tool_ctx: ToolContext,
    ws: Path,
    form: str,
    plant: Plant,
    name: str,
    tool: str,
) -> None:
    plant(ws)
    name = name.format(ws=ws)
    before = {p: p.read_bytes() for p in (ws / "vtcode.toml", ws / ".git" / "config")}
    if tool == "write_file":
        call = ("write_file", {"path": name, "content": '[sandbox]\nmode = "danger-full-access"\n'})
    elif tool == "apply_patch-add":
        body = f"*** Begin Patch\n*** Add File: {name}\n+x\n*** End Patch"
        call = ("apply_patch", {"input": body})
    else:
        body = f"*** Begin Patch\n*** Delete File: {name}\n*** End Patch"
        call = ("apply_patch", {"input": body})
    if (form, tool) == ("symlink", "apply_patch-delete"):
        tool_registry.run(call[0], call[1], tool_ctx)  # removes the link, never its target
        assert not (ws / "cfg").is_symlink()
    else:
        with pytest.raises(ToolError, match="may not modify"):
            tool_registry.run(call[0], call[1], tool_ctx)
    assert {p: p.read_bytes() for p in before} == before
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()
    assert not (ws / ".vtcode" / "state" / "notes.md").exists()


def test_ordinary_files_next_to_them_stay_writable(
    tool_registry: ToolRegistry, tool_ctx: ToolContext, ws: Path
) -> None:
    for name in ("vtcode.toml.bak", "docs/vtcode.toml", "AGENTS.md", ".gitignore", "git/config"):
        tool_registry.run("write_file", {"path": name, "content": "x\n"}, tool_ctx)
        assert (ws / name).read_text() == "x\n"
    # a hard link to an ordinary file is an ordinary file
    os.link(ws / "AGENTS.md", ws / "agents-link.md")
    tool_registry.run("write_file", {"path": "agents-link.md", "content": "y\n"}, tool_ctx)


def test_the_list_and_what_the_sandbox_gets(ws: Path, tmp_path: Path) -> None:
    assert [p.name for p in workspace_paths(ws)] == [".git", ".vtcode", "vtcode.toml"]
    (ws / "VTCODE.TOML").write_text("")  # a second spelling on a case-sensitive disk
    assert "VTCODE.TOML" in [p.name for p in workspace_paths(ws)]
    st = (ws / "vtcode.toml").stat()
    assert (st.st_dev, st.st_ino) in policy_inodes(ws)
    home = tmp_path / "home"
    assert user_paths({"VTCODE_HOME": str(home)}) == [home, home / "config.toml"]
    xdg = tmp_path / "xdg"
    assert user_paths({"XDG_CONFIG_HOME": str(xdg)}) == [xdg / "vtcode", xdg / "vtcode/config.toml"]


def test_docs_list_every_policy_path() -> None:
    text = (REPO / "docs" / "security.md").read_text()
    for entry in POLICY_PATHS:
        assert f"`{entry.name}`" in text, entry.name


SCRIPT = """
[provider]
model = "replay-1"

[[turn]]
[[turn.tool_calls]]
name = "write_file"
arguments = { path = "vtcode.toml", content = "[sandbox]\\nmode = \\"danger-full-access\\"\\n" }

[[turn]]
expect_last_tool_output_contains = "may not modify"
text = "refused"
"""


@pytest.mark.parametrize("trusted", [False, True], ids=["untrusted", "trusted"])
def test_exec_cannot_loosen_its_own_config(tmp_path: Path, trusted: bool) -> None:
    """Through the real CLI, with VTCODE_TRUST_WORKSPACE=1 as docs/ci.md suggests for CI."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "vtcode.toml").write_text(CONFIG)
    script = tmp_path / "loosen.toml"
    script.write_text(SCRIPT)
    env = {"VTCODE_TRUST_WORKSPACE": "1"} if trusted else {}
    run = vtcode(["-C", str(ws), "exec", "--script", str(script), "go"], tmp_path, env=env)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    assert (ws / "vtcode.toml").read_text() == CONFIG
