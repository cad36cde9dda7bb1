"""Tool costs, each next to a baseline measured in the same process (prints; never asserts).

    .venv/bin/python bench/bench_tools.py [--quick]

- exec_command start-to-result latency vs a bare `subprocess.run` of the same argv;
- output pumping throughput (spooled) vs `subprocess.run(capture_output=True)`;
- pure-Python grep vs GNU `grep -rn` over the same generated tree;
- permission checks per second and catalog hashing.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vtcode.tools.base import ToolContext
from vtcode.tools.permissions import PermissionPolicy
from vtcode.tools.registry import default_registry


def _timeit(fn, n: int) -> float:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def main() -> None:
    quick = "--quick" in sys.argv
    n = 5 if quick else 20
    ws = Path(tempfile.mkdtemp(prefix="vtcode-bench-"))
    ctx = ToolContext(
        workspace=ws, session_id="bench", spool_dir=ws / ".vtcode/context/tool_outputs"
    )
    reg = default_registry()
    try:
        for label, argv in (("argv true", ["true"]), ("bash -lc true", ["bash", "-lc", "true"])):
            command: object = argv if label.startswith("argv") else "true"
            base = _timeit(lambda a=argv: subprocess.run(a, check=False), n)  # type: ignore[misc]
            ours = _timeit(lambda c=command: reg.run("exec_command", {"command": c}, ctx), n)
            print(
                f"exec_command {label:14s}: {ours * 1e3:7.2f} ms  baseline {base * 1e3:7.2f} ms"
                f"  ratio {ours / base:5.2f}x"
            )

        count = 300_000 if quick else 2_000_000
        argv = ["seq", "1", str(count)]
        t = time.perf_counter()
        size = len(subprocess.run(argv, capture_output=True, check=True).stdout)
        base = time.perf_counter() - t
        t = time.perf_counter()
        res = reg.run("exec_command", {"command": argv, "yield_time_ms": 300_000}, ctx)
        ours = time.perf_counter() - t
        assert res.data is not None and res.data["total_output_bytes"] == size
        mb = size / 1e6
        print(
            f"pump+spool {mb:6.1f} MB      : {mb / ours:7.1f} MB/s  baseline {mb / base:7.1f} "
            f"MB/s  ratio {ours / base:5.2f}x"
        )

        tree = ws / "tree"
        files = 100 if quick else 400
        for i in range(files):
            d = tree / f"d{i % 20}"
            d.mkdir(parents=True, exist_ok=True)
            body = "".join(f"line {j} value={i * j} needle{j % 97}\n" for j in range(300))
            (d / f"f{i}.py").write_text(body)
        args = {"pattern": r"needle4[0-2]\b", "path": "tree", "max_matches": 2000}
        ours = _timeit(lambda: reg.run("grep", args, ctx), 3)
        gnu = shutil.which("grep")
        if gnu:
            cmd = [gnu, "-rnE", r"needle4[0-2]\b", str(tree)]
            base = _timeit(lambda: subprocess.run(cmd, capture_output=True, check=False), 3)
            print(
                f"grep {files} files x 300 lines: {ours * 1e3:7.1f} ms  GNU grep "
                f"{base * 1e3:7.1f} ms  ratio {ours / base:5.1f}x"
            )

        policy = PermissionPolicy(
            allow=[f"exec_command(tool{i} *)" for i in range(10)] + ["read_file"],
            ask=["write_file(src/**)"],
            deny=["exec_command(rm *)", "write_file(*.lock)"],
            allowed_tools=["exec_command", "read_file", "write_file"],
        )
        calls = [
            ("exec_command", {"command": "tool7 build && tool3 test | tee log"}),
            ("write_file", {"path": "src/deep/a.py"}),
            ("read_file", {"path": "README.md"}),
        ]
        k = 3000 if quick else 20000
        t = time.perf_counter()
        for i in range(k):
            policy.check(*calls[i % 3])
        dt = time.perf_counter() - t
        print(f"permission checks           : {k / dt:9.0f} /s ({dt / k * 1e6:.1f} us each)")
        t = time.perf_counter()
        for _ in range(1000):
            reg.catalog_hash()
        print(f"catalog_hash (7 tools)      : {(time.perf_counter() - t) * 1e3:.1f} us each")
    finally:
        reg.close()
        shutil.rmtree(ws, ignore_errors=True)


if __name__ == "__main__":
    main()
