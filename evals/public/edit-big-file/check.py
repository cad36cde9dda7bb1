"""edit-big-file: in the 2,000-line settings.py exactly one line changed: REQUEST_TIMEOUT = 45.

The expected file is regenerated from the task's own copy of gen.py (not the workspace's, which
the agent could change); each line is compared with trailing spaces ignored.
"""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

# The programs this check runs write no __pycache__: the workspace stays as the agent left it.
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"


# The runner names the task folder; run by hand from the task folder, the file's own folder.
TASK = Path(os.environ.get("VTCODE_EVAL_TASK_DIR") or Path(__file__).resolve().parent)
sys.dont_write_bytecode = True  # importing gen.py must not leave __pycache__ in the task
TARGET = re.compile(r"^REQUEST_TIMEOUT\s*=\s*45\s*(#.*)?$")


def expected_lines() -> list[str]:
    spec = importlib.util.spec_from_file_location("eval_gen", TASK / "setup" / "gen.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return list(gen.lines())


def main() -> int:
    path = Path("settings.py")
    if not path.is_file():
        print("FAIL: settings.py is missing")
        return 1
    got = [
        line.rstrip()
        for line in path.read_text(encoding="utf-8", errors="replace").rstrip("\n").split("\n")
    ]
    want = expected_lines()
    if len(got) != len(want):
        print(
            f"FAIL: settings.py has {len(got)} lines, expected {len(want)} "
            "(lines were added or removed)"
        )
        return 1
    for number, (g, w) in enumerate(zip(got, want, strict=True), 1):
        if w == "REQUEST_TIMEOUT = 30":
            if not TARGET.match(g):
                print(f"FAIL: line {number} is {g!r}, expected REQUEST_TIMEOUT = 45")
                return 1
        elif g != w:
            print(f"FAIL: line {number} changed: {g!r} (was {w!r})")
            return 1
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import settings; print(settings.REQUEST_TIMEOUT, settings.UPSTREAM_REQUEST_TIMEOUT)",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if probe.returncode != 0 or probe.stdout.split() != ["45", "30"]:
        print(f"FAIL: importing settings gave {probe.stdout!r} {probe.stderr[-500:]}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
