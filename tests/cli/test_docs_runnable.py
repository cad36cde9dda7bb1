"""The shell blocks of README.md and docs/*.md that say they run, run: each block marked with
`<!-- runnable ... -->` on the line before its ```sh fence is executed as it is (bash -e) in a
scratch folder with this checkout's vtcode first on PATH. Blocks that need the network, a
service or another machine (installs, systemd, CI YAML) are not marked and are only counted."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"(?P<mark><!-- runnable[^>]*-->\n)?```(?:sh|bash)\n(?P<body>.*?)```", re.S)


def _blocks() -> list[tuple[str, int, str, bool]]:
    out = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            line = text.count("\n", 0, m.start("body"))
            out.append((page.name, line, m.group("body"), m.group("mark") is not None))
    return out


RUNNABLE = [(page, line, body) for page, line, body, marked in _blocks() if marked]


def test_some_blocks_are_marked_and_the_rest_are_counted() -> None:
    blocks = _blocks()
    assert RUNNABLE, "no documentation block is marked runnable"
    skipped = [f"{page}:{line}" for page, line, _, marked in blocks if not marked]
    # Not a pass/fail rule: the count is reported so a reader sees what is not exercised.
    print(f"{len(RUNNABLE)} runnable block(s) run; {len(skipped)} not marked: {skipped}")


@pytest.mark.parametrize(
    ("page", "line", "body"), RUNNABLE, ids=[f"{p}:{n}" for p, n, _ in RUNNABLE]
)
def test_runnable_block_runs_as_written(page: str, line: int, body: str, tmp_path: Path) -> None:
    bin_dir = Path(sys.executable).parent
    assert shutil.which("vtcode", path=str(bin_dir)), "vtcode is not installed beside python"
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(tmp_path / "home"),
        "VTCODE_HOME": str(tmp_path / "vtcode-home"),
        "TMPDIR": str(tmp_path),
        "NO_COLOR": "1",
    }
    (tmp_path / "home").mkdir()
    proc = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", body],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, f"{page}:{line}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
