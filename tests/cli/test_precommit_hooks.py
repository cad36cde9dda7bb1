""".pre-commit-hooks.yaml: the two hooks parse, select the right files, and run as pre-commit runs
them (the entry split like a shell word list, then every matching staged path appended, from the
repository root) with the documented exit codes on good and bad files.

PyYAML is not a dependency: the file is read with a tiny strict parser for its flat format, and
cross-checked with a real YAML parser when one is installed (PyYAML, or ruamel.yaml, which
check-jsonschema brings).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.exec_support import REPO, SCRIPTS, vtcode

HOOKS_FILE = REPO / ".pre-commit-hooks.yaml"
LOGS = REPO / "fixtures" / "logs"
CONFIGS = REPO / "fixtures" / "config"
ITEM = re.compile(r"^- ([a-z_]+): (.+)$")
KEY = re.compile(r"^  ([a-z_]+): (.+)$")
REQUIRED = {"id", "name", "entry", "language"}
KNOWN = REQUIRED | {"description", "files", "exclude", "types", "pass_filenames", "args"}


def parse_flat_hooks(text: str) -> list[dict[str, str]]:
    """A list of flat mappings of plain scalars, nothing else (comments and blank lines aside)."""
    hooks: list[dict[str, str]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = ITEM.match(line)
        if m:
            hooks.append({})
        else:
            m = KEY.match(line)
        if m is None or not hooks:
            raise ValueError(f"{HOOKS_FILE.name}:{n}: not a `- key: value` / `  key: value` line")
        key, value = m.groups()
        if key in hooks[-1]:
            raise ValueError(f"{HOOKS_FILE.name}:{n}: duplicate key {key!r}")
        if value[0] in "'\"[{&*!|>%@`" or " #" in value or value.endswith(":"):
            raise ValueError(f"{HOOKS_FILE.name}:{n}: only plain scalars are supported")
        hooks[-1][key] = value
    return hooks


def _real_yaml(text: str) -> Any:
    try:
        import yaml  # type: ignore[import-untyped]

        return yaml.safe_load(text)
    except ImportError:
        pass
    try:
        from ruamel.yaml import YAML
    except ImportError:
        return None
    return YAML(typ="safe").load(text)


@pytest.fixture(scope="module")
def hooks() -> dict[str, dict[str, str]]:
    text = HOOKS_FILE.read_text(encoding="utf-8")
    parsed = parse_flat_hooks(text)
    real = _real_yaml(text)
    if real is not None:
        assert real == parsed  # the tiny parser reads what YAML reads
    return {h["id"]: h for h in parsed}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project tree with logs and configs, good and bad, in the places a repository has them."""
    root = tmp_path_factory.mktemp("precommit-repo")
    run = vtcode(
        ["exec", "--json", "-q", "--session-id", "s", "--script", str(SCRIPTS / "demo.toml"), "go"],
        root,
    )
    assert run.returncode == 0, run.stderr
    files = {
        "logs/good.jsonl": run.stdout,
        "logs/session.jsonl": (root / ".vtcode/sessions/s/events.jsonl").read_text(),
        "logs/bad.jsonl": (LOGS / "invalid" / "duplicate_thread_started.jsonl").read_text(),
        "logs/notes.jsonl.bak": "not a log\n",
        "vtcode.toml": (CONFIGS / "valid" / "minimal.toml").read_text(),
        "sub/dir/vtcode.toml": (CONFIGS / "valid" / "full.toml").read_text(),
        "broken/vtcode.toml": (CONFIGS / "invalid" / "wrong_type.toml").read_text(),
        "other/myvtcode.toml": "this = [is not checked\n",
        "vtcode.toml.example": "neither = [is this\n",
    }
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    shutil.rmtree(root / ".vtcode")
    shutil.rmtree(root / ".home", ignore_errors=True)
    return root


def _staged(repo: Path) -> list[str]:
    return sorted(str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file())


def _selected(hook: dict[str, str], paths: list[str]) -> list[str]:
    pattern = re.compile(hook.get("files", ""))
    exclude = re.compile(hook.get("exclude", "^$"))
    return [p for p in paths if pattern.search(p) and not exclude.search(p)]


def _run_hook(
    hook: dict[str, str], repo: Path, files: list[str]
) -> subprocess.CompletedProcess[str]:
    """What pre-commit does: entry words + args + the file names, in the repository root, with
    the hook's environment (here: the venv vtcode is installed in) first on PATH."""
    argv = shlex.split(hook["entry"]) + shlex.split(hook.get("args", "")) + files
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env["NO_COLOR"] = "1"
    return subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, timeout=120)


def test_hooks_are_declared_as_documented(hooks: dict[str, dict[str, str]]) -> None:
    assert set(hooks) == {"vtcode-validate", "vtcode-config-check"}
    for hook in hooks.values():
        assert REQUIRED <= hook.keys() <= KNOWN, hook
        assert hook["language"] == "python"
    # vtcode validate --profile vtcode --strict: the hook checks vtcode's own logs with every
    # lifecycle rule, warnings as errors (a bare `vtcode validate` gives upstream's reader verdict)
    assert hooks["vtcode-validate"]["entry"] == "vtcode validate --profile vtcode --strict"
    assert hooks["vtcode-validate"]["files"] == r"\.jsonl$"
    assert hooks["vtcode-config-check"]["entry"] == "vtcode config check"
    assert hooks["vtcode-config-check"]["files"] == r"(^|/)vtcode\.toml$"
    # language python: pre-commit pip-installs this repository, whose console script is the entry
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    for hook in hooks.values():
        assert shlex.split(hook["entry"])[0] in scripts


def test_files_patterns_pick_exactly_logs_and_vtcode_toml(
    hooks: dict[str, dict[str, str]], repo: Path
) -> None:
    staged = _staged(repo)
    assert _selected(hooks["vtcode-validate"], staged) == [
        "logs/bad.jsonl",
        "logs/good.jsonl",
        "logs/session.jsonl",
    ]
    assert _selected(hooks["vtcode-config-check"], staged) == [
        "broken/vtcode.toml",
        "sub/dir/vtcode.toml",
        "vtcode.toml",
    ]


@pytest.mark.parametrize(
    ("hook_id", "keep", "rc"),
    [
        ("vtcode-validate", "good", 0),  # raw (exec --json) and wrapped (events.jsonl) lines
        ("vtcode-validate", "all", 1),
        ("vtcode-config-check", "good", 0),
        ("vtcode-config-check", "all", 2),
    ],
)
def test_hook_runs_like_pre_commit(
    hooks: dict[str, dict[str, str]], repo: Path, hook_id: str, keep: str, rc: int
) -> None:
    hook = hooks[hook_id]
    files = _selected(hook, _staged(repo))
    if keep == "good":
        files = [f for f in files if not f.startswith(("logs/bad", "broken/"))]
    proc = _run_hook(hook, repo, files)
    assert proc.returncode == rc, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    out = proc.stdout
    for f in files:
        if f.startswith(("logs/bad", "broken/")):
            assert f in proc.stderr  # the problem names the file (and line)
        else:
            assert f"{f}: valid" in out
    if hook_id == "vtcode-config-check" and rc:
        assert "broken/vtcode.toml:" in proc.stderr


@pytest.mark.parametrize(
    "text",
    [
        "id: x\n",  # not a list item
        "- id: x\n  id: y\n",  # duplicate key
        "- id: 'x'\n",  # quoted scalar
        "- id: x\n    nested: y\n",  # deeper nesting
        "- types: [file]\n",  # flow sequence
    ],
)
def test_flat_parser_refuses_what_it_does_not_understand(text: str) -> None:
    with pytest.raises(ValueError, match=r"\.pre-commit-hooks\.yaml:\d+:"):
        parse_flat_hooks(text)
