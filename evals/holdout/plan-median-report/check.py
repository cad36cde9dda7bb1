"""plan-median-report: stats.median, the report's median line, and tests that would catch a bug.

1. median() is probed on hidden cases: odd and even counts, floats, a tuple, the caller's
   list left in its order, ValueError for an empty list and an empty tuple.
2. report.py prints the same lines as before plus `median: X` right after `mean:`, on
   numbers.txt and on hidden files; with stats.median replaced by a stand-in, the report prints
   the stand-in's value, so it really uses stats.median.
3. `python3 -m unittest test_stats` passes with more tests than the three given, and the tests
   fail against each of three broken medians (an odd count off by one, an even count not
   halved, an empty sequence returning 0): tests that do not look at median pass all three.
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
CASES = [[3, 1, 2], [4, 1, 3, 2], [5], [1.5, -2, 10, 7], [2, 2, 2, 9], [0.5, 0.25]]
WANT_CASES = [2, 2.5, 5, 4.25, 2, 0.375]
PROBE = f"""
import json
import stats


def call(function, *args):
    try:
        return function(*args)
    except Exception as exc:
        return f"{{type(exc).__name__}}: {{exc}}"


out = {{"cases": [call(stats.median, v) for v in {CASES!r}]}}
out["tuple"] = call(stats.median, (1, 9, 5))
values = [9, 1, 5, 3]
call(stats.median, values)
out["kept"] = values
out["empty"] = [str(call(stats.median, empty)).split(":")[0] for empty in ([], ())]
out["mean"] = call(stats.mean, [1, 2, 3, 6])
out["spread"] = call(stats.spread, [4, -1, 7])
print(json.dumps(out, default=repr))
"""
WANT_PROBE = {
    "cases": WANT_CASES,
    "tuple": 5,
    "kept": [9, 1, 5, 3],
    "empty": ["ValueError", "ValueError"],
    "mean": 3,
    "spread": 8,
}
STAND_IN = """
import contextlib, io, json, runpy, sys
import stats
stats.median = lambda values: 1234.5
sys.argv = ["report.py", sys.argv[1]]
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        runpy.run_path("report.py", run_name="__main__")
    except SystemExit:
        pass
sys.__stdout__.write("\\n" + json.dumps(out.getvalue()) + "\\n")
"""
HIDDEN = [[4, 1, 8, 2, 6], [10, -2.5, 3, 3, 100, 0.5], [42]]
MUTANTS = {
    "an odd count one too high": "s[n // 2] + 1 if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2",
    "an even count not halved": "s[n // 2] if n % 2 else s[n // 2 - 1] + s[n // 2]",
    "an empty sequence giving 0": None,
}


def fail(message: str) -> int:
    print(f"FAIL: {message}")
    return 1


def report_lines(values: list[float]) -> list[str]:
    ordered, n = sorted(values), len(values)
    middle = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    return [
        f"count: {n}",
        f"min: {min(values):.2f}",
        f"max: {max(values):.2f}",
        f"spread: {max(values) - min(values):.2f}",
        f"mean: {sum(values) / n:.2f}",
        f"median: {middle:.2f}",
    ]


def python(*args: str, cwd: Path = WORKSPACE) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=60, cwd=cwd
    )


def tests_passed(run: subprocess.CompletedProcess[str], at_least: int) -> bool:
    """unittest's own verdict: exit 0, "Ran N tests" with N >= at_least, and its "OK" line."""
    ran = re.search(r"^Ran (\d+) tests? in ", run.stderr, re.MULTILINE)
    ok = re.search(r"^OK\b", run.stderr, re.MULTILINE) is not None
    return run.returncode == 0 and ok and ran is not None and int(ran.group(1)) >= at_least


def check_median() -> str:
    probe = python("-c", PROBE)
    try:
        got = json.loads(probe.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return f"calling stats.median failed:\n{probe.stderr[-1500:]}"
    if not isinstance(got, dict):
        return f"the stats probe printed {got!r}"
    wrong = [
        f"{k}: {got.get(k)!r}, expected {v!r}" for k, v in WANT_PROBE.items() if got.get(k) != v
    ]
    if wrong:
        return "stats gave " + "; ".join(wrong)
    return ""


def check_report(tmp: Path) -> str:
    numbers = [float(x) for x in Path("numbers.txt").read_text().split()]
    files = [("numbers.txt", numbers)]
    for i, values in enumerate(HIDDEN):
        path = tmp / f"hidden{i}.txt"
        path.write_text("".join(f"{v}\n" for v in values), encoding="utf-8")
        files.append((str(path), [float(v) for v in values]))
    for name, values in files:
        run = python("report.py", name)
        lines = [" ".join(line.split()) for line in run.stdout.splitlines() if line.strip()]
        if run.returncode != 0 or lines != report_lines(values):
            return (
                f"python3 report.py {name} exited {run.returncode} and printed {lines}, "
                f"expected {report_lines(values)}\n{run.stderr[-800:]}"
            )
    run = python("-c", STAND_IN, "numbers.txt")
    try:
        printed = json.loads(run.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return f"report.py with a stand-in stats.median ended early:\n{run.stderr[-800:]}"
    if "median: 1234.50" not in printed:
        return "report.py does not compute its median line with stats.median"
    return ""


def check_tests(tmp: Path) -> str:
    run = python("-m", "unittest", "test_stats")
    if not tests_passed(run, 4):
        return f"python3 -m unittest test_stats fails or has no new test:\n{run.stderr[-1500:]}"
    stats = Path("stats.py").read_text(encoding="utf-8")
    for name, body in MUTANTS.items():
        folder = tmp / "mutant"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        for path in WORKSPACE.glob("*.py"):
            if path.name != "check.py":
                shutil.copy(path, folder / path.name)
        if body is None:
            mutant = "def median(values):\n    if not values:\n        return 0.0\n"
            mutant += "    s = sorted(values)\n    n = len(s)\n"
            mutant += "    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2\n"
        else:
            mutant = "def median(values):\n    if not values:\n"
            mutant += '        raise ValueError("median of an empty sequence")\n'
            mutant += f"    s = sorted(values)\n    n = len(s)\n    return {body}\n"
        (folder / "stats.py").write_text(f"{stats}\n\n{mutant}", encoding="utf-8")
        if tests_passed(python("-m", "unittest", "test_stats", cwd=folder), 1):
            return f"test_stats.py passes against a median with {name}: no test catches it"
    return ""


def main() -> int:
    for name in ("stats.py", "report.py", "test_stats.py", "numbers.txt"):
        if not Path(name).is_file():
            return fail(f"{name} is missing")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            failed = check_median() or check_report(Path(tmp)) or check_tests(Path(tmp))
    except subprocess.TimeoutExpired:
        return fail("a run did not finish within 60 s")
    if failed:
        return fail(failed)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
