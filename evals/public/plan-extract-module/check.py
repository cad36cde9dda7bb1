"""plan-extract-module: parse_line and format_row live in rows.py, are imported from there by
report.py, cli.py and test_report.py, and everything behaves as before.

Where a function is defined and where it is imported from is read from the syntax tree (ast),
so comments and strings do not count; behaviour is checked by running cli.py (its output must
be exactly what the untouched project prints), the tests (none removed) and hidden cases.
"""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

# The programs this check runs write no __pycache__: the workspace stays as the agent left it.
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"

MOVED = {"parse_line", "format_row"}
CLI_OUTPUT = [
    "4 items",
    "melon         1      3.00",
    "pear          2      2.50",
    "grape        10      2.00",
    "apple         3      1.50",
    "TOTAL                9.00",
]
PROBE = """
from rows import format_row, parse_line
from report import build_report

assert parse_line("  fig , 2 , 1.25 ") == ("fig", 2, 1.25), parse_line("  fig , 2 , 1.25 ")
assert parse_line("") is None and parse_line("   # note") is None
assert format_row("fig", 2, 1.25) == "fig           2      2.50", repr(format_row("fig", 2, 1.25))
assert build_report(["x,1,2.0"]) == ["x             1      2.00", "TOTAL                2.00"]
print("probe ok")
"""


def fail(message: str) -> int:
    print(f"FAIL: {message}")
    return 1


def tree(name: str) -> ast.Module | None:
    try:
        return ast.parse(Path(name).read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError):
        return None


def defined(module: ast.Module) -> set[str]:
    return {n.name for n in module.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def imported_from(module: ast.Module, source: str) -> set[str]:
    """Names imported by `from source import ...`, or all MOVED when `import source` is used."""
    names: set[str] = set()
    for node in ast.walk(module):
        if isinstance(node, ast.ImportFrom) and node.module == source and node.level == 0:
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.Import) and any(a.name == source for a in node.names):
            names |= MOVED
    return names


def tests_passed(run: subprocess.CompletedProcess[str], at_least: int) -> bool:
    """unittest's own verdict: exit 0, "Ran N tests" with N >= at_least, and its "OK" line (an
    exit status alone could come from code that ends the process early)."""
    ran = re.search(r"^Ran (\d+) tests? in ", run.stderr, re.MULTILINE)
    ok = re.search(r"^OK\b", run.stderr, re.MULTILINE) is not None
    return run.returncode == 0 and ok and ran is not None and int(ran.group(1)) >= at_least


def check_layout() -> int:
    rows, report = tree("rows.py"), tree("report.py")
    if rows is None:
        return fail("rows.py is missing or not valid Python")
    if report is None:
        return fail("report.py is missing or not valid Python")
    if not defined(rows) >= MOVED:
        return fail(f"rows.py does not define {sorted(MOVED - defined(rows))}")
    if MOVED & defined(report):
        return fail(f"report.py still defines {sorted(MOVED & defined(report))}")
    if "build_report" not in defined(report):
        return fail("report.py no longer defines build_report")
    uses = {"report.py": MOVED, "cli.py": {"parse_line"}, "test_report.py": MOVED}
    for name, needed in uses.items():
        module = tree(name)
        if module is None:
            return fail(f"{name} is missing or not valid Python")
        if not needed <= imported_from(module, "rows"):
            return fail(f"{name} does not import {sorted(needed)} from rows")
        if imported_from(module, "report") & MOVED:
            return fail(f"{name} still imports {sorted(MOVED)} names from report")
    return 0


def check_behaviour() -> int:
    def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, capture_output=True, text=True, timeout=60)

    cli = run([sys.executable, "cli.py", "sales.txt"])
    if cli.returncode != 0:
        return fail(f"python3 cli.py sales.txt exited {cli.returncode}:\n{cli.stderr[-1500:]}")
    got = [line.rstrip() for line in cli.stdout.rstrip("\n").split("\n")]
    if got != CLI_OUTPUT:
        return fail(f"python3 cli.py sales.txt printed {got}, expected {CLI_OUTPUT}")
    tests = run([sys.executable, "-m", "unittest", "test_report"])
    if not tests_passed(tests, 3):
        return fail(
            f"python3 -m unittest test_report failed or lost tests (3 were given):\n"
            f"{tests.stderr[-1500:]}"
        )
    probe = run([sys.executable, "-c", PROBE])
    if probe.returncode != 0 or "probe ok" not in probe.stdout:
        lines = probe.stderr.strip().splitlines()
        return fail(f"hidden cases: {lines[-1] if lines else 'the probe failed'}")
    return 0


def main() -> int:
    try:
        failed = check_layout() or check_behaviour()
    except subprocess.TimeoutExpired:
        return fail("a run did not finish within 60 s")
    if not failed:
        print("PASS")
    return failed


if __name__ == "__main__":
    sys.exit(main())
