"""rename-class: `Reading` is `Measurement` everywhere, no alias left, the output unchanged.

Identifiers are read from the syntax tree of every .py file (names, attributes, imports,
definitions, arguments), so a comment or docstring that still says "Reading" does not fail the
check, while an alias (`Reading = Measurement`) or a missed import does. The report runs on the
given log and on a hidden one; parse_reading and parse_file keep their names.
"""

import ast
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

# The programs this check runs write no __pycache__: the workspace stays as the agent left it.
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"

OLD, NEW = "Reading", "Measurement"
VISIBLE = """\
cellar: 2 samples, max 11.2 C (52.2 F), 0 at or below freezing
greenhouse: 2 samples, max 24.5 C (76.1 F), 0 at or below freezing
porch: 3 samples, max 3.5 C (38.3 F), 2 at or below freezing"""
HIDDEN_LOG = """\
# a log the agent never sees
b-roof = -0.5
a-shed = 5
b-roof = 1.25
a-shed = -3   # night

c-lab = 21.0
b-roof = 0.0
"""
HIDDEN = """\
a-shed: 2 samples, max 5.0 C (41.0 F), 1 at or below freezing
b-roof: 3 samples, max 1.2 C (34.2 F), 2 at or below freezing
c-lab: 1 samples, max 21.0 C (69.8 F), 0 at or below freezing"""
PROBE = """
import dataclasses, json
import report
import sensors.models as m
import sensors.parse as p
s = p.parse_reading("attic = 4.5  # probe")
print(json.dumps({
    "old": [mod.__name__ for mod in (m, p, report) if hasattr(mod, "Reading")],
    "new": m.Measurement.__name__,
    "type": type(s).__name__,
    "same": type(s) is m.Measurement,
    "fields": [f.name for f in dataclasses.fields(s)],
    "fahrenheit": round(s.fahrenheit, 6),
    "parse_file": callable(p.parse_file),
}))
"""
WANT_PROBE = {
    "old": [],
    "new": NEW,
    "type": NEW,
    "same": True,
    "fields": ["sensor", "celsius"],
    "fahrenheit": 40.1,
    "parse_file": True,
}


def identifiers(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.update(filter(None, [node.name.rsplit(".", 1)[-1], node.asname]))
        elif isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.arg | ast.keyword) and node.arg:
            names.add(node.arg)
    return names


def check_sources() -> str:
    for path in sorted(Path().rglob("*.py")):
        if path == Path("check.py") or any(p.startswith(".") for p in path.parts):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        except (SyntaxError, UnicodeDecodeError, ValueError) as exc:
            return f"{path} does not parse: {exc}"
        if OLD in identifiers(tree):
            return f"{path} still uses the name {OLD}"
    models = ast.parse(Path("sensors/models.py").read_text(encoding="utf-8"))
    if not any(isinstance(n, ast.ClassDef) and n.name == NEW for n in models.body):
        return f"sensors/models.py defines no class {NEW}"
    return ""


def report(log: str) -> str:
    run = subprocess.run(
        [sys.executable, "report.py", log], capture_output=True, text=True, timeout=30
    )
    if run.returncode != 0:
        return f"<exit {run.returncode}> {run.stderr[-800:]}"
    return "\n".join(line.rstrip() for line in run.stdout.strip().splitlines())


def main() -> int:
    for name in ("sensors/models.py", "sensors/parse.py", "report.py"):
        if not Path(name).is_file():
            print(f"FAIL: {name} is missing")
            return 1
    failed = check_sources()
    if failed:
        print(f"FAIL: {failed}")
        return 1
    try:
        probe = subprocess.run(
            [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=30
        )
        try:
            got = json.loads(probe.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            print(f"FAIL: importing the modules failed:\n{probe.stderr[-1500:]}")
            return 1
        if got != WANT_PROBE:
            print(f"FAIL: the modules look like {got}, expected {WANT_PROBE}")
            return 1
        out = report("readings.txt")
        if out != VISIBLE:
            print(f"FAIL: python3 report.py readings.txt printed\n{out}\nexpected\n{VISIBLE}")
            return 1
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "hidden.txt"
            log.write_text(HIDDEN_LOG, encoding="utf-8")
            out = report(str(log))
        if out != HIDDEN:
            print(f"FAIL: on another log, report.py printed\n{out}\nexpected\n{HIDDEN}")
            return 1
    except subprocess.TimeoutExpired:
        print("FAIL: a run did not finish within 30 s")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
