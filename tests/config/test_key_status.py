"""Every vtcode.toml key is either consumed by a named reader or declared no-effect (issue 25.1).

The model is walked whole (named keys and the fields of repeated tables): a key with no declared
state, a declared key that no longer exists, or a consumed key whose reader no longer mentions it
fails here. `config check` warns once per no-effect key that is set, `config show --origin` marks
it, and docs/config-reference.md is exactly what the model renders.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
from pathlib import Path
from typing import Any

from tests.conftest import RunVtcode
from vtcode.config import keys
from vtcode.config.key_status import NO_EFFECT_WARNING, STATUS, Consumed, NoEffect, model_keys
from vtcode.config.model import DEFAULT_ALLOWED_TOOLS, VtcodeConfig
from vtcode.config.reference_doc import render
from vtcode.config.render import document
from vtcode.config.tomlscan import parse_key
from vtcode.jsontypes import encode
from vtcode.tools.registry import default_registry

REPO = Path(__file__).resolve().parents[2]


def test_every_key_of_the_model_has_exactly_one_declared_state() -> None:
    walked = [name for name, _ in model_keys()]
    assert len(walked) == len(set(walked))
    undeclared = [k for k in walked if k not in STATUS]
    assert not undeclared, f"declare these in vtcode/config/key_status.py: {undeclared}"
    stale = sorted(set(STATUS) - set(walked))
    assert not stale, f"declared keys the model does not have: {stale}"
    assert all(isinstance(s, Consumed | NoEffect) for s in STATUS.values())


def test_every_consumed_key_is_still_read_by_its_reader() -> None:
    gone = []
    for name, status in STATUS.items():
        if not isinstance(status, Consumed):
            continue
        spec = importlib.util.find_spec(status.reader)
        assert spec is not None and spec.origin, f"{name}: reader {status.reader} does not exist"
        assert not status.reader.startswith("vtcode.config."), f"{name}: the loader is no reader"
        source = Path(spec.origin).read_text(encoding="utf-8")
        leaf = name.rsplit(".", 1)[-1]
        if not re.search(rf"\.{leaf}\b|[\"']{leaf}[\"']", source):
            gone.append(f"{name} (reader {status.reader})")
    assert not gone, f"consumed keys whose reader no longer reads them: {gone}"


def test_no_effect_keys_say_why() -> None:
    for name, status in STATUS.items():
        if isinstance(status, NoEffect):
            assert len(status.reason) > 20, name


def test_defaults_name_only_tools_that_exist() -> None:
    # web_fetch is offered where the network policy can allow a fetch: here, the network on
    on = VtcodeConfig()
    on = dataclasses.replace(on, sandbox=dataclasses.replace(on.sandbox, network=True))
    registry = default_registry(on)
    try:
        names = set(registry.names())
    finally:
        registry.close()
    missing = [t for t in DEFAULT_ALLOWED_TOOLS if t not in names]
    assert not missing, f"automation.full_auto.allowed_tools defaults name no tool: {missing}"
    assert "code_search" not in (REPO / "docs" / "telemetry-and-mcp.md").read_text()


def test_committed_reference_is_generated_from_the_model() -> None:
    committed = (REPO / "docs" / "config-reference.md").read_text(encoding="utf-8")
    assert committed == render(), "docs/config-reference.md is stale: scripts/gen_config_doc.py"
    assert "**undeclared**" not in committed


def _non_default(spec: keys.KeySpec, default: Any) -> Any:
    """A value of the key's type that differs from its default."""
    if spec.kind == "array" and spec.item is not None and spec.item.kind == "table":
        return [{"hooks": [{"command": "true"}]}]  # a hook matcher
    if spec.enum is not None:
        return next(v for v in spec.enum if v != default)
    if spec.json_type == "boolean":
        return not default
    if spec.json_type == "integer":
        return (default or 0) + 1
    if spec.json_type == "number":
        return (default or 0.0) + 1.5
    if spec.kind == "array":
        return ["x"]
    return "x"


def _every_no_effect_key_set() -> tuple[str, list[str]]:
    defaults = encode(VtcodeConfig())
    data: dict[str, Any] = {}
    names = []
    for name, spec in model_keys():
        if not isinstance(STATUS[name], NoEffect) or name[:1].isupper():
            continue
        path = parse_key(name)
        default: Any = defaults
        table = data
        for part in path[:-1]:
            default = default[part]
            table = table.setdefault(part, {})
        table[path[-1]] = _non_default(spec, default.get(path[-1]))
        names.append(name)
    return document(data), names


def test_check_warns_once_per_no_effect_key_set(run_vtcode: RunVtcode, tmp_path: Path) -> None:
    text, names = _every_no_effect_key_set()
    assert len(names) >= 5  # shrinks as keys get readers
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(text)  # the user layer sets them all too: still once
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "vtcode.toml").write_text(text)
    env = {"VTCODE_HOME": str(home), "VTCODE_TRUST_WORKSPACE": "1"}
    rc, out, err = run_vtcode(["-C", str(ws), "config", "check", "--json"], env=env)
    assert rc == 0, err
    warned = [w for w in json.loads(out)["warnings"] if NO_EFFECT_WARNING in w]
    assert sorted(w.split(": ")[1] for w in warned) == sorted(names)
    assert err.count(NO_EFFECT_WARNING) == len(names)
    rc, out, err = run_vtcode(["-C", str(ws), "config", "show", "--origin"], env=env)
    assert rc == 0, err
    marked = {line.split(" = ")[0] for line in out.splitlines() if "no effect" in line}
    assert marked == set(names)
    assert "agent.model = " not in marked


def test_check_file_warns_and_a_consumed_key_does_not(run_vtcode: RunVtcode) -> None:
    text = "[telemetry]\ntrajectory_enabled = false\natif_enabled = true\n"
    rc, out, err = run_vtcode(["config", "check", "-"], input=text)
    assert rc == 0, err
    assert out == "<stdin>: valid\n"
    assert err == f"warning: <stdin>:2:1: telemetry.trajectory_enabled: {NO_EFFECT_WARNING}\n"
