"""Every built-in tool's parameter schema is a valid JSON Schema (draft 2020-12).

`ToolRegistry.register(..., built_in=True)` skips the check at start because this test makes
it once for all of them; a tool class added under vtcode/tools and not covered here fails the
second test, so the skip can never hide a bad schema.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil

import pytest
from jsonschema import Draft202012Validator

import vtcode.tools
from vtcode.config.model import VtcodeConfig
from vtcode.tools.registry import ToolRegistry, default_registry
from vtcode.tools.task_tracker import TaskTracker, TaskTrackerTool


def _every_built_in() -> ToolRegistry:
    default = VtcodeConfig()
    # web_fetch is offered only where a fetch can be allowed
    network_on = dataclasses.replace(default.sandbox, network=True)
    config = dataclasses.replace(default, sandbox=network_on)
    registry = default_registry(config)
    registry.register(TaskTrackerTool(TaskTracker()), built_in=True)
    return registry


def _tool_classes_under_vtcode_tools() -> set[str]:
    """Classes in vtcode/tools with a `spec` and a `run` (the Tool protocol's shape)."""
    names = set()
    for module in pkgutil.iter_modules(vtcode.tools.__path__, "vtcode.tools."):
        mod = importlib.import_module(module.name)
        for obj in vars(mod).values():
            ours = inspect.isclass(obj) and obj.__module__ == mod.__name__
            if ours and hasattr(obj, "run") and "spec" in dir(obj):
                names.add(obj.__name__)
    return names


@pytest.mark.parametrize("name", sorted(_every_built_in().names()))
def test_the_built_in_schema_is_valid(name: str) -> None:
    registry = _every_built_in()
    Draft202012Validator.check_schema(registry.get(name).spec.parameters)


def test_every_tool_class_under_vtcode_tools_is_covered() -> None:
    covered = {type(tool).__name__ for tool in _every_built_in()}
    classes = _tool_classes_under_vtcode_tools() - {"Tool"}  # the Protocol itself
    assert classes <= covered, f"built-in tools this test does not check: {classes - covered}"
    assert len(covered) >= 9
