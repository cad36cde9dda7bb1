"""Building small eval suites in a temp folder for the tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

CHECK_HELLO = """\
import pathlib, sys
text = pathlib.Path("hello.txt").read_text() if pathlib.Path("hello.txt").exists() else ""
sys.exit(0 if text.strip() == "hello" else 1)
"""


def write_task(
    suite: Path,
    task_id: str,
    toml: str,
    files: dict[str, str] | None = None,
) -> Path:
    """`suite/task_id/task.toml` with `toml` (dedented) and the other files given."""
    folder = suite / task_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "task.toml").write_text(textwrap.dedent(toml).lstrip(), encoding="utf-8")
    for name, text in (files or {}).items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def hello_task(suite: Path, task_id: str = "make-hello", **extra: str) -> Path:
    """A task solved by writing `hello` into hello.txt; its reference does exactly that."""
    lines = "\n".join(f"{k} = {v}" for k, v in extra.items())
    return write_task(
        suite,
        task_id,
        f"""
        id = "{task_id}"
        prompt = "Write hello into hello.txt"
        tags = ["easy", "create"]
        check = ["python3", "check.py"]
        protect = ["keep.txt"]
        {lines}
        [setup]
        files = {{ "keep.txt" = "do not touch\\n" }}
        """,
        {"check.py": CHECK_HELLO, "reference/hello.txt": "hello\n"},
    )
