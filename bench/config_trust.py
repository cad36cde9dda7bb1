"""What the trust filter adds to loading a config (prints ratios; never asserts).

    .venv/bin/python bench/config_trust.py [--quick]

The workspace `vtcode.toml` is the full fixture (every key set) over a user config with deny
rules and hooks. Measured in the same process, warm:

- `load_config` in a trusted workspace (VTCODE_TRUST_WORKSPACE=1): the baseline;
- `load_config` in an untrusted workspace with no trust.json (the filter runs on every key);
- the same with a trust.json of 1,000 recorded workspaces (the store is read, this one absent);
- `filter_workspace` alone on the parsed fixture.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable
from pathlib import Path

import orjson

from vtcode.config.load import load_config
from vtcode.config.model import VtcodeConfig
from vtcode.config.trust_policy import filter_workspace
from vtcode.jsontypes import encode

REPO = Path(__file__).resolve().parents[1]
FULL = REPO / "fixtures" / "config" / "valid" / "full.toml"
USER = """
[permissions]
deny = ["exec_command(rm *)", "exec_command(curl *)"]
[[hooks.lifecycle.pre_tool_use]]
hooks = [{ argv = ["guard"] }]
"""


def per_call(fn: Callable[[], object], n: int) -> float:
    fn()
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t) / n)
    return best


def main() -> int:
    n = 20 if "--quick" in sys.argv else 200
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws, home, crowded = root / "ws", root / "home", root / "crowded"
        for d in (ws, home, crowded):
            d.mkdir()
        (ws / "vtcode.toml").write_text(FULL.read_text())
        (home / "config.toml").write_text(USER)
        (crowded / "config.toml").write_text(USER)
        entries = {f"/srv/repo-{i}": {"hooks_sha256": None} for i in range(1000)}
        (crowded / "trust.json").write_bytes(
            orjson.dumps({"schema_version": 1, "workspaces": entries})
        )
        base = {k: v for k, v in os.environ.items() if k != "VTCODE_TRUST_WORKSPACE"}
        trusted = {**base, "VTCODE_HOME": str(home), "VTCODE_TRUST_WORKSPACE": "1"}
        untrusted = {**base, "VTCODE_HOME": str(home)}
        crowd = {**base, "VTCODE_HOME": str(crowded)}
        assert not load_config(workspace=ws, env=trusted).decisions
        assert load_config(workspace=ws, env=untrusted).decisions
        data = tomllib.loads(FULL.read_text())
        below = encode(VtcodeConfig())
        assert isinstance(below, dict)
        rows = [
            ("load_config, trusted (baseline)", lambda: load_config(workspace=ws, env=trusted)),
            ("load_config, untrusted", lambda: load_config(workspace=ws, env=untrusted)),
            (
                "load_config, untrusted, 1k trust entries",
                lambda: load_config(workspace=ws, env=crowd),
            ),
            ("filter_workspace alone", lambda: filter_workspace(data, below)),
        ]
        baseline = None
        for name, fn in rows:
            t = per_call(fn, n)
            baseline = baseline or t
            print(f"{name:<44} {t * 1e6:9.1f} us  x{t / baseline:5.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
