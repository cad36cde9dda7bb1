"""plan-todo-done: `done N`, the [x]/[ ] list marks, the error path, and a new test.

The CLI is exercised in a scratch folder (a copy of todo.py) so the workspace's own todo.json,
if any, plays no part; the agent's tests must pass and number more than the two given.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# The programs this check runs write no __pycache__: the workspace stays as the agent left it.
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"

WORKSPACE = Path.cwd()


def fail(message: str) -> int:
    print(f"FAIL: {message}")
    return 1


HARNESS = r"""
import contextlib, io, json, os, runpy, sys, traceback
from pathlib import Path

os.chdir(sys.argv[1])
results = []
for step in json.loads(sys.argv[2]):
    if step[0] == "read":
        results.append(Path("todo.json").read_text() if Path("todo.json").exists() else None)
        continue
    if step[0] == "write":
        Path("todo.json").write_text(step[1])
        results.append(None)
        continue
    out, err, code = io.StringIO(), io.StringIO(), 0
    sys.argv = ["todo.py", *step[1:]]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            runpy.run_path("todo.py", run_name="__main__")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = 1
    results.append([code, out.getvalue(), err.getvalue()])
sys.__stdout__.write("\n" + json.dumps(results) + "\n")
"""
TEXTS = ["write report", "call Sam", "water plants"]
LEGACY = json.dumps([{"text": "old item"}, {"text": "new", "done": True}])
STEPS = [
    *(["run", "add", text] for text in TEXTS),  # 0-2
    ["run", "done", "2"],  # 3
    ["read"],  # 4
    ["run", "list"],  # 5
    ["run", "done", "4"],  # 6
    ["run", "done", "0"],  # 7
    ["read"],  # 8
    ["write", LEGACY],  # 9
    ["run", "list"],  # 10
]


def listing(stdout: str) -> list[str]:
    return [re.sub(r"\s+", " ", line.strip()) for line in stdout.strip().splitlines()]


def check_cli() -> int:
    """Every CLI step in one child process (runpy, a fresh module each run) in a scratch
    folder: the same verdict as a process per command, a fraction of the time. The child
    reports by JSON, so code that ends the process early fails the check, never passes it."""
    with tempfile.TemporaryDirectory() as scratch:
        shutil.copy(WORKSPACE / "todo.py", Path(scratch) / "todo.py")
        child = subprocess.run(
            [sys.executable, "-c", HARNESS, scratch, json.dumps(STEPS)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    try:
        results = json.loads(child.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return fail(f"todo.py ended the process:\n{child.stdout[-800:]}{child.stderr[-800:]}")
    if not isinstance(results, list) or len(results) != len(STEPS):
        return fail(f"todo.py ended the process early:\n{child.stderr[-800:]}")
    for step, result in zip(STEPS[:4], results[:4], strict=True):
        if result[0] != 0:
            return fail(
                f"python3 todo.py {' '.join(step[1:])} exited {result[0]}: {result[2][-800:]}"
            )
    items = json.loads(results[4])
    if [item.get("done") is True for item in items] != [False, True, False]:
        return fail(f"after done 2, todo.json is {items}; only item 2 should have done: true")
    if [item["text"] for item in items] != TEXTS:
        return fail(f"item texts changed: {items}")
    shown = listing(results[5][1])
    want = ["1. [ ] write report", "2. [x] call Sam", "3. [ ] water plants"]
    if shown != want:
        return fail(f"list printed {shown}, expected {want}")
    for bad, (code, out, err) in zip(["4", "0"], results[6:8], strict=True):
        if code == 0:
            return fail(f"python3 todo.py done {bad} (no such item) exited 0")
        if "Traceback" in err:
            return fail(f"done {bad} crashed instead of printing an error:\n{err[-800:]}")
        if not (out + err).strip():
            return fail(f"done {bad} printed no error message")
    if results[8] != results[4]:
        return fail("done with a number that does not exist changed todo.json")
    shown = listing(results[10][1])
    if shown != ["1. [ ] old item", "2. [x] new"]:
        return fail(f"an item without a done key listed as {shown}")
    return 0


def tests_passed(run: subprocess.CompletedProcess[str], at_least: int) -> bool:
    """unittest's own verdict: exit 0, "Ran N tests" with N >= at_least, and its "OK" line (an
    exit status alone could come from code that ends the process early)."""
    ran = re.search(r"^Ran (\d+) tests? in ", run.stderr, re.MULTILINE)
    ok = re.search(r"^OK\b", run.stderr, re.MULTILINE) is not None
    return run.returncode == 0 and ok and ran is not None and int(ran.group(1)) >= at_least


def check_tests() -> int:
    run = subprocess.run(
        [sys.executable, "-m", "unittest", "-v", "test_todo"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if not tests_passed(run, 3):
        return fail(
            "python3 -m unittest test_todo failed, or has no new test (more than the 2 given):"
            f"\n{run.stderr[-1500:]}"
        )
    text = (WORKSPACE / "test_todo.py").read_text(encoding="utf-8")
    if "done" not in text:
        return fail("no test in test_todo.py exercises the done command")
    return 0


def main() -> int:
    if not (WORKSPACE / "todo.py").is_file():
        return fail("todo.py is missing")
    try:
        failed = check_cli() or check_tests()
    except subprocess.TimeoutExpired:
        return fail("a run did not finish in time")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return fail(f"todo.json is not what was expected: {exc!r}")
    if not failed:
        print("PASS")
    return failed


if __name__ == "__main__":
    sys.exit(main())
