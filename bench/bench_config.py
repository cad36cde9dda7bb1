"""Config costs, each next to a baseline measured in the same process (prints; never asserts).

    .venv/bin/python bench/bench_config.py [--quick]

- `load_config` of the full fixture (tomllib + position scan + schema + decode) vs a bare
  `tomllib.loads` of the same text, warm (caches filled, as every later call in a process is);
- the position scanner alone on the same text;
- an error path: the same file with one typo (schema errors, did-you-mean);
- `config set` round trip (lock, tomlkit edit, validate, atomic write with fsync);
- process start-up: `vtcode config get KEY` vs `python -c pass`.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable
from pathlib import Path

from vtcode.config.edit import set_value
from vtcode.config.load import ConfigInvalid, load_config
from vtcode.config.tomlscan import key_positions

REPO = Path(__file__).resolve().parents[1]
FULL = REPO / "fixtures" / "config" / "valid" / "full.toml"


def best(fn: Callable[[], object], repeat: int, inner: int = 1) -> float:
    """Best per-call seconds over `repeat` rounds of `inner` calls."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t) / inner)
    return min(times)


def main(quick: bool) -> None:
    repeat, inner = (3, 20) if quick else (7, 100)
    text = FULL.read_text()
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        os.environ["VTCODE_HOME"] = str(ws / "home")
        (ws / "vtcode.toml").write_text(text)
        load_config(workspace=ws)  # warm the caches (schema, key tree, validators)

        base = best(lambda: tomllib.loads(text), repeat, inner)
        full = best(lambda: load_config(workspace=ws), repeat, inner)
        scan = best(lambda: key_positions(text), repeat, inner)
        print(f"config file: {FULL.name}, {len(text)} bytes, {text.count(chr(10))} lines")
        print(f"  tomllib.loads (baseline)   {base * 1e6:9.1f} us")
        print(f"  key_positions              {scan * 1e6:9.1f} us   ({scan / base:.1f}x baseline)")
        print(f"  load_config (all layers)   {full * 1e6:9.1f} us   ({full / base:.1f}x baseline)")

        (ws / "vtcode.toml").write_text(text.replace("max_turns", "max_turnz"))

        def failing() -> None:
            with contextlib.suppress(ConfigInvalid):
                load_config(workspace=ws)

        failing()
        err = best(failing, repeat, max(1, inner // 10))
        print(f"  load_config, one typo      {err * 1e6:9.1f} us   ({err / base:.1f}x baseline)")

        target = ws / "vtcode.toml"
        target.write_text(text)
        n = [0]

        def one_set() -> None:
            n[0] += 1
            set_value(target, "agent.harness.max_tool_retries", str(n[0] % 9))

        setv = best(one_set, repeat, max(1, inner // 10))
        print(f"  config set (fsync'd)       {setv * 1e3:9.2f} ms")

        def run(args: list[str]) -> None:
            subprocess.run(args, check=True, capture_output=True, cwd=ws)

        py = best(lambda: run([sys.executable, "-c", "pass"]), repeat)
        cli = best(
            lambda: run([sys.executable, "-m", "vtcode", "config", "get", "agent.provider"]),
            repeat,
        )
        print(f"  python -c pass (baseline)  {py * 1e3:9.1f} ms")
        print(f"  vtcode config get KEY      {cli * 1e3:9.1f} ms   ({cli / py:.1f}x baseline)")


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
