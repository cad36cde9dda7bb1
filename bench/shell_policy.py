"""What the shell command policy adds per exec_command call, next to a bare `bash -c true`.

    .venv/bin/python bench/shell_policy.py [--quick]

Every exec_command call is parsed with tree-sitter-bash (`vtcode.tools.shell_parse.analyse`)
before the permission rules are matched. The baseline is the cheapest thing a command can cost:
spawning `bash -c true` and waiting for it, measured in the same process. For a typical command,
a long one (40 pipelines joined by `&&`) and a nested `bash -c "sh -c '...'"`, it prints the
median cost of the parse alone (cache cleared each call) and of a whole `PermissionPolicy.check`
with deny and allow rules and a redirect, as microseconds and as a fraction of the baseline.
The target is < 5 ms added per command. If bashlex is importable, its parse of the same lines is
printed too, for the parser choice. Prints only; never asserts.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from vtcode.tools.permissions import PermissionPolicy
from vtcode.tools.shell_parse import analyse

TYPICAL = "git status --short && git diff HEAD~1 -- src/ | head -50 > /tmp/diff.txt"
LONG = " && ".join(f"grep -rn 'pattern{i}' src/ | sort | uniq -c > out{i}.txt" for i in range(40))
NESTED = "bash -c \"sh -c 'env FOO=1 timeout 5 xargs -n1 rm -f < list'\" 2>&1 | tee log"
LINES = {"typical": TYPICAL, "long": LONG, "nested": NESTED}


def median_us(fn: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1e6


def bare_bash() -> None:
    subprocess.run(["bash", "-c", "true"], check=True)


def main() -> None:
    quick = "--quick" in sys.argv
    runs = 30 if quick else 200
    baseline = median_us(bare_bash, 20 if quick else 100)
    print(f"baseline  bash -c true  {baseline:9.0f} us  (median of {20 if quick else 100})")
    policy = PermissionPolicy(
        deny=["exec_command(rm *)", "write_file(secrets/**)"],
        allow=["exec_command(git *)", "exec_command(grep *)"],
        workspace=Path.cwd(),
    )
    parse = analyse.__wrapped__

    def check(line: str) -> None:
        analyse.cache_clear()
        policy.check("exec_command", {"command": line})

    for name, line in LINES.items():
        p = median_us(lambda line=line: parse(line), runs)  # type: ignore[misc]
        c = median_us(lambda line=line: check(line), runs)  # type: ignore[misc]
        print(
            f"{name:8}  {len(line):5} chars  parse {p:8.0f} us ({p / baseline:6.3f}x)"
            f"  check {c:8.0f} us ({c / baseline:6.3f}x)"
        )
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
