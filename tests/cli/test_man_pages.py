"""The committed man pages are exactly what scripts/gen_man.py generates from the code."""

from __future__ import annotations

import difflib
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
import rich_click as click

from vtcode.cli.main import cli
from vtcode.config import docs, keys
from vtcode.config.tomlscan import format_key

REPO = Path(__file__).resolve().parents[2]
MAN = REPO / "man"
REGENERATE = "run `python scripts/gen_man.py` and commit man/"


@pytest.fixture(scope="module")
def gen_man() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_man", REPO / "scripts" / "gen_man.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_man"] = module
    spec.loader.exec_module(module)
    return module


def _pages(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_text(encoding="utf-8")
        for p in sorted(root.glob("man[15]/*"))
    }


def test_committed_pages_match_the_generator(gen_man: ModuleType, tmp_path: Path) -> None:
    gen_man.generate(tmp_path)
    fresh, committed = _pages(tmp_path), _pages(MAN)
    missing = sorted(set(fresh) - set(committed))
    stale = sorted(set(committed) - set(fresh))
    assert not missing, f"man pages missing from man/: {missing}; {REGENERATE}"
    assert not stale, f"man pages for commands that no longer exist: {stale}; {REGENERATE}"
    drifted = sorted(name for name in fresh if fresh[name] != committed[name])
    diff = "".join(
        line
        for name in drifted[:1]
        for line in difflib.unified_diff(
            committed[name].splitlines(keepends=True),
            fresh[name].splitlines(keepends=True),
            f"man/{name}",
            "generated",
        )
    )
    assert not drifted, f"man pages out of date: {drifted}; {REGENERATE}\n{diff[:4000]}"


def _command_paths(cmd: click.Command, ctx: click.Context) -> list[str]:
    out = [ctx.command_path]
    if isinstance(cmd, click.Group):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                out += _command_paths(sub, click.Context(sub, info_name=name, parent=ctx))
    return out


def test_every_cli_command_has_a_page() -> None:
    paths = _command_paths(cli, click.Context(cli, info_name="vtcode", **cli.context_settings))
    assert "vtcode config set" in paths  # lazily loaded commands are walked too
    for path in paths:
        page = MAN / "man1" / (path.replace(" ", "-") + ".1")
        assert page.is_file(), f"no man page for `{path}`; {REGENERATE}"


def test_config_page_documents_every_key() -> None:
    page = (MAN / "man5" / "vtcode.toml.5").read_text(encoding="utf-8")
    for path, spec in keys.iter_specs():
        if spec.kind == "table":
            if any(c.kind != "table" for c in spec.children.values()):
                assert f".SS [{format_key(path)}]" in page
            continue
        name = str(path[-1]).replace("-", "\\-")
        assert f"\\fB{name}\\fR" in page, format_key(path)
        assert docs.describe(path, spec), f"no description for {format_key(path)} (docs.py)"
    for needle in ("LAYERS", "EXAMPLE", "McpServerConfig", "HookCommand", "HookMatcher"):
        assert needle in page


def test_every_description_names_a_real_key() -> None:
    named = {format_key(p) for p, _ in keys.iter_specs()}
    fields: set[str] = set()
    pending = [spec for _, spec in keys.iter_specs()]
    while pending:
        spec = pending.pop()
        item = spec.item
        if item is not None and item.kind == "table" and item.type_name:
            fields |= {f"{item.type_name}.{f}" for f in item.children}
            pending += list(item.children.values())
    unknown = set(docs.DESCRIPTIONS) - named - fields
    assert not unknown, f"descriptions for keys that do not exist: {sorted(unknown)}"


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff not installed")
def test_pages_render_without_groff_warnings() -> None:
    for page in sorted(MAN.glob("man[15]/*")):
        proc = subprocess.run(
            ["groff", "-man", "-ww", "-z", str(page)], capture_output=True, text=True, check=False
        )
        assert proc.returncode == 0 and proc.stderr == "", f"{page.name}: {proc.stderr}"
