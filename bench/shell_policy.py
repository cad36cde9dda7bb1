"""What the shell command policy adds per exec_command call, next to a bare `bash -c true`.

    .venv/bin/python bench/shell_policy.py [--quick] [--against REV]

Every exec_command call is parsed with tree-sitter-bash (`vtcode.tools.shell_parse.analyse`)
before the permission rules are matched. The baseline is the cheapest thing a command can cost:
spawning `bash -c true` and waiting for it, measured in the same process. For a typical command,
a long one (40 pipelines joined by `&&`) and a nested `bash -c "sh -c '...'"`, it prints the
median cost of the parse alone (cache cleared each call) and of a whole `PermissionPolicy.check`
with deny and allow rules and a redirect, as microseconds and as a fraction of the baseline.
The target is < 5 ms added per command. If bashlex is importable, its parse of the same lines is
printed too, for the parser choice. `--against REV` loads `shell_parse.py` and `permissions.py`
as they were at git revision REV into this same process and prints the old check's cost and the
new/old ratio per line (issue 23: what knowing git, the assignments and bash's tricks costs).
Prints only; never asserts.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vtcode.tools.permissions import PermissionPolicy
from vtcode.tools.shell_parse import analyse

TYPICAL = "git status --short && git diff HEAD~1 -- src/ | head -50 > /tmp/diff.txt"
LONG = " && ".join(f"grep -rn 'pattern{i}' src/ | sort | uniq -c > out{i}.txt" for i in range(40))
NESTED = "bash -c \"sh -c 'env FOO=1 timeout 5 xargs -n1 rm -f < list'\" 2>&1 | tee log"
GIT_ENV = "LANG=C GIT_AUTHOR_NAME=bot git -C . -c color.ui=always log --output=log.txt -n 3"
CONTINUED = "git log \\\n  --oneline \\\n  -n 3 | sed -n 's/a/b/p' | sort -o out.txt"
LINES = {
    "typical": TYPICAL,
    "long": LONG,
    "nested": NESTED,
    "git+env": GIT_ENV,
    "continued": CONTINUED,
}


def median_us(fn: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1e6


def bare_bash() -> None:
    subprocess.run(["bash", "-c", "true"], check=True)


def _module(name: str, source: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = f"<{name}>"
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def old_policy(rev: str, **rules: Any) -> tuple[Any, Callable[[str], Any]]:
    """PermissionPolicy and analyse as they were at `rev`, loaded beside today's."""

    def show(path: str) -> str:
        out = subprocess.run(["git", "show", f"{rev}:{path}"], capture_output=True, text=True)
        out.check_returncode()
        return out.stdout

    parse = _module("bench_old_shell_parse", show("vtcode/tools/shell_parse.py"))
    perms_source = show("vtcode/tools/permissions.py").replace(
        "vtcode.tools.shell_parse", "bench_old_shell_parse"
    )
    perms = _module("bench_old_permissions", perms_source)
    return perms.PermissionPolicy(**rules), parse.analyse


def main() -> None:
    quick = "--quick" in sys.argv
    runs = 30 if quick else 200
    baseline = median_us(bare_bash, 20 if quick else 100)
    print(f"baseline  bash -c true  {baseline:9.0f} us  (median of {20 if quick else 100})")
    rules: dict[str, Any] = {
        "deny": ["exec_command(rm *)", "write_file(secrets/**)"],
        "allow": ["exec_command(git *)", "exec_command(grep *)"],
        "workspace": Path.cwd(),
    }
    policy = PermissionPolicy(**rules)
    parse = analyse.__wrapped__
    against = sys.argv[sys.argv.index("--against") + 1] if "--against" in sys.argv else None
    old = old_policy(against, **rules) if against else None

    def check(line: str, policy: Any = policy, cached: Any = analyse) -> None:
        cached.cache_clear()
        policy.check("exec_command", {"command": line})

    for name, line in LINES.items():
        p = median_us(lambda line=line: parse(line), runs)  # type: ignore[misc]
        c = median_us(lambda line=line: check(line), runs)  # type: ignore[misc]
        row = (
            f"{name:9} {len(line):5} chars  parse {p:7.0f} us ({p / baseline:6.3f}x)"
            f"  check {c:7.0f} us ({c / baseline:6.3f}x)"
        )
        if old is not None:
            o = median_us(lambda line=line: check(line, *old), runs)  # type: ignore[misc]
            row += f"  {against} check {o:7.0f} us  new/old {c / o:5.2f}"
        print(row)
    try:
        import bashlex  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        print("bashlex not importable: comparison skipped")
        return
    for name, line in LINES.items():
        b = median_us(lambda line=line: bashlex.parse(line), runs)  # type: ignore[misc]
        print(f"{name:8}  bashlex parse {b:8.0f} us ({b / baseline:6.3f}x)")


if __name__ == "__main__":
    main()
