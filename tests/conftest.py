"""Shared pytest fixtures. Keep each fixture small and documented; add new ones at the end."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

REPO = Path(__file__).resolve().parents[1]

RunVtcode = Callable[..., tuple[int, str, str]]


@pytest.fixture
def snapshot_json(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """syrupy with the JSON extension: one pretty, key-sorted `.json` file per snapshot."""
    return snapshot.use_extension(JSONSnapshotExtension)


@pytest.fixture
def run_vtcode(tmp_path: Path) -> RunVtcode:
    """Run `python -m vtcode ARGS` as a real subprocess; returns (rc, stdout, stderr).

    `cwd` defaults to a fresh temp folder; `input` (str or bytes) is fed to stdin; `env` entries
    are layered over a copy of the current environment (NO_COLOR set, so output is plain).
    Output is decoded as UTF-8 with replacement, so binary garbage never breaks a test.
    """

    def run(
        args: list[str],
        cwd: Path | None = None,
        input: str | bytes | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 60.0,
    ) -> tuple[int, str, str]:
        full_env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
        if env:
            full_env.update(env)
        data = input.encode("utf-8") if isinstance(input, str) else input
        proc = subprocess.run(
            [sys.executable, "-m", "vtcode", *args],
            cwd=cwd or tmp_path,
            input=data,
            stdin=None if data is not None else subprocess.DEVNULL,
            capture_output=True,
            env=full_env,
            timeout=timeout,
            check=False,
        )
        return (
            proc.returncode,
            proc.stdout.decode("utf-8", "replace"),
            proc.stderr.decode("utf-8", "replace"),
        )

    return run


# Tool fixtures (appended by the tools work; their type-only imports live here).
import typing as _typing  # noqa: E402

if _typing.TYPE_CHECKING:
    from collections.abc import Iterator

    from vtcode.tools.base import ToolContext
    from vtcode.tools.registry import ToolRegistry


@pytest.fixture
def tool_ctx(tmp_path: Path) -> ToolContext:
    """A ToolContext on a fresh workspace folder (`tmp_path/ws`) with the standard spool dir."""
    from vtcode.tools.base import ToolContext

    ws = tmp_path / "ws"
    ws.mkdir()
    return ToolContext(
        workspace=ws, session_id="test-session", spool_dir=ws / ".vtcode/context/tool_outputs"
    )


@pytest.fixture
def tool_registry() -> Iterator[ToolRegistry]:
    """`default_registry()`; closed at teardown, which kills and reaps every exec session."""
    from vtcode.tools.registry import default_registry

    registry = default_registry()
    try:
        yield registry
    finally:
        registry.close()
